"""A synchronous client of the hrbench daemon: standard library and msgspec only.

>>> from hrbench_client import connect
>>> with connect() as hb:  # starts a daemon if none runs  # doctest: +SKIP
...     print(hb.score("  paris ", label="Paris").correct)
...     stream = hb.benchmark({"arms": [...], "reference": "capitals", "client": {...}})
...     for row in stream:                                        # rows arrive as they are scored
...         print(row.item, row.correct)
...     print(stream.result.summary)
True

The daemon listens on a Unix socket in the state directory (``$HRBENCH_HOME`` or the user state
dir); :func:`connect` starts one (``python -m hrbench_server daemon``, detached) when asked.
:meth:`Client.spawn_stdio` runs a private server over pipes instead. Errors come back as the
typed exceptions of :mod:`hrbench_client.errors`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

import msgspec

from hrbench_client import _paths
from hrbench_client import protocol as p
from hrbench_client.errors import (
    DaemonError,
    HrbenchError,
    InvalidParams,
    ReferenceValueError,
    RequestCancelled,
    from_error,
)

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "BenchmarkStream",
    "Client",
    "connect",
    "autostart_idle_exit_s",
    "daemon_status",
    "keyed_reference",
    "start_daemon",
    "stop_daemon",
    "with_caller_env",
]

T = TypeVar("T")


class _Envelope(msgspec.Struct):
    jsonrpc: str = "2.0"
    id: int | str | None | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET


class _Request(msgspec.Struct):
    jsonrpc: str
    id: int
    method: str
    params: Any


class _Notification(msgspec.Struct):
    jsonrpc: str
    method: str
    params: Any


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_rows = msgspec.json.Decoder(p.RowsNotification).decode
_decode_progress = msgspec.json.Decoder(p.ProgressNotification).decode
_encode = msgspec.json.Encoder().encode
_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def _decode(raw: msgspec.Raw | msgspec.UnsetType, typ: Any) -> Any:
    if raw is msgspec.UNSET:
        return None
    dec = _DECODERS.get(typ)
    if dec is None:
        dec = _DECODERS[typ] = msgspec.json.Decoder(typ)
    return dec.decode(raw)


class _Stream:
    """Content-Length framing over a pair of binary files."""

    def __init__(self, rfile: IO[bytes], sendall: Callable[[bytes], Any], closer: Callable[[], None]) -> None:
        self.rfile, self.sendall, self.closer = rfile, sendall, closer
        self.lock = threading.Lock()

    def send(self, body: bytes) -> None:
        with self.lock:
            try:
                self.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            except (OSError, ValueError) as exc:
                raise DaemonError(f"the connection to the daemon broke ({type(exc).__name__})") from None

    def recv(self) -> bytes:
        length = None
        try:
            while True:
                line = self.rfile.readline(1 << 16)
                if not line:
                    raise DaemonError("the daemon closed the connection")
                if line in (b"\r\n", b"\n"):
                    if length is not None:
                        break
                    continue
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = self.rfile.read(length)
        except OSError as exc:
            raise DaemonError(f"the connection to the daemon broke ({type(exc).__name__})") from None
        if len(body) != length:
            raise DaemonError("the daemon closed the connection mid-message")
        return body

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.closer()


def _raise_for(error: dict[str, Any]) -> None:
    raise from_error(error)


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
        self, client: Client, request_id: int, on_progress: Callable[[int, int], None] | None
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


_PER_ITEM = ("labels", "cluster", "split")


def keyed_reference(spec: Any) -> Any:
    """``spec`` with the lists beside a mapping of items keyed by item id, as the wire asks.

    Decided (issue 25, finding 1): the daemon never pairs a list with a mapping by position (a
    JSON object's keys arrive in the sender's map order, a Lua table's hash order), and refuses
    it (:func:`hrbench.reference.check_keyed`). A Python caller does define the order: a dict
    keeps its insertion order, and ``hrb`` reads a TOML file into dicts in the file's order. So
    the client turns ``labels``, ``cluster`` and ``split`` given as lists beside ``items`` given
    as a mapping into mappings by item id before sending, pairing them by position as
    ``hrbench.Reference`` does; a spec that keys them already, gives one value for all, or gives
    ``items`` as a list is sent as it is. The caller's spec is not changed.

    Args:
        spec: a benchmark spec (:class:`~hrbench_client.protocol.BenchmarkParams` or a dict) or a
            reference spec (:class:`~hrbench_client.protocol.ReferenceSpec` or a dict).

    Raises:
        ReferenceValueError: a list whose length is not the number of items, named
            ``reference.labels`` (``.cluster``, ``.split``).

    Example:
        >>> keyed_reference({"items": {"q1": "France", "q2": "Peru"}, "labels": ["Paris", "Lima"]})["labels"]
        {'q1': 'Paris', 'q2': 'Lima'}
        >>> keyed_reference({"reference": {"items": ["France"], "labels": ["Paris"]}})["reference"]["labels"]
        ['Paris']
    """
    if isinstance(spec, p.BenchmarkParams) or (isinstance(spec, dict) and "reference" in spec):
        ref = spec.reference if isinstance(spec, msgspec.Struct) else spec["reference"]
        keyed = _keyed(ref)
        if keyed is ref:
            return spec
        return (
            msgspec.structs.replace(spec, reference=keyed)
            if isinstance(spec, msgspec.Struct)
            else {**spec, "reference": keyed}
        )
    return _keyed(spec)


def _keyed(ref: Any) -> Any:
    """One reference spec with its lists keyed by id (see :func:`keyed_reference`)."""
    struct = isinstance(ref, p.ReferenceSpec)
    if not (struct or isinstance(ref, dict)):
        return ref  # a stored name or hash, or something the daemon will refuse by name
    get = (lambda k: getattr(ref, k)) if struct else ref.get
    items = get("items")
    if not isinstance(items, dict):
        return ref
    ids = [str(k) for k in items]
    changed: dict[str, Any] = {}
    for name in _PER_ITEM:
        value = get(name)
        if not isinstance(value, (list, tuple)):
            continue
        if len(value) != len(ids):
            raise ReferenceValueError(
                f"reference.{name}: {len(value)} value{'s' * (len(value) != 1)} for {len(ids)} "
                f"item{'s' * (len(ids) != 1)}; a list gives one value per item, in the order of "
                "`items` (or key it by item id: {item id: value})",
                data={"name": "ReferenceValueError", "field": f"reference.{name}"},
            )
        changed[name] = dict(zip(ids, value, strict=True))
    if not changed:
        return ref
    return msgspec.structs.replace(ref, **changed) if struct else {**ref, **changed}


class _References:
    """``client.references``: put, get and list stored references."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def put(self, reference: p.ReferenceSpec | dict[str, Any], name: str | None = None) -> p.ReferenceInfo:
        """Store a reference (inline spec, or ``{"path": ...}`` on the daemon's disk) under ``name``."""
        reference = keyed_reference(reference)  # lists beside a mapping of items, keyed (issue 25)
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
        body = with_caller_env(keyed_reference(spec))  # lists beside a mapping of items keyed (issue 25)
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
        """The item x arm matrix (``cluster``, ``failure_kind``, ``split``, ``disagree``, paging)."""
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
        target = os.path.abspath(os.fspath(path))
        with open(target, "wb") as f:  # the bytes the daemon would have written
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


# -- the daemon's life cycle --------------------------------------------------------------------


# The daemons this process started, by pid: kept so that they are reaped (no zombie for
# stop_daemon to wait on) and their Popen is not collected while they run (a ResourceWarning).
_STARTED: dict[int, subprocess.Popen[bytes]] = {}


def _python() -> str:
    return os.environ.get("HRBENCH_PYTHON") or sys.executable


def _server_command() -> list[str]:
    """``python -P -m hrbench_server``: ``-P`` keeps the working directory off the import path.

    Decided, issue 13: a file in the caller's directory named like a dependency must never run
    inside the server; the server imports user code only from a spec's explicit ``python_path``.
    """
    return [_python(), "-P", "-m", "hrbench_server"]


_KEY_DEFAULTS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def _key_names(spec: Any) -> set[str]:
    """The environment variables holding API keys that a spec's model clients name."""
    names: set[str] = set()
    if isinstance(spec, dict):
        if spec.get("kind") in _KEY_DEFAULTS:
            name = spec.get("api_key_env", _KEY_DEFAULTS[spec["kind"]])
            if isinstance(name, str):
                names.add(name)
        for key, value in spec.items():
            if key != "env":
                names |= _key_names(value)
    elif isinstance(spec, list):
        for value in spec:
            names |= _key_names(value)
    return names


LIMIT_VARIABLES = ("HRBENCH_MAX_CALLS", "HRBENCH_MAX_USD", "HRBENCH_MAX_TOKENS")
"""The default-limit variables a client sends from its own environment (``hrbench.runner.limits``)."""


def with_caller_env(spec: Any) -> Any:
    """``spec`` plus ``env``: this process's values of the variables the request depends on (SPEC §4).

    Those are the key variables the spec's clients name, and the default limits
    :data:`LIMIT_VARIABLES` (``HRBENCH_MAX_CALLS``, ``HRBENCH_MAX_USD``,
    ``HRBENCH_MAX_TOKENS``). The daemon uses them for this request only, before its own
    environment, and never stores or logs them; so ``OPENAI_API_KEY=... hrb bench`` works
    against a daemon started without it, and ``HRBENCH_MAX_CALLS=50 hrb bench`` gives the
    limits the spec and the flags do not set (decided, newcomer finding: the daemon read only
    its own environment, at start, and ignored the shell's silently). Variables not set here
    are not sent; an ``env`` already in the spec is kept as given.

    Example:
        >>> os.environ["HRB_DOC_KEY"] = "k"
        >>> with_caller_env({"client": {"kind": "openai", "model": "m", "api_key_env": "HRB_DOC_KEY"}})["env"]
        {'HRB_DOC_KEY': 'k'}
        >>> del os.environ["HRB_DOC_KEY"]
    """
    struct = isinstance(spec, msgspec.Struct)
    plain = msgspec.to_builtins(spec) if struct else spec
    if not isinstance(plain, dict) or plain.get("env"):
        return spec
    env = {n: os.environ[n] for n in sorted(_key_names(plain) | set(LIMIT_VARIABLES)) if os.environ.get(n)}
    if not env:
        return spec
    return msgspec.structs.replace(spec, env=env) if struct else {**plain, "env": env}


def _try_unix(state: Path, timeout_s: float | None) -> Client | None:
    """A connection to the daemon's socket; ``None`` when none answers.

    Raises:
        DaemonError: the socket or its directory is not safely ours (see
            :func:`hrbench_client._paths.check_socket_dir`): nothing is sent there.
    """
    try:
        return Client.connect_unix(_paths.check_socket(state), timeout_s)
    except _paths.UnsafeDirectory as exc:
        raise DaemonError(str(exc)) from None
    except (FileNotFoundError, ConnectionRefusedError):
        return None


def start_daemon(
    home: str | os.PathLike[str] | None = None,
    *,
    tcp: str | None = None,
    timeout_s: float = 20.0,
    env: dict[str, str] | None = None,
    idle_exit_s: float | None = None,
    allow_code_over_tcp: bool = False,
) -> int:
    """Start a daemon for ``home`` (detached) unless one answers; returns its pid.

    The daemon runs in the state directory with ``python -P`` (the caller's directory is
    never on its import path).

    Args:
        home: the state directory.
        tcp: also listen on this loopback ``HOST:PORT``.
        timeout_s: how long to wait for it to answer.
        env: the daemon's environment (default: this process's).
        idle_exit_s: the daemon stops after this many seconds without a client or a running
            benchmark; ``None`` keeps it up until stopped.
        allow_code_over_tcp: let TCP clients send import-path specs (code; see the README's
            trust model).

    Raises:
        DaemonError: the daemon did not come up within ``timeout_s`` (its log says why); the
            daemon this call started is then stopped, never left running.
    """
    import subprocess

    state = _paths.home(home)
    existing = daemon_status(state)
    if existing is not None:
        return existing.pid
    log = _paths.log_path(state)
    try:
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError as exc:  # read-only, full, not ours: advice, not a raw OSError (newcomer finding)
        raise DaemonError(_unusable_home(state, exc)) from None
    cmd = [*_server_command(), "--home", str(state), "daemon"]
    if tcp:
        cmd += ["--tcp", tcp]
    if allow_code_over_tcp:
        cmd.append("--allow-code-over-tcp")
    if idle_exit_s is not None:
        cmd += ["--idle-exit", repr(float(idle_exit_s))]
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
            env=env,
            cwd=state,  # never the caller's directory (and -P keeps it off the import path)
        )
    finally:
        os.close(fd)
    _STARTED[proc.pid] = proc
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = daemon_status(state)
        if status is not None:
            return status.pid
        rc = proc.poll()
        if rc is not None:
            _STARTED.pop(proc.pid, None)
            if rc == 2:  # a bad argument or environment value: the log's last line names it
                raise InvalidParams(f"the daemon refused to start{_last_line(log)}")
            if rc != 3:  # 3: another daemon won the race; wait for it
                raise DaemonError(f"the daemon exited with code {rc}{_last_line(log)}; see {log}")
        time.sleep(0.02)
    stopped = _stop_unanswering(proc)
    raise DaemonError(f"no daemon answered within {timeout_s} s; {stopped}; see {log}")


