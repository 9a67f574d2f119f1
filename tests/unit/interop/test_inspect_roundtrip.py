"""hrbench -> Inspect -> hrbench gives the same rows, on every field the Inspect log maps (property test).

A random benchmark (ids that look like numbers or not, unlabelled items, clusters, dev and test
splits, runs that end in an error, replies with tokens) goes out as Inspect logs, ``.json`` or
``.eval``, and comes back as an imported arm on the imported reference. What a row holds that
the log cannot give back is left out of the comparison, on purpose: ``usd`` and
``usd_provenance`` (nothing is paid on the way back: ``usd`` 0, ``"log"``; the log's cost is the
list price instead, checked equal), ``seconds`` and ``ledger_id``. ``make test-interop`` reads the same exports
with Inspect's own reader.
"""

from __future__ import annotations

import tempfile
import warnings
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import hrbench as hb
from hrbench.interop import imported_arm, imported_reference
from hrbench.records import Result, Usage, list_usd
from tests._examples import examples

KEPT = ("cluster", "item", "arm", "run", "split", "correct", "outcome", "failure_kind", "tokens_in",
        "tokens_out", "tokens_reasoning", "tokens_cached", "draw_index", "reportable")  # fmt: skip
"""The row fields an Inspect log maps, and so must come back equal."""

ids = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.text(alphabet="abcxyz019-. ", min_size=1, max_size=6).filter(lambda s: s.strip() == s),
)


@st.composite
def benchmarks(draw: Any) -> dict[str, Any]:
    keys = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    labels = {
        k: draw(
            st.one_of(
                st.none(),
                st.sampled_from(["Paris", "Lima", "4", 4, ["4", "four"], {"answers": ["4", "four"]}]),
            )
        )
        for k in keys
    }
    if all(v is None for v in labels.values()):
        labels[keys[0]] = "Paris"
    return {
        "items": {
            k: draw(st.sampled_from(["France", "Peru", "2+2", {"q": "2+2", "n": 2}, ["2", 2], 7]))
            for k in keys
        },
        "labels": labels,
        "clusters": {k: draw(st.sampled_from(["eu", "am"])) for k in keys},
        "splits": {k: draw(st.sampled_from(["test", "dev"])) for k in keys},
        "runs": draw(st.integers(min_value=1, max_value=3)),
        "replies": draw(
            st.lists(st.sampled_from(["Paris", "Lima", "4", "", "boom"]), min_size=12, max_size=12)
        ),
        "tokens": draw(st.lists(st.integers(min_value=0, max_value=50), min_size=12, max_size=12)),
        "log_format": draw(st.sampled_from(["json", "eval"])),
    }


def _quiet(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs, error runs, unlabelled items: the rows count them
        return fn()


def _run(spec: dict[str, Any]) -> Any:
    keys = list(spec["items"])

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> Result:
        n = (keys.index(messages[-1]["content"].split("|")[0]) * 3 + params["draw_index"]) % 12
        text, tokens = spec["replies"][n], spec["tokens"][n]
        if text == "boom":
            raise RuntimeError("the model fell over")
        used = Usage(
            tokens_in=tokens + 3, tokens_out=tokens, tokens_cached=tokens // 2, tokens_reasoning=tokens // 3
        )
        return Result(text=text, usage=used, usd=None if tokens == 7 else tokens / 1000)  # 7: no price

    ref = hb.Reference(spec["items"], labels=spec["labels"], cluster=spec["clusters"], split=spec["splits"])
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(f"{ctx.item_id}|{item}").text)
    return _quiet(
        lambda: hb.benchmark(arm, ref, runs=spec["runs"], client=hb.MockClient(reply), split=["test", "dev"])
    )


@settings(max_examples=examples(40), deadline=None)
@given(benchmarks())
def test_hrbench_to_inspect_to_hrbench_gives_the_same_rows(spec: dict[str, Any]) -> None:
    first = _run(spec)
    with tempfile.TemporaryDirectory() as folder:
        [log] = first.to_inspect(folder, name="roundtrip", log_format=spec["log_format"])
        ref = imported_reference(log, "inspect")
        again = _quiet(
            lambda: hb.benchmark(
                imported_arm("ask", log, "inspect"), ref, runs=spec["runs"], split=["test", "dev"]
            )
        )
    assert ref.labels == spec["labels"]  # unlabelled items stay unlabelled
    assert dict(ref.items) == spec["items"]  # items and labels that are not text come back as values
    given = hb.Reference(spec["items"], labels=spec["labels"], cluster=spec["clusters"], split=spec["splits"])
    assert ref.hash == given.hash  # the same reference: a compare of the two benchmarks is allowed
    want = sorted(tuple(getattr(r, k) for k in KEPT) for r in first.rows)
    assert sorted(tuple(getattr(r, k) for k in KEPT) for r in again.rows) == want
    assert {r.usd_provenance for r in again.rows} == {"log"} and {r.usd for r in again.rows} == {0.0}
    listed = {(r.item, r.run): list_usd(first.traces[r.ledger_id]) for r in first.rows}
    assert {
        (r.item, r.run): list_usd(again.traces[r.ledger_id]) for r in again.rows
    } == listed  # the log's cost
