"""The client itself: :class:`Client`, one connection to a daemon or a private stdio server."""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

import msgspec

from hrbench_client import protocol as p
from hrbench_client.client.outgoing import keyed_reference, with_caller_env
from hrbench_client.client.stream import BenchmarkStream
from hrbench_client.client.transport import (
    _decode,
    _decode_envelope,
    _encode,
    _Envelope,
    _Notification,
    _raise_for,
    _Request,
    _server_command,
    _Stream,
)
from hrbench_client.errors import DaemonError

if TYPE_CHECKING:
    import subprocess

__all__ = ["Client"]

T = TypeVar("T")


class _References:
    """``client.references``: put, get and list stored references."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def put(self, reference: p.ReferenceSpec | dict[str, Any], name: str | None = None) -> p.ReferenceInfo:
        """Store a reference (inline spec, or ``{"path": ...}`` on the daemon's disk) under ``name``."""
        reference = keyed_reference(reference)  # lists beside a mapping of items, keyed
        return self._client.call("reference/put", {"reference": reference, "name": name}, p.ReferenceInfo)

    def get(self, ref: str) -> p.ReferenceSpec:
        """A stored reference by name or hash (8+ characters of it)."""
        return self._client.call("reference/get", {"ref": ref}, p.ReferenceSpec)

    def list(self) -> list[p.ReferenceInfo]:
        """Stored references, newest first."""
        return self._client.call("reference/list", {}, p.ReferenceListResult).references


class Client:
    """A connection to an hrbench daemon (sync; one request at a time per client).

    Use :func:`connect` (Unix socket), :meth:`connect_tcp` or :meth:`spawn_stdio`. A client
    may be shared by threads only for :meth:`cancel`.
    """

    def __init__(self, stream: _Stream, proc: subprocess.Popen[bytes] | None = None) -> None:
        self._stream = stream
        self._proc = proc
        self._ids = itertools.count(1)
        self._early: dict[int | str, _Envelope] = {}
        self.references = _References(self)
        self.over_tcp = False  # connected to a TCP listener (connect_tcp)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def connect_unix(cls, path: str | os.PathLike[str], timeout_s: float | None = None) -> Client:
        """Connect to a daemon's Unix socket."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout_s)
        try:
            sock.connect(os.fspath(path))
        except OSError:
            sock.close()
            raise
        return cls._from_socket(sock)

    @classmethod
    def connect_tcp(cls, host: str, port: int, token: str, timeout_s: float | None = None) -> Client:
        """Connect to a daemon's loopback TCP listener and authenticate with ``token``."""
        sock = socket.create_connection((host, port), timeout=timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = cls._from_socket(sock)
        client.over_tcp = True
        try:
            client.call("auth", {"token": token}, p.AuthResult)
        except BaseException:
            client.close()
            raise
        return client

    @classmethod
    def _from_socket(cls, sock: socket.socket) -> Client:
        # a BufferedReader at run time; typeshed types makefile() with a buffer size as IOBase
        rfile = cast("IO[bytes]", sock.makefile("rb", buffering=1 << 16))

        def closer() -> None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            rfile.close()
            sock.close()

        return cls(_Stream(rfile, sock.sendall, closer))

    @classmethod
    def spawn_stdio(
        cls, home: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None
    ) -> Client:
        """Start a private server (``python -m hrbench_server serve --stdio``) and talk over its pipes."""
        import subprocess

        cmd = [*_server_command()]
        if home is not None:
            cmd += ["--home", os.fspath(home)]
        cmd += ["serve", "--stdio"]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert proc.stdin is not None and proc.stdout is not None

        def closer() -> None:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()

        stdin = proc.stdin

        def sendall(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()

        return cls(_Stream(proc.stdout, sendall, closer), proc)

    def close(self) -> None:
        """Close the connection (a stdio server then exits)."""
        self._stream.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ------------------------------------------------------------------------------
    def _recv(self) -> _Envelope:
        try:
            return _decode_envelope(self._stream.recv())
        except msgspec.DecodeError as exc:
            raise DaemonError(f"the daemon sent a malformed message ({exc})") from None

    def send_request(self, method: str, params: Any = None) -> int:
        """Send a request without waiting; returns its id (see :meth:`wait`)."""
        msg_id = next(self._ids)
        self._stream.send(_encode(_Request("2.0", msg_id, method, {} if params is None else params)))
        return msg_id

    def wait(self, msg_id: int, result_type: type[T] | None = None) -> T:
        """Read until the response to ``msg_id``; raise its error or return its result."""
        env = self._early.pop(msg_id, None)
        while env is None:
            got = self._recv()
            if got.id is msgspec.UNSET or got.method is not msgspec.UNSET:
                continue  # a notification of another request (a closed stream's leftovers)
            if got.id == msg_id:
                env = got
            elif got.id is not None:
                self._early[got.id] = got
            elif got.error is not msgspec.UNSET:
                _raise_for(got.error)  # an error about an unreadable request: ours
        if env.error is not msgspec.UNSET:
            _raise_for(env.error)
        return _decode(env.result, Any if result_type is None else result_type)  # type: ignore[no-any-return]

    def call(self, method: str, params: Any = None, result_type: type[T] | None = None) -> T:
        """Call ``method`` and wait for its result (decoded into ``result_type`` when given)."""
        return self.wait(self.send_request(method, params), result_type)

    def send_raw(self, body: bytes) -> None:
        """Send one framed body as it is (tests of malformed input)."""
        self._stream.send(body)

    def recv_raw(self) -> dict[str, Any]:
        """Read one message as a plain dict."""
        return msgspec.json.decode(self._stream.recv())  # type: ignore[no-any-return]

    def cancel(self, request_id: int) -> None:
        """Send ``$/cancelRequest`` for a request (safe from another thread)."""
        self._stream.send(_encode(_Notification("2.0", "$/cancelRequest", {"id": request_id})))

    # -- methods -------------------------------------------------------------------------------
    def score(
        self,
        output: str | None,
        label: Any = None,
        *,
        scorer: str = "exact",
        item: Any = None,
        settings: dict[str, Any] | None = None,
    ) -> p.ScoreResult:
        """Score one output against a label.

        Args:
            output: the output text.
            label: the accepted answer(s); ``None`` for an item with no label.
            scorer: ``exact``, ``answer_contains`` or ``package.module:function``.
            item: the item's payload, for scorers that read it.
            settings: the scorer factory's keyword arguments.
        """
        params = p.ScoreParams(output=output, label=label, item=item, scorer=scorer, settings=settings or {})
        return self.call("score", params, p.ScoreResult)

    def score_many(self, inputs: Iterable[dict[str, Any]], *, window: int = 256) -> Iterator[p.ScoreResult]:
        """Score many ``{"output", "label", "item"?, "scorer"?, "settings"?}`` dicts, pipelined.

        Results come back in input order; up to ``window`` requests are in flight.
        """
        pending: list[int] = []
        for params in inputs:
            pending.append(self.send_request("score", params))
            if len(pending) >= window:
                yield self.wait(pending.pop(0), p.ScoreResult)
        for msg_id in pending:
            yield self.wait(msg_id, p.ScoreResult)

    def benchmark(
        self, spec: p.BenchmarkParams | dict[str, Any], on_progress: Callable[[int, int], None] | None = None
    ) -> BenchmarkStream:
        """Start a benchmark; iterate the returned stream for rows as they are scored.

        Args:
            spec: a :class:`~hrbench_client.protocol.BenchmarkParams` or a dict of one (arms,
                reference, client, runs, ...), or ``{"resume": "<id>"}``.
            on_progress: called with ``(done, total)`` rows as progress arrives.
        """
        body = with_caller_env(keyed_reference(spec))  # lists beside a mapping of items keyed
        return BenchmarkStream(self, self.send_request("benchmark", body), on_progress)

    def resume(
        self,
        benchmark_id: str,
        on_progress: Callable[[int, int], None] | None = None,
        *,
        retry_errors: bool = False,
        concurrency: int | None = None,
    ) -> BenchmarkStream:
        """Resume an interrupted benchmark: finished rows are kept, the rest run.

        Args:
            benchmark_id: its id, a unique id prefix or its name.
            on_progress: as for :meth:`benchmark`.
            retry_errors: run again the runs that ended in errors too (their rows replaced;
                what they spent stays spent).
            concurrency: how many (arm, item) pairs run at once; ``None`` keeps the benchmark's.
        """
        spec: dict[str, Any] = {"resume": benchmark_id, "retry_errors": retry_errors}
        if concurrency is not None:
            spec["concurrency"] = concurrency
        return self.benchmark(spec, on_progress)

    def evaluate(self, spec: p.EvaluateParams | dict[str, Any]) -> dict[str, Any]:
        """Run ``evaluate()`` (seed 003) from a spec (module, data, metric, client, epochs, ...).

        Returns:
            The seed's result fields (``mean_score``, ``scores``, ``predictions``, ...) and
            ``warnings``.
        """
        return self.call("evaluate", with_caller_env(spec), p.EvaluateResult).result

    def rows(
        self,
        benchmark_id: str,
        *,
        offset: int = 0,
        limit: int | None = None,
        traces: bool = False,
        item: str | None = None,
        arm: str | None = None,
    ) -> p.BenchmarkRowsResult:
        """Stored rows (and traces) of a benchmark; only those of ``item``/``arm`` when given."""
        params = p.BenchmarkRowsParams(
            id=benchmark_id, offset=offset, limit=limit, traces=traces, item=item, arm=arm
        )
        return self.call("benchmark/rows", params, p.BenchmarkRowsResult)

    def view(self, benchmark_id: str, against: str | None = None, **settings: Any) -> p.BenchmarkViewResult:
        """One benchmark's arm table and paired differences against ``against`` (``level``, ``method``)."""
        params = {"id": benchmark_id, "against": against, **settings}
        return self.call("benchmark/view", params, p.BenchmarkViewResult)

    def matrix(self, benchmark_id: str, **filters: Any) -> p.BenchmarkMatrixResult:
        """The item x arm matrix, filtered and paged: the fields of ``BenchmarkMatrixParams``."""
        return self.call("benchmark/matrix", {"id": benchmark_id, **filters}, p.BenchmarkMatrixResult)

    def cell(self, benchmark_id: str, item: str, arm: str) -> p.BenchmarkCellResult:
        """Every run of ``arm`` on ``item`` with its trace."""
        params = {"id": benchmark_id, "item": item, "arm": arm}
        return self.call("benchmark/cell", params, p.BenchmarkCellResult)

    def compare_benchmarks(self, a: str, b: str, **settings: Any) -> p.BenchmarkCompareResult:
        """Per shared arm, the paired difference ``b - a`` of two benchmarks on one reference."""
        return self.call("benchmark/compare", {"a": a, "b": b, **settings}, p.BenchmarkCompareResult)

    def report(self, benchmark_id: str, **settings: Any) -> dict[str, Any]:
        """The statistical report of a stored benchmark (``level``, ``method``, ``descriptive``, ...)."""
        return self.call("report", {"id": benchmark_id, "settings": settings}, p.ReportResult).report

    def cache_stats(self) -> dict[str, Any]:
        """Response-cache statistics."""
        return self.call("cache/stats", {}, p.CacheStatsResult).stats

    def cache_clear(
        self, *, model: str | None = None, arm: str | None = None, older_than_s: float | None = None
    ) -> int:
        """Delete response-cache entries (all, or those of a model / arm / older than); returns how many."""
        params = p.CacheClearParams(model=model, arm=arm, older_than_s=older_than_s)
        return self.call("cache/clear", params, p.CacheClearResult).deleted

    def recording_import(
        self, path: str | os.PathLike[str], name: str | None = None
    ) -> p.RecordingImportResult:
        """Import a recording from a JSON-lines export file."""
        params = {"path": os.path.abspath(os.fspath(path)), "name": name}
        return self.call("recording/import", params, p.RecordingImportResult)

    def recording_export(
        self, name: str, path: str | os.PathLike[str] | None = None
    ) -> p.RecordingExportResult:
        """Export a recording to a JSON-lines file, or (``path`` ``None``) return its entries.

        Over the Unix socket or stdio the daemon writes the file. Over TCP the daemon writes
        files only inside its state folder, so this client asks for the entries and writes
        the file itself.
        """
        if path is not None and not self.over_tcp:
            params = {"name": name, "path": os.path.abspath(os.fspath(path))}
            return self.call("recording/export", params, p.RecordingExportResult)
        out = self.call("recording/export", {"name": name}, p.RecordingExportResult)
        if path is None:
            return out
        from hrbench_client.files import atomic_file

        target = os.path.abspath(os.fspath(path))
        with atomic_file(target) as f:  # the bytes the daemon would have written, whole or not at all
            for e in out.entries or []:
                f.write(msgspec.json.encode(e) + b"\n")
        return p.RecordingExportResult(name=out.name, n=out.n, path=target)

    def benchmarks(self, limit: int | None = None, search: str | None = None) -> list[p.BenchmarkListing]:
        """Stored benchmarks, newest first (id, name, created, status, arms, rows, accuracy, ...).

        ``search`` keeps those whose name or id contains it (case-insensitive), ``limit`` the
        newest of those.
        """
        params = {"limit": limit, "search": search}
        return self.call("benchmark/list", params, p.BenchmarkListResult).benchmarks

    def cancel_benchmark(self, ref: str, grace_s: float | None = None) -> p.BenchmarkCancelResult:
        """Cancel a running benchmark (id, id prefix or name), from any connection; it stays resumable.

        The requests it has sent may finish first, for up to ``grace_s`` seconds (``None``: the
        daemon's default, see :class:`~hrbench_client.protocol.BenchmarkCancelParams`).
        """
        return self.call(
            "benchmark/cancel", p.BenchmarkCancelParams(id=ref, grace_s=grace_s), p.BenchmarkCancelResult
        )

    def delete(self, ref: str) -> p.BenchmarkDeleteResult:
        """Delete a stored benchmark (id, unique id prefix or name) with its rows and traces."""
        return self.call("benchmark/delete", {"id": ref}, p.BenchmarkDeleteResult)

    def gc(
        self, older_than_s: float, *, cache: bool = True, recordings: bool = False, vacuum: bool = True
    ) -> p.GcResult:
        """Delete benchmarks (and cache entries; recordings when asked) older than ``older_than_s``."""
        params = p.GcParams(older_than_s=older_than_s, cache=cache, recordings=recordings, vacuum=vacuum)
        return self.call("gc", params, p.GcResult)

    def status(self) -> p.StatusResult:
        """The daemon's status."""
        return self.call("status", {}, p.StatusResult)

    def shutdown(self) -> None:
        """Stop the daemon (after it answers)."""
        self.call("shutdown", {}, p.ShutdownResult)