def _unusable_home(state: Path, exc: OSError) -> str:
    """Why no daemon can start for the state folder ``state``, and what to do.

    Example:
        >>> print(_unusable_home(Path("/ro/hrbench"), OSError(30, "Read-only file system", "/ro/hrbench")))
        no daemon runs for the state folder /ro/hrbench and none can start there: Read-only file system (/ro/hrbench); the daemon keeps its database, socket and log in it. Make it writable (and free space if the disk is full), or point HRBENCH_HOME (or --home) at another folder
    """
    why = exc.strerror or type(exc).__name__
    return (
        f"no daemon runs for the state folder {state} and none can start there: {why} "
        f"({exc.filename or state}); the daemon keeps its database, socket and log in it. Make it "
        "writable (and free space if the disk is full), or point HRBENCH_HOME (or --home) at another folder"
    )


def _stop_unanswering(proc: Any) -> str:
    """Stop the daemon this call started when it never answered.

    Decided (newcomer finding: a start that timed out left its daemon running; a busy
    machine's test run left 65 of them). SIGTERM, then SIGKILL after 5 s; the process is reaped. Returns what happened, for the error.
    """
    import subprocess

    _STARTED.pop(proc.pid, None)
    if proc.poll() is not None:
        return f"the daemon it started had exited (code {proc.returncode})"
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
    return f"the daemon it started (pid {proc.pid}) was stopped"


