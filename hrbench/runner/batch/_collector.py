"""The batch collector: runs' requests gathered into provider batches, polled, and answered.

Arms stay ordinary code. A request that must go to the provider (not a cache or recording hit:
the runtime looked first) reaches :meth:`Collector.request` through the batch client
(:class:`~hrbench.runner.batch._client.BatchClient`): its reservation is made and committed to
the governor's ledger as for any request, then its line is queued and its run awaits the
reply. The collector sends the queued lines as one batch when every run of the wave waits on a
line (quiescence), when ``max_lines`` are queued, or when no line came for ``gather_s`` (some
runs wait on something else: room under a cap, another run's identical request). Each batch is
kept in the batch ledger with its lines' ``custom_id`` **before** it is uploaded
(:mod:`hrbench.runner.batch._ledger`); an upload whose reply was lost is looked up at the
provider by its tag, not uploaded again. Each batch is polled every ``poll_s``; once it ends,
its lines' results are kept in the ledger, then each waiting run is given its reply, priced at
the batch rate (the provider's bill). A multi-call arm's next request is a line of a later batch.

Lines that did not get a reply: refused by the provider (an ``error`` row, nothing billed);
expired or cancelled (resubmitted, sent through the synchronous API, or failed, as
:attr:`~hrbench.Batch.expired` says). A benchmark resumed after a crash (:class:`~hrbench.runner.batch._ledger.Resumed`)
waits on the batches its earlier run left live, is given the results that finished meanwhile,
and never uploads a ``custom_id`` that is in a live batch or has a reply. A reply the batch
ledger kept but the governor's ledger did not yet keep as paid (the crash came between the two)
is taken out of the response cache, so that its run, made again, is served it by the collector
and its row carries its bill.

Once a stop rule decided (the drain began with a decision), nothing more is uploaded and the
live batches are cancelled at the provider; what they still bill is settled line by line.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import msgspec

from hrbench.arm import current_run
from hrbench.errors import BudgetRefused
from hrbench.models import (
    BatchApi,
    BatchError,
    BatchLost,
    BatchStatus,
    LineResult,
    estimated_usage,
    give_back,
)
from hrbench.records import Request, Result
from hrbench.runner._cache import cache_key
from hrbench.runner.batch._ledger import BatchLedger, Resumed
from hrbench.runner.batch._lines import BatchInfo, Line, draining_of, gate_of, settle_gone
from hrbench.runner.batch._settings import RESUBMITS, Batch

__all__ = ["Collector"]

logger = logging.getLogger("hrbench.batch")

_MISSING = {"expired": "expired", "cancelled": "cancelled", "failed": "failed"}
"""A line with no result in an ended batch, by the batch's end state (``completed``: failed)."""


