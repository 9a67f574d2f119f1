"""``reference/put``, ``reference/get`` and ``reference/list``: the store's references, by name or hash."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hrbench._util.messages import did_you_mean
from hrbench._util.timefmt import iso_seconds as _iso
from hrbench.errors import NotFound
from hrbench_client import protocol as p
from hrbench_server.app import App
from hrbench_server.methods._handlers import async_handler, to_thread

__all__ = ["register_references"]


def register_references(feature: Callable[[str], Any], app: App) -> None:
    """Register the ``reference/*`` methods."""

    async def reference_put(args: p.ReferencePutParams) -> p.ReferenceInfo:
        def put() -> p.ReferenceInfo:
            from hrbench_server.bench_spec import wire_reference  # the specs: on the first put, here

            ref = wire_reference(args.reference, app.store)  # keyed by id
            new = app.store.reference_get(ref.hash) is None
            before = app.store.reference_history(args.name) if args.name else []
            h = app.store.reference_put(ref, args.name)
            put = [r for r in app.store.reference_list() if r["hash"] == h and r["name"] == args.name]
            created = _iso(put[-1]["created"]) if put else None
            was = before[-1]["hash"] if before else None  # a rebound name is said
            return p.ReferenceInfo(
                hash=h,
                name=args.name,
                n_items=len(ref),
                created=created,
                new=new,
                replaced=was if was != h else None,
            )

        return await to_thread(put)

    async def reference_get(args: p.ReferenceGetParams) -> p.ReferenceSpec:
        ref = await to_thread(app.store.reference_get, args.ref)
        if ref is None:
            names = [r["name"] for r in await to_thread(app.store.reference_list) if r["name"]]
            raise NotFound(
                f"ref: no stored reference has this name or hash (8+ characters of it); "
                f"{did_you_mean(args.ref, names, n=3)}`hrb ref list` lists them (got {args.ref!r})",
                ref=args.ref,
            )
        d = ref.to_dict()
        return p.ReferenceSpec(items=d["items"], labels=d["labels"], cluster=d["cluster"], split=d["split"])

    async def reference_list(args: p.ReferenceListParams) -> p.ReferenceListResult:
        refs = await to_thread(app.store.reference_list)
        out = [
            p.ReferenceInfo(hash=r["hash"], name=r["name"], n_items=r["n_items"], created=_iso(r["created"]))
            for r in reversed(refs)
        ]
        return p.ReferenceListResult(references=out)

    feature("reference/put")(async_handler(p.ReferencePutParams, reference_put))
    feature("reference/get")(async_handler(p.ReferenceGetParams, reference_get))
    feature("reference/list")(async_handler(p.ReferenceListParams, reference_list))