def _last_line(log: Path) -> str:
    """``": <the log's last line>"``: why the daemon refused to start (it says so last)."""
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return f": {lines[-1]}" if lines else ""


def daemon_status(home: str | os.PathLike[str] | None = None) -> p.StatusResult | None:
    """The running daemon's status, or ``None`` when none answers."""
    state = _paths.home(home)
    client = _try_unix(state, 5.0)
    if client is None:
        return None
    try:
        with client:
            return client.status()
    except (DaemonError, OSError):
        return None


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still exists (a daemon this process started is reaped here)."""
    proc = _STARTED.get(pid)
    if proc is not None:
        if proc.poll() is None:
            return True
        del _STARTED[pid]
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_daemon(home: str | os.PathLike[str] | None = None, *, timeout_s: float = 15.0) -> bool:
    """Stop the daemon of ``home``; returns ``False`` when none was running.

    Returns once the daemon's process has exited (its socket and lock are then free for a new
    daemon); after ``timeout_s`` it sends SIGTERM and waits up to 5 s more. A daemon that runs
    benchmarks stops each as ``hrb cancel`` does (the requests already sent finish first,
    within its cancel grace), so ``timeout_s`` then counts from the end of that grace.
    """
    import json
    import signal

    state = _paths.home(home)
    client = _try_unix(state, 5.0)
    pid = None
    grace_s = 0.0
    if client is not None:
        with client:
            with contextlib.suppress(HrbenchError, OSError):
                status = client.status()
                pid = status.pid
                if status.running:
                    grace_s = status.cancel_grace_s or 0.0
                client.shutdown()
    else:
        try:
            pid = int(json.loads(_paths.pid_path(state).read_text())["pid"])
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            return False

    def gone() -> bool:
        if pid is not None:
            return not _pid_alive(pid)
        return not _paths.socket_path(state).exists() and not _paths.pid_path(state).exists()

    deadline = time.monotonic() + grace_s + timeout_s
    while time.monotonic() < deadline:
        if gone():
            return True
        time.sleep(0.02)
    if pid is not None:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and not gone():
            time.sleep(0.02)
    return True


DEFAULT_IDLE_EXIT_S = 600.0
"""How long a daemon started on demand (``connect``, any ``hrb`` command) waits without a client
before it exits; ``$HRBENCH_IDLE_EXIT`` (seconds; ``0`` or ``never`` to keep it) overrides it."""


def autostart_idle_exit_s() -> float | None:
    """The idle timeout of a daemon started on demand: ``$HRBENCH_IDLE_EXIT`` or 600 s.

    Raises:
        DaemonError: ``$HRBENCH_IDLE_EXIT`` is neither a number of seconds nor ``never``.

    Example:
        >>> os.environ["HRBENCH_IDLE_EXIT"] = "never"; autostart_idle_exit_s() is None
        True
        >>> os.environ["HRBENCH_IDLE_EXIT"] = "90"; autostart_idle_exit_s()
        90.0
        >>> del os.environ["HRBENCH_IDLE_EXIT"]
    """
    text = os.environ.get("HRBENCH_IDLE_EXIT", "").strip().lower()
    if not text:
        return DEFAULT_IDLE_EXIT_S
    if text in ("never", "0"):
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise DaemonError(f"HRBENCH_IDLE_EXIT must be a number of seconds or `never` (got {text!r})")
    return value


def connect(
    home: str | os.PathLike[str] | None = None,
    *,
    autostart: bool = True,
    timeout_s: float | None = None,
    tcp: bool = False,
) -> Client:
    """Connect to the daemon of ``home`` (``$HRBENCH_HOME`` or the user state dir).

    Args:
        home: the state directory.
        autostart: start a daemon when none answers (not with ``tcp``); it stops after
            :func:`autostart_idle_exit_s` seconds with no client and no running benchmark.
        timeout_s: socket timeout for each read (``None``: wait as long as a benchmark takes).
        tcp: use the daemon's loopback TCP listener (started with ``--tcp``) and the token
            file of the state directory instead of the Unix socket.

    Raises:
        DaemonError: no daemon answers and ``autostart`` is false, or it failed to start.
    """
    state = _paths.home(home)
    if tcp:
        import json

        try:
            addr = json.loads(_paths.pid_path(state).read_text())["tcp"]
            token = _paths.token_path(state).read_text().strip()
        except (OSError, ValueError, KeyError, TypeError):
            addr = None
        if not addr:
            raise DaemonError(
                f"no daemon with a TCP listener runs for {state} (`hrb daemon start --tcp ...`)"
            )
        host, _, port = addr.rpartition(":")
        return Client.connect_tcp(host.strip("[]"), int(port), token, timeout_s)
    client = _try_unix(state, timeout_s)
    if client is not None:
        return client
    if not autostart:
        raise DaemonError(f"no hrbench daemon is running for {state} (start one with `hrb daemon start`)")
    start_daemon(state, idle_exit_s=autostart_idle_exit_s())
    client = _try_unix(state, timeout_s)
    if client is None:
        raise DaemonError(f"the daemon for {state} started but does not accept connections")
    return client
