"""A loopback OpenAI- and Anthropic-compatible model server for tests and benchmarks.

It listens on 127.0.0.1 and a free port, on starlette + uvicorn, in a background thread (or a
subprocess, for benchmarks where the server must not share the client's interpreter lock)::

    with LoopbackServer(latency_s=0.05) as srv:
        client = OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None)

    async with LoopbackServer() as srv:      # from async tests: starts in a worker thread
        ...

Routes: ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages`` (Anthropic), and both
batch APIs (:mod:`hrbench.testing._loopback_batch`: scripted states, bills at the batch rate). It bills
what it generates: usage counts the reply it sends (``n`` choices each billed), it honours the
request's ``max_tokens`` (in words) or ignores it as told, and it can report another model than
the one asked for (``serve_model``). Replies are deterministic per ``(prompt, seed)`` (``vary=True`` makes every call differ, for draw
tests); a ``[[reply:TEXT]]`` marker in the prompt makes the reply ``TEXT``, and ``reply_fn``
computes it. A ``[[reasoning:N]]`` marker spends ``N`` reasoning tokens (all of ``max_tokens``
when ``N`` reaches it: empty content, ``finish_reason: "length"``; Anthropic: a thinking block
and ``stop_reason: "max_tokens"``), and ``[[tool:NAME:{"json": "args"}]]`` markers script one
tool call per turn (:mod:`hrbench.testing._loopback_script`). Usage blocks are real: prompt tokens are the prompt's words, completion tokens
the reply's words plus ``reasoning_tokens``, cached tokens ``cached_fraction`` of the prompt;
every reply gets a fresh response id.

Faults (:data:`FAULTS`) are scripted two ways:

- a queue: ``srv.push("429", "ok", "500")`` gives the next requests those faults, in order;
- a marker in the prompt: ``[[fault:429]]`` applies to every request carrying it;
  ``[[fault:503:n=2]]`` only to the first two requests with that prompt and seed;
  options ``retry_after=S`` (seconds, for 429/503), ``date=FORM`` (send that wait as an
  HTTP-date, see :class:`Fault`) and ``hang=S`` (seconds).

The server records every request in :attr:`LoopbackServer.requests` (path, headers, body,
arrival time), so tests can check what was sent and when, and bills every reply it makes in
:attr:`LoopbackServer.bills` (response id, tokens, and USD at ``price``, as a provider's bill;
a test checks row USD after a crash against it). ``gather=N`` holds every reply until
``N`` requests are in flight at once (then lets all through), so a test of a client's
concurrency does not depend on how fast the machine sends them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

try:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - only without the dev extras
    raise ImportError(
        f"hrbench.testing._loopback needs starlette and uvicorn (pip install 'hrbench[dev]'): {exc}"
    ) from exc
from hrbench.testing._loopback_api import Api
from hrbench.testing._loopback_batch import Batches, Script
from hrbench.testing._loopback_faults import ECHO_ENCODINGS as ECHO_ENCODINGS
from hrbench.testing._loopback_faults import FAULTS, Bill, Fault, ReceivedRequest, State
from hrbench.testing._loopback_limits import Limits, Spike

__all__ = ["FAULTS", "Bill", "Fault", "LoopbackServer", "ReceivedRequest", "Script"]


_SETTINGS = frozenset(
    {
        "latency_s",
        "vary",
        "reasoning_tokens",
        "cached_fraction",
        "cache_creation_tokens",
        "api_key",
        "reply_fn",
        "omit_usage",
        "reply_words",
        "honour_max_tokens",
        "prompt_tokens",
        "serve_model",
        "price",
        "cache_write_1h_tokens",
        "same_ids",
        "gather",
        "gather_timeout_s",
        "gather_skip",
        "rate_limit",
        "token_limit",
        "enforce_limits",
        "latency_sigma",
        "latency_spike",
    }
)

_LIMIT_SETTINGS = frozenset({"rate_limit", "token_limit", "enforce_limits", "latency_spike"})
"""Settings that make the limits or the spike afresh (full buckets, a spike to come)."""


class LoopbackServer:
    """An OpenAI- and Anthropic-compatible server on 127.0.0.1 and a free port.

    Use it as a context manager (``with`` or ``async with``), or call :meth:`start` and
    :meth:`stop`.

    Args:
        latency_s: seconds every reply waits before it is sent.
        vary: make every call's reply differ (for draw tests); otherwise replies are
            deterministic per ``(prompt, seed)``.
        reasoning_tokens: reasoning tokens reported in every reply (inside completion tokens).
        cached_fraction: the fraction of prompt tokens reported as cached (0 to 1).
        cache_creation_tokens: Anthropic ``cache_creation_input_tokens`` per reply (at most the
            uncached prompt tokens).
        model: the model reported when a request names none.
        api_key: when set, requests without this key get HTTP 401.
        reply_fn: ``reply_fn(prompt, seed, call_index) -> str`` computes the reply text.
        separate_process: run the server in a child process (no shared interpreter lock, for
            benchmarks); scripted queues, ``reply_fn`` and request records are then unavailable.
        record: keep every request in :attr:`requests`.
        port: the port on 127.0.0.1 (0, the default: a free one).
        rate_limit: ``(requests per second, burst)``: a token bucket, full at first; a request
            over it gets HTTP 429 at once with ``Retry-After`` and ``retry-after-ms``, and every
            reply states the limit in its provider's headers (see
            :mod:`hrbench.testing._loopback_limits`). ``None``: no limit, no headers.
        token_limit: ``(tokens per second, burst)``: OpenAI's tokens bucket, Anthropic's input
            and output token buckets (each at this rate), stated and enforced likewise.
        enforce_limits: ``False``: the limits are stated but never refused; a request over
            them is counted in :attr:`over_limit` (what a provider would have refused).
        latency_sigma: the latency is lognormal with median ``latency_s`` and this shape
            (0: always ``latency_s``).
        latency_spike: ``(after, seconds, factor)``: from the ``after``-th request on, the
            latency is ``factor`` times as long for ``seconds``.
        seed: seeds the latency draws.

    Attributes:
        base_url: ``"http://127.0.0.1:<port>/v1"`` once started.
        requests: the requests received (when ``record``), in arrival order; a request refused
            by the rate limits has ``fault == "429"``.

    Example:
        >>> import httpx2
        >>> with LoopbackServer(rate_limit=(0.1, 2.0)) as srv:  # 2 at once, then one every 10 s
        ...     body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        ...     codes = [httpx2.post(srv.base_url + "/chat/completions", json=body).status_code for _ in range(3)]
        >>> codes, srv.rate_limited
        ([200, 200, 429], 1)
    """

    def __init__(
        self,
        latency_s: float = 0.0,
        *,
        vary: bool = False,
        reasoning_tokens: int = 0,
        cached_fraction: float = 0.0,
        cache_creation_tokens: int = 0,
        model: str = "loopback-1",
        api_key: str | None = None,
        reply_fn: Callable[[str, Any, int], str] | None = None,
        separate_process: bool = False,
        record: bool = True,
        port: int = 0,
        rate_limit: tuple[float, float] | None = None,
        token_limit: tuple[float, float] | None = None,
        enforce_limits: bool = True,
        latency_sigma: float = 0.0,
        latency_spike: tuple[int, float, float] | None = None,
        seed: int = 0,
    ) -> None:
        self._state = State(
            latency_s=float(latency_s),
            vary=vary,
            reasoning_tokens=int(reasoning_tokens),
            cached_fraction=float(cached_fraction),
            cache_creation_tokens=int(cache_creation_tokens),
            model=model,
            api_key=api_key,
            reply_fn=reply_fn,
            record=record and not separate_process,
            latency_sigma=float(latency_sigma),
            rng=random.Random(seed),
        )
        self.batches = Batches(self._state)
        """The batch APIs' script and what they received (:class:`~hrbench.testing._loopback_batch.Batches`)."""
        self._limits: dict[str, Any] = {
            "rate_limit": rate_limit,
            "token_limit": token_limit,
            "enforce_limits": enforce_limits,
            "latency_spike": latency_spike,
        }
        self._seed = int(seed)
        self._arm_limits()
        self._final: dict[str, int] = {}
        self._subprocess = separate_process
        self._port = int(port)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proc: Any = None
        self.port = 0
        self.base_url = ""

    def __repr__(self) -> str:
        return f"LoopbackServer(base_url={self.base_url!r})"

    # -- scripting --------------------------------------------------------------------------

    @property
    def requests(self) -> list[ReceivedRequest]:
        """The requests received so far, in arrival order."""
        return self._state.requests

    @property
    def rate_limited(self) -> int:
        """The 429s the rate limits sent since the last :meth:`reset`."""
        return self._counted("rate_limited", "limited")

    @property
    def over_limit(self) -> int:
        """Requests over the stated limits let through (``enforce_limits=False``) since the last :meth:`reset`."""
        return self._counted("over_limit", "over")

    def _counted(self, name: str, attribute: str) -> int:
        limits = self._state.limits
        if self._subprocess or limits is None:  # a child's counts come when it stops
            return self._final.get(name, 0)
        return int(getattr(limits, attribute))

    def stats(self) -> dict[str, int]:
        """What the server counted since the last :meth:`reset`.

        Returns:
            ``{"requests", "rate_limited", "over_limit", "max_in_flight", "during_spike"}``
            (``during_spike``: the requests that arrived during the latency spike); a server in
            a separate process reports them when it stops (empty before).
        """
        if self._subprocess:
            return dict(self._final)
        st = self._state
        counts = {"requests": st.arrivals, "rate_limited": self.rate_limited, "over_limit": self.over_limit}
        return {
            **counts,
            "max_in_flight": st.max_in_flight,
            "during_spike": st.spike.during if st.spike else 0,
        }

    def _arm_limits(self) -> None:
        """Make the limits (full buckets) and the latency spike afresh from the settings."""
        conf = self._limits
        st = self._state
        rate, tokens = conf["rate_limit"], conf["token_limit"]
        st.limits = None
        if rate is not None or tokens is not None:
            st.limits = Limits(
                None if rate is None else tuple(rate),
                None if tokens is None else tuple(tokens),
                enforce=bool(conf["enforce_limits"]),
            )
        spike = conf["latency_spike"]
        st.spike = None if spike is None else Spike(int(spike[0]), float(spike[1]), float(spike[2]))
        st.arrivals = 0

    @property
    def bills(self) -> list[Bill]:
        """What the server billed, one :class:`Bill` per reply made, in order."""
        return self._state.bills

    def push(self, *faults: str | Fault) -> None:
        """Queue faults for the next requests, in order (``"ok"`` for a normal reply)."""
        with self._state.lock:
            self._state.queue.extend(Fault.of(f) for f in faults)

    @property
    def in_flight(self) -> int:
        """The requests the server is answering now (a hang not counted)."""
        return self._state.in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests the server has handled at once since the last :meth:`reset`."""
        return self._state.max_in_flight

    def reset(self) -> None:
        """Forget queued faults, marker counts, recorded requests and bills, ``max_in_flight``; re-arm ``gather``.

        The rate limits start full again, their counts at 0, and a latency spike is to come again.
        """
        with self._state.lock:
            self._state.queue.clear()
            self._state.seen.clear()
            self._state.requests.clear()
            self._state.bills.clear()
            self._state.max_in_flight = self._state.in_flight
            self._state.gathered = None
            self._state.gather_skipped = 0
            self._arm_limits()
            self._state.rng = random.Random(self._seed)

    def set(self, **settings: Any) -> None:
        """Change settings of a running server.

        Args:
            **settings: ``latency_s``, ``vary``, ``reasoning_tokens``, ``cached_fraction``,
                ``cache_creation_tokens``, ``api_key``, ``reply_fn`` (as for the constructor),
                ``omit_usage`` (send replies without a usage block), ``reply_words`` (every
                reply is this many words, one token each; 0 for the usual one-word reply),
                ``honour_max_tokens`` (``True``: a reply stops at the request's ``max_tokens``
                words with finish reason ``length``; ``False``: the limit is ignored, as a
                server that overruns it), ``prompt_tokens`` (``"words"``, ``"bytes"`` or ``"tiktoken"``: how
                prompt tokens are billed; bytes is the most any byte-level tokenizer bills;
                ``"tiktoken"``: the model's own tokenizer where hrbench ships it, else bytes),
                ``serve_model`` (report this model whatever was asked), ``price`` (``(input,
                output)`` USD per million tokens that :attr:`bills` charges, every prompt token
                at ``input``; or a table ``{"input", "output", "cached_input",
                "cache_write_5m", "cache_write_1h"}`` that bills cache reads and writes at their
                rates, each ``input`` when left out), ``cache_write_1h_tokens`` (Anthropic: of
                the ``cache_creation_tokens``, this many are 1-hour writes, reported in the
                ``cache_creation`` block), ``same_ids`` (every reply to one
                prompt carries the same response id, as a provider that does not give distinct
                draws), ``gather`` (hold replies
                until this many requests are in flight at once; 0 for no holding; setting it
                re-arms the latch), ``gather_timeout_s`` (how long a held reply waits for
                the others before the latch gives up and opens; seconds), ``gather_skip``
                (the first this many requests are not held: a governor's slow start, or a
                client's pace before the first reply, sends one request alone), and
                ``rate_limit``, ``token_limit``, ``enforce_limits``, ``latency_sigma`` and
                ``latency_spike`` as for the constructor (setting one fills the buckets and
                re-arms the spike).

        Raises:
            TypeError: for an unknown setting.
        """
        for name, value in settings.items():
            if name not in _SETTINGS:
                raise TypeError(f"unknown setting {name!r}")
            if name in _LIMIT_SETTINGS:
                self._limits[name] = value
                self._arm_limits()
                continue
            setattr(self._state, name, value)
            if name == "gather":
                self._state.gathered = None
                self._state.gather_skipped = 0

    # -- lifecycle --------------------------------------------------------------------------

    def app(self) -> Starlette:
        """The ASGI application."""
        return Starlette(
            routes=[
                Route("/v1/chat/completions", Api(self._state, "openai"), methods=["POST"]),
                Route("/v1/messages", Api(self._state, "anthropic"), methods=["POST"]),
                *self.batches.routes(),
            ]
        )

    def start(self, timeout_s: float = 20.0) -> LoopbackServer:
        """Start serving; return once the server accepts connections.

        Args:
            timeout_s: how long to wait for the server to come up (seconds).

        Returns:
            ``self``.

        Raises:
            RuntimeError: when the server did not start in time.
        """
        if self._subprocess:
            return self._start_subprocess(timeout_s)
        # proto IPPROTO_TCP, so that asyncio sets TCP_NODELAY on accepted connections (with proto
        # 0 it does not, and Nagle plus delayed ACKs add ~40 ms to every reply)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self._port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app(),
            log_config=None,
            log_level="critical",
            access_log=False,
            lifespan="off",
            loop="asyncio",
            http="auto",  # httptools when installed (about twice the throughput), else h11
            timeout_keep_alive=30,
            timeout_graceful_shutdown=1,
            backlog=4096,
        )
        self._server = server = uvicorn.Server(config)

        def run() -> None:
            async def serve() -> None:
                self._loop = asyncio.get_running_loop()
                self._state.stopping = asyncio.Event()
                await server.serve(sockets=[sock])

            asyncio.run(serve())
            sock.close()

        self._thread = threading.Thread(target=run, name=f"loopback-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the loopback server did not start")
            time.sleep(0.005)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        return self

    def _start_subprocess(self, timeout_s: float) -> LoopbackServer:
        st = self._state
        args = [
            sys.executable,
            "-m",
            "hrbench.testing._loopback",
            f"--latency-s={st.latency_s}",
            f"--reasoning-tokens={st.reasoning_tokens}",
            f"--cached-fraction={st.cached_fraction}",
            f"--model={st.model}",
            f"--port={self._port}",
        ]
        if st.vary:
            args.append("--vary")
        args += [f"--latency-sigma={st.latency_sigma}", f"--seed={self._seed}"]
        conf = self._limits
        if conf["rate_limit"] is not None:
            args.append("--rate-limit={}:{}".format(*conf["rate_limit"]))
        if conf["token_limit"] is not None:
            args.append("--token-limit={}:{}".format(*conf["token_limit"]))
        if conf["latency_spike"] is not None:
            args.append("--latency-spike={}:{}:{}".format(*conf["latency_spike"]))
        if not conf["enforce_limits"]:
            args.append("--no-enforce-limits")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [_package_root(), env.get("PYTHONPATH", "")] if p)
        self._proc = subprocess.Popen(args, stdout=subprocess.PIPE, stdin=subprocess.PIPE, env=env, text=True)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()  # "PORT <n>" once listening
        if not line.startswith("PORT "):
            self._proc.kill()
            self._proc.wait(timeout=timeout_s)
            raise RuntimeError(f"the loopback server did not start: {line!r}")
        self.port = int(line.split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        return self

    def stop(self) -> None:
        """Stop serving: cut hanging replies short and wait for the server to exit."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            with contextlib.suppress(Exception):
                proc.stdin.close()  # the child exits when its stdin closes
            try:
                proc.wait(timeout=10)
            except Exception:
                proc.kill()
                proc.wait(timeout=10)
            for line in proc.stdout.read().splitlines():  # the child's counts, its last words
                if line.startswith("STATS "):
                    self._final = {k: int(v) for k, v in json.loads(line[6:]).items()}
            proc.stdout.close()
            return
        server, thread, loop = self._server, self._thread, self._loop
        if server is None or thread is None:
            return
        server.should_exit = True
        stopping = self._state.stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop may be gone already
                loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout=15)
        self._server = self._thread = self._loop = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> LoopbackServer:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(self, *exc: object) -> None:
        import anyio.to_thread

        await anyio.to_thread.run_sync(self.stop)


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _main(argv: list[str] | None = None) -> None:
    """Serve in this process until stdin closes (or, with ``--forever``, until interrupted).

    Prints ``PORT <n>`` once listening. ``--port`` picks the port (default: a free one), so the
    server can stand in for a local OpenAI-compatible server at a known address:
    ``python -m hrbench.testing --port 8000 --forever &``.
    """
    import argparse
    import signal

    parser = argparse.ArgumentParser(
        prog="python -m hrbench.testing",
        description="A local OpenAI- and Anthropic-compatible test server on 127.0.0.1. It replies "
        "with the text of a [[reply:TEXT]] marker in the prompt, else with reply-<hash of the prompt>.",
    )
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: a free one)")
    parser.add_argument(
        "--forever",
        action="store_true",
        help="serve until interrupted (default: until standard input closes)",
    )
    parser.add_argument("--latency-s", type=float, default=0.0)
    parser.add_argument("--reasoning-tokens", type=int, default=0)
    parser.add_argument("--cached-fraction", type=float, default=0.0)
    parser.add_argument("--model", default="loopback-1")
    parser.add_argument("--vary", action="store_true")
    parser.add_argument("--latency-sigma", type=float, default=0.0, help="lognormal shape of the latency")
    parser.add_argument("--latency-spike", type=_floats(3), help="AFTER:SECONDS:FACTOR")
    parser.add_argument("--rate-limit", type=_floats(2), help="REQUESTS_PER_S:BURST")
    parser.add_argument("--token-limit", type=_floats(2), help="TOKENS_PER_S:BURST")
    parser.add_argument("--no-enforce-limits", action="store_true", help="state the limits, never refuse")
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args(argv)
    spike = ns.latency_spike
    srv = LoopbackServer(
        ns.latency_s,
        vary=ns.vary,
        reasoning_tokens=ns.reasoning_tokens,
        cached_fraction=ns.cached_fraction,
        model=ns.model,
        record=False,
        port=ns.port,
        rate_limit=ns.rate_limit,
        token_limit=ns.token_limit,
        enforce_limits=not ns.no_enforce_limits,
        latency_sigma=ns.latency_sigma,
        latency_spike=None if spike is None else (int(spike[0]), spike[1], spike[2]),
        seed=ns.seed,
    )
    if ns.forever:  # before PORT is printed: a stop may follow it at once
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with srv:
        print(f"PORT {srv.port}", flush=True)
        if ns.forever:  # a shell's background job has no stdin to wait on
            with contextlib.suppress(KeyboardInterrupt):
                threading.Event().wait()
        else:
            sys.stdin.read()  # until the parent closes our stdin (or dies)
    print("STATS " + json.dumps(srv.stats()), flush=True)


def _floats(n: int) -> Callable[[str], tuple[float, ...]]:
    """An argparse type: ``n`` numbers joined by ``:``."""
    import argparse

    def parse(text: str) -> tuple[float, ...]:
        parts = text.split(":")
        try:
            values = tuple(float(p) for p in parts)
        except ValueError:
            values = ()
        if len(values) != n:
            raise argparse.ArgumentTypeError(f"expected {n} numbers joined by ':', got {text!r}")
        return values

    return parse


if __name__ == "__main__":
    _main()