class Collector:
    """Gathers a benchmark's live requests into batches and answers them (see the module docstring).

    Args:
        api: the provider's batch API.
        settings: the benchmark's :class:`~hrbench.Batch`.
        ledger: where its batches are kept.
        pricing: the batch-rate prices (a line's USD); ``list_pricing`` the standard ones (a
            line sent through the synchronous API).
        inner: the model client (its bodies, its synchronous API).
        drain: the benchmark's clean-cancel drain, or ``None``.
        decided: whether the benchmark's stop rule has decided (its live batches are then cancelled).
    """

    def __init__(
        self,
        api: BatchApi,
        settings: Batch,
        ledger: BatchLedger,
        *,
        pricing: Any,
        list_pricing: Any,
        inner: Any,
        drain: Any = None,
        decided: Callable[[], bool] = lambda: False,
    ) -> None:
        self.api, self.settings, self.ledger = api, settings, ledger
        self.pricing, self.list_pricing, self.inner = pricing, list_pricing, inner
        self.drain, self.decided = drain, decided
        self.retry_errors = False
        """Whether the benchmark runs its failed runs again (a line the provider refused is sent again)."""
        self.cache: Any = None
        """The runtime's response cache (:class:`~hrbench.runner.Cache`), or ``None``."""
        self.max_lines = min(settings.max_lines or api.max_lines, api.max_lines)
        self.pending: dict[str, list[Line]] = {}
        self.waiting: dict[str, list[Line]] = {}
        self.known: dict[str, tuple[str, Result]] = {}
        self.paid: set[str] = set()
        self.attached: dict[str, str] = {}
        self.uploaded: set[str] = set()
        self.running: set[Any] = set()
        self.blocked: Counter[Any] = Counter()
        self.batches: dict[str, BatchInfo] = {}
        self.submitted = 0
        """Batches uploaded by this run (its round trips)."""
        self.starting: Callable[[], bool] = lambda: False
        """Whether runs of the wave are still to start (a stop rule's gate has cells to hand out)."""
        self.on_change: Callable[[], None] | None = None
        """Called whenever a batch's state changes (progress shows them)."""
        self._kick = anyio.Event()
        self._last_line = time.monotonic()
        self._tg: Any = None
        self._tasks = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._taken: set[str] = set()
        self._unblocked = 0  # runs of the wave not waiting on a line
        self._cancelled: set[str] = set()  # tags of batches cancelled on request: their lines fail

    # -- the run's side ------------------------------------------------------------------------------
    def started(self, run: Any) -> None:
        """A run of the wave started (it counts for quiescence until :meth:`ended`)."""
        if run not in self.running:
            self.running.add(run)
            if not self.blocked.get(run):
                self._unblocked += 1

    def ended(self, run: Any) -> None:
        """A run of the wave ended."""
        if run in self.running:
            self.running.discard(run)
            if not self.blocked.get(run):
                self._unblocked -= 1
            self._kick.set()

    def _block(self, run: Any, by: int) -> None:
        """A run waits on one more line (``by=1``) or one fewer (``-1``); the runs not waiting are counted."""
        was = self.blocked.get(run, 0)
        now = was + by
        if now:
            self.blocked[run] = now
        else:
            self.blocked.pop(run, None)
        if run in self.running and (was == 0) != (now == 0):
            self._unblocked += -1 if now else 1

    async def request(self, request: Request, before: Any) -> Result:
        """The reply to one request of a run, through a batch (see the module docstring).

        Raises:
            BudgetRefused: the governor refused the request (nothing is queued).
        """
        info = current_run.get()
        cid = cache_key(request, "" if info is None else info.arm)
        known = self.known.get(cid)
        if known is not None and cid not in self.uploaded and self._settled_before(known[0]):
            give_back(before)  # answered in a batch already: nothing is sent, nothing reserved
            if known[0] != "done":  # refused, or expired under expired="fail": the failure as it came
                return known[1]
            return msgspec.structs.replace(known[1], source="cache") if cid in self.paid else known[1]
        loop = asyncio.get_running_loop()
        if cid in self.attached or cid in self.pending or cid in self.waiting:
            give_back(before)  # in a batch already (this run's, or an earlier one's): wait for it
            shared = cid in self.pending or cid in self.waiting
            line = Line(cid, request, None, None, loop.create_future(), info, first=not shared)
            (self.pending if cid in self.pending else self.waiting).setdefault(cid, []).append(line)
            return await self._wait(line)
        pending = before() if before is not None else None
        if pending is not None:
            await pending  # the reservation is in the governor's ledger before the line is queued
        gate = gate_of(before)
        model = request.model or self.inner.model
        body = self.inner.build_body(request, model)
        line = Line(
            cid, request, body, before, loop.create_future(), info, usd=float(getattr(gate, "usd", 0.0))
        )
        if known is not None and known[0] in ("expired", "cancelled") and self.settings.expired == "sync":
            self.waiting[cid] = [line]  # expired in an earlier run's batch: sent as its policy says
            self._spawn(self._sync, cid, [line])
            return await self._wait(line)
        self.pending[cid] = [line]
        self._last_line = time.monotonic()
        return await self._wait(line)

    def _settled_before(self, state: str) -> bool:
        """Whether a line an earlier batch ended in ``state`` is answered from it, not uploaded again.

        A reply (``done``) always is; a line the provider refused (``failed``) unless the
        benchmark runs its failed runs again (``retry_errors``); an expired or cancelled line
        when :attr:`~hrbench.Batch.expired` is ``"fail"``. A line of a batch that never reached
        the provider (``lost``), or expired under ``"resubmit"`` or ``"sync"``, goes out again.
        """
        if state == "done":
            return True
        if state == "failed":
            return not self.retry_errors
        return state in ("expired", "cancelled") and self.settings.expired == "fail"

    async def _wait(self, line: Line) -> Result:
        self._block(line.run, 1)
        self._kick.set()
        try:
            return await line.future
        except BaseException:
            queued = self.pending.get(line.custom_id)
            if queued is not None and line in queued:  # never uploaded: its call is given back
                queued.remove(line)
                if not queued:
                    del self.pending[line.custom_id]
                give_back(line.before)
            raise
        finally:
            self._block(line.run, -1)

    # -- the collector's side -------------------------------------------------------------------------
    async def start(self, tg: Any) -> None:
        """Load what earlier runs left, follow their live batches, and start serving (in ``tg``)."""
        self._tg = tg
        resumed: Resumed = await self.ledger.load()
        self.known, self.paid = resumed.results, resumed.paid
        unpaid = [c for c, (state, _) in resumed.results.items() if state == "done" and c not in resumed.paid]
        if unpaid and self.cache is not None:  # its run is served by the collector: its row pays its bill
            await anyio.to_thread.run_sync(self.cache.store.cache_forget, unpaid)
        self._taken = set(resumed.batch_ids)
        for b in resumed.live:
            await self._reattach(b, [c for c, t in resumed.uploaded.items() if t == b["tag"]])
        tg.start_soon(self._serve)

    async def _reattach(self, kept: dict[str, Any], cids: list[str]) -> None:
        """Follow a batch an earlier run left live; one whose upload reply was lost is looked up first."""
        tag, batch_id = kept["tag"], kept["batch_id"]
        status: BatchStatus | None = None
        if batch_id is None:
            status = await self.api.find(tag, kept["lines"], float(kept["created"] or 0.0), self._taken)
            if status is None:  # it never reached the provider: its lines may be uploaded
                await self.ledger.results(tag, [(c, "lost", Result(ok=False)) for c in cids], 0.0)
                return
            self._taken.add(status.id)
            await self.ledger.update(tag, batch_id=status.id, state=status.state)
            batch_id = status.id
        info = BatchInfo(
            tag,
            kept["state"],
            kept["lines"],
            float(kept["created"] or time.time()),
            kept["usd_reserved"],
            self.api.provider,
            batch_id,
        )
        info.cids = cids
        self.batches[tag] = info
        for cid in cids:
            self.attached[cid] = tag
        self._spawn(self._follow, info, status)

    def _spawn(self, fn: Any, *args: Any) -> None:
        self._tasks += 1
        self._idle = anyio.Event()

        async def run() -> None:
            try:
                await fn(*args)
            except Exception as exc:  # never the benchmark's end: the lines fail with the cause
                logger.error("batch collector: %s: %s", type(exc).__name__, exc)
                self._fail_all(args[0], f"{self.api.provider} batch: {type(exc).__name__}: {exc}")
            finally:
                self._tasks -= 1
                if self._tasks == 0:
                    self._idle.set()

        self._tg.start_soon(run)

    async def finish(self) -> None:
        """Wait for the batches still followed (cancelled ones ending) before the benchmark ends."""
        if self.pending and not self._stopping():
            await self._submit()
        with anyio.move_on_after(self.settings.max_wait_s + 60.0):
            await self._idle.wait()

    def _stopping(self) -> bool:
        return self.drain is not None and self.drain.started

    def _quiescent(self) -> bool:
        """Whether every run of the wave waits on a line, and no run of it is still to start."""
        return bool(self.running) and self._unblocked == 0 and not self.starting()

    async def _serve(self) -> None:
        while True:
            kick = self._kick
            if self.pending:
                left = self.settings.gather_s - (time.monotonic() - self._last_line)
                with anyio.move_on_after(max(0.0, left)):
                    await kick.wait()
            else:
                await kick.wait()
            if kick.is_set():
                self._kick = anyio.Event()
            for _ in range(3):  # the runs woken with this one may queue their lines first
                await anyio.lowlevel.checkpoint()
            if not self.pending:
                continue
            gathered = time.monotonic() - self._last_line >= self.settings.gather_s
            if self._quiescent() or gathered or len(self.pending) >= self.max_lines:
                await self._submit()

    async def _submit(self) -> None:
        """Send every queued line, in batches of at most ``max_lines`` (none once the benchmark stops)."""
        queued, self.pending = self.pending, {}
        if self._stopping():  # nothing is uploaded after a decision or a cancel: the lines were not sent
            for lines in queued.values():
                for line in lines:
                    give_back(line.before)
                    held = draining_of(line.before)
                    if held is not None:
                        held.drain.finished(held.run)
            return
        items = list(queued.items())
        made: list[tuple[BatchInfo, list[Line]]] = []
        for start in range(0, len(items), self.max_lines):
            chunk = items[start : start + self.max_lines]
            tag = uuid.uuid4().hex[:16]
            info = BatchInfo(
                tag,
                "preparing",
                len(chunk),
                time.time(),
                sum(ls[0].usd for _, ls in chunk),
                self.api.provider,
            )
            info.cids = [cid for cid, _ in chunk]
            for cid, lines in chunk:
                self.waiting[cid] = lines
                self.uploaded.add(cid)
                for line in lines:
                    line.tries += 1
            self.batches[tag] = info
            self.submitted += 1
            made.append((info, [ls[0] for _, ls in chunk]))
        self._spawn(self._upload_all, made)

    async def _upload_all(self, made: list[tuple[BatchInfo, list[Line]]]) -> None:
        """Upload the batches of one submission one after another, in order; each is then followed."""
        for info, lines in made:
            try:
                await self._upload(info, lines)
            except Exception as exc:  # this batch's lines fail with the cause; the next ones go on
                logger.error("batch collector: %s: %s", type(exc).__name__, exc)
                self._fail_all(info, f"{self.api.provider} batch: {type(exc).__name__}: {exc}")

    async def _upload(self, info: BatchInfo, lines: list[Line]) -> None:
        """Keep the batch, then upload it (a lost reply is looked up, not uploaded again); then follow it."""
        await self.ledger.open(info.tag, info.cids, info.usd_reserved)
        self._changed()
        encode = self.api.line
        if len(lines) > 2000:  # a big batch is encoded off the event loop
            payload = await anyio.to_thread.run_sync(
                lambda: [encode(ln.custom_id, ln.body or {}) for ln in lines]
            )
        else:
            payload = [encode(ln.custom_id, ln.body or {}) for ln in lines]
        since = time.time()
        status: BatchStatus | None = None
        for _ in range(2):
            try:
                status = await self.api.submit(info.tag, payload)
                break
            except BatchLost:
                status = await self.api.find(info.tag, len(payload), since, self._taken)
                if status is not None:
                    break
            except BatchError as exc:
                await self._ended(info, None, str(exc))
                return
        if status is None:
            await self._ended(info, None, f"{self.api.provider} batch: the upload's reply was lost twice")
            return
        self._taken.add(status.id)
        info.id, info.state = status.id, status.state
        await self.ledger.update(info.tag, batch_id=status.id, state=status.state)
        self._changed()
        self._spawn(self._follow, info, status)

    async def _follow(self, info: BatchInfo, status: BatchStatus | None) -> None:
        """Poll a batch until it ends (cancelling it once the benchmark decided, or past ``max_wait_s``)."""
        assert info.id is not None
        deadline = info.created + self.settings.max_wait_s
        cancelled = False
        while status is None or not status.ended:
            if status is not None:
                await anyio.sleep(self.settings.poll_s)
            try:
                status = await self.api.status(info.id)
            except BatchError as exc:  # retried already; the provider may answer later
                logger.warning("batch %s: status check failed: %s", info.id, exc)
                continue
            if not cancelled and ((self._stopping() and self.decided()) or time.time() > deadline):
                cancelled = True
                try:
                    status = await self.api.cancel(info.id)
                except BatchError as exc:
                    logger.warning("batch %s: cancel failed: %s", info.id, exc)
            if (status.state, status.done, status.failed) != (info.state, info.done, info.failed):
                info.state, info.done, info.failed = status.state, status.done, status.failed
                await self.ledger.update(info.tag, state=status.state, done=status.done, failed=status.failed)
                self._changed()
        await self._ended(info, status, status.error)

    async def _ended(self, info: BatchInfo, status: BatchStatus | None, error: str | None) -> None:
        """Read an ended batch's results, keep them, then answer (or resubmit) every line."""
        results: list[LineResult] = []
        if status is not None and status.state != "failed":
            results = await self.api.results(status)
        end = "failed" if status is None else status.state
        by_cid = {r.custom_id: r for r in results}
        kept: list[tuple[str, str, Result]] = []
        billed = 0.0
        for cid in info.cids:
            got = by_cid.get(cid)
            if got is None:
                state = _MISSING.get(end, "failed")
                why = (error or "the batch failed") if end == "failed" else f"batch line {state} (no result)"
                got = LineResult(cid, state, self.api.failed(why, None))
            result = self._priced(cid, got.result)
            billed += result.usd or 0.0
            kept.append((cid, got.state, result))
        await self.ledger.results(info.tag, kept, billed)
        info.state = end
        self._changed()
        retry = info.tag not in self._cancelled
        for cid, state, result in kept:
            self._resolve(cid, state, result, retry)

    def _priced(self, cid: str, result: Result) -> Result:
        """A line's reply at the batch rate (its bill); a reply with no usage block is counted."""
        lines = self.waiting.get(cid) or []
        request = lines[0].request if lines else None
        if result.usage.provenance is None and result.raw_text is not None and request is not None:
            result = msgspec.structs.replace(result, usage=estimated_usage(request, result))
        model = result.model or (request.model if request is not None else None) or self.inner.model
        if result.usage.provenance is None:
            return msgspec.structs.replace(result, model=model, usd=0.0)
        return msgspec.structs.replace(result, model=model, usd=self.pricing.cost(result.usage, model))

    def _resolve(self, cid: str, state: str, result: Result, retry: bool = True) -> None:
        """Give a line's reply to the runs waiting on it; an expired one is handled by the policy.

        ``retry=False``: a line of a batch cancelled on request fails as it came back.
        """
        lines = self.waiting.pop(cid, [])
        self.attached.pop(cid, None)
        alive = [ln for ln in lines if not ln.future.done()]
        if state in ("expired", "cancelled") and alive and retry and not self._stopping():
            policy = self.settings.expired
            if policy == "resubmit" and lines[0].tries <= RESUBMITS:
                first = lines[0]
                if first.body is None:  # a line of an earlier run's batch: its body made again
                    first.body = self.inner.build_body(first.request, first.request.model or self.inner.model)
                self.pending.setdefault(cid, []).extend(lines)
                self.uploaded.discard(cid)
                self._last_line = time.monotonic()
                self._kick.set()
                return
            if policy == "sync" and lines[0].before is not None:
                self._spawn(self._sync, cid, lines)
                return
        if not alive and (not lines or lines[0].first):  # nobody waits: kept for a run that asks later
            self.known[cid] = (state, result)
            if lines and lines[0].before is not None and state == "done":
                self.paid.add(cid)  # settled below as paid for its (gone) run
        for i, line in enumerate(lines):
            if line.future.done():  # its run is gone: its reservation is settled here
                if i == 0:
                    settle_gone(line, result if state == "done" else None)
                continue
            line.future.set_result(
                result if line.first and i == 0 else msgspec.structs.replace(result, source="cache")
            )

    async def _sync(self, cid: str, lines: list[Line]) -> None:
        """An expired line sent through the synchronous API, reserved again at its list price."""
        try:
            await self._send_sync(cid, lines)
        except BudgetRefused as exc:  # its run stops there, as a refused request stops it
            for line in lines:
                if not line.future.done():
                    line.future.set_exception(exc)
        except Exception as exc:
            self.waiting[cid] = lines
            self._resolve(
                cid, "failed", self.api.failed(f"sent synchronously: {type(exc).__name__}: {exc}", None)
            )

    async def _send_sync(self, cid: str, lines: list[Line]) -> None:
        first = lines[0]
        gate = gate_of(first.before)
        if gate is not None:  # the next attempt reserves its worst case at the list price
            usd, tokens = self.list_pricing.reservation(first.request, getattr(self.inner, "billed_as", ()))
            gate.usd, gate.tokens = max(gate.usd, usd or 0.0), max(gate.tokens, tokens)
        result = await self.inner.send(first.request, first.before)
        if result.usd is None:
            model = result.model or first.request.model or self.inner.model
            result = msgspec.structs.replace(result, usd=self.list_pricing.cost(result.usage, model))
        self.waiting[cid] = lines
        self._resolve(cid, "done" if result.ok else "failed", result)

    def _fail_all(self, info: Any, why: str) -> None:
        for cid in getattr(info, "cids", []):
            if cid in self.waiting:
                self._resolve(cid, "failed", self.api.failed(why, None))

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    async def cancel(self, tag: str) -> bool:
        """Cancel a batch of this benchmark at the provider (``hrb cancel``); whether it was followed."""
        info = self.batches.get(tag) or next((b for b in self.batches.values() if b.id == tag), None)
        if info is None or info.id is None:
            return False
        self._cancelled.add(info.tag)  # its lines not answered fail, as asked: no resubmission
        status = await self.api.cancel(info.id)
        info.state = status.state
        await self.ledger.update(info.tag, state=status.state, done=status.done, failed=status.failed)
        self._changed()
        return True
