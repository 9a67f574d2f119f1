"""The rows of one ``benchmark`` request as they arrive: :class:`BenchmarkStream`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol

import msgspec

from hrbench_client import protocol as p
from hrbench_client.client.transport import _decode, _Envelope, _raise_for
from hrbench_client.errors import HrbenchError, RequestCancelled

__all__ = ["BenchmarkStream"]

_decode_rows = msgspec.json.Decoder(p.RowsNotification).decode
_decode_progress = msgspec.json.Decoder(p.ProgressNotification).decode


class _Connection(Protocol):
    """What a stream needs of its client (:class:`~hrbench_client.client.Client`)."""

    def _recv(self) -> _Envelope: ...

    def cancel(self, request_id: int) -> None: ...


class BenchmarkStream:
    """The rows of one ``benchmark`` request, yielded as the daemon scores them.

    Iterate it for :class:`~hrbench_client.protocol.Row` objects; afterwards :attr:`result`
    holds the :class:`~hrbench_client.protocol.BenchmarkResult`. Leaving a ``with`` block (or
    calling :meth:`close`) before the end cancels the benchmark; the rows scored so far stay in
    the daemon's store, and ``benchmark({"resume": stream.id})`` finishes it later.

    Attributes:
        id: the benchmark's id (known from the first notification on).
        done, total: progress, in rows.
        progress: the last ``hrbench/progress`` notification (spend against the caps), or ``None``.
        result: the final result, once the stream is exhausted.
    """

    def __init__(
        self, client: _Connection, request_id: int, on_progress: Callable[[int, int], None] | None
    ) -> None:
        self._client = client
        self.request_id = request_id
        self.on_progress = on_progress
        self.id: str | None = None
        self.done = 0
        self.total = 0
        self.progress: p.ProgressNotification | None = None
        self.result: p.BenchmarkResult | None = None
        self._finished = False
        self._cancelled = False

    def __iter__(self) -> Iterator[p.Row]:
        while not self._finished:
            rows = self._read()
            if rows:
                yield from rows

    def _read(self) -> list[p.Row] | None:
        """Read one message: this request's batch of rows is returned; progress and the result are kept."""
        env = self._client._recv()
        method = env.method
        if method == "hrbench/rows":  # a committed batch (protocol 2), decoded at once
            note = _decode_rows(env.params)  # type: ignore[arg-type]
            if note.request_id != self.request_id:
                return None
            self.id = note.benchmark
            return note.rows
        if method == "hrbench/progress":
            prog = _decode_progress(env.params)  # type: ignore[arg-type]
            if prog.request_id == self.request_id:
                self.id, self.done, self.total = prog.benchmark, prog.done, prog.total
                self.progress = prog
                if self.on_progress is not None:
                    self.on_progress(prog.done, prog.total)
        elif env.id == self.request_id:
            self._finished = True
            if env.error is not msgspec.UNSET:
                _raise_for(env.error)
            self.result = _decode(env.result, p.BenchmarkResult)
            self.id = self.result.id
        return None

    def started(self) -> str:
        """Wait until the daemon has stored the benchmark and started it; returns its id.

        The daemon checks the spec (and takes the id's lease) before it stores a benchmark, so
        a refusal raises here (``ConfigError``, ``BenchmarkRunning``, ...). Rows read meanwhile
        are dropped: submit with ``stream=False`` when only the id is wanted. A benchmark sent
        with ``detach=True`` runs on after this client closes (``hrb bench --detach``).

        Raises:
            HrbenchError: the daemon refused the benchmark.
        """
        while self.id is None and not self._finished:
            self._read()
        assert self.id is not None
        return self.id

    def rows(self) -> list[p.Row]:
        """Every row, once the benchmark has finished (a convenience over iterating)."""
        return list(self)

    def cancel(self) -> None:
        """Ask the daemon to stop this benchmark; iteration then ends with ``RequestCancelled``."""
        if not self._finished and not self._cancelled:
            self._cancelled = True
            self._client.cancel(self.request_id)

    def close(self) -> None:
        """Cancel if unfinished and read until the daemon answers (rows in between are dropped)."""
        if self._finished:
            return
        self.cancel()
        with contextlib.suppress(RequestCancelled, HrbenchError):
            for _ in self:
                pass

    def __enter__(self) -> BenchmarkStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
