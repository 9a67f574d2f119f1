"""Arms (the seed's ``hr_arm``) and the run context ``ctx`` an arm receives."""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import inspect
import itertools
import random
from collections.abc import Awaitable, Callable, Collection, Coroutine
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import anyio
import anyio.from_thread
import msgspec

from hrbench._util.fingerprint import fingerprint
from hrbench.errors import ConfigError
from hrbench.models import REASONING_SETTINGS, check_reasoning, normalise_messages, reasoning_params
from hrbench.records import Request, Result, Step
from hrbench.tools import tool_definitions

__all__ = ["Arm", "Context", "RunInfo", "Sender", "current_run", "drive", "sweep"]


class Sender(Protocol):
    """What a run context needs of the runtime that sends its requests.

    The runner's :class:`hrbench.runner.runtime.Runtime` is one; the context knows it by these
    names alone, so this module imports nothing of the runner.
    """

    inline: bool
    """Whether the client answers without suspending (a sync arm's call is driven in place)."""
    wire: Callable[[Request], dict[str, Any] | None] | None
    """The client's request as sent, for the cache key (``None``: keyed on the request)."""
    governor: Any
    """The benchmark's governor."""

    def call(self, ctx: Context, request: Request, inline: bool = False) -> Awaitable[Result]:
        """Send one request of a run (cache, governor, client, recorder, trace)."""
        ...


def drive(coro: Any) -> Any:
    """Run a coroutine that never suspends to completion, without an event loop.

    Raises:
        RuntimeError: when the coroutine suspends (it is closed first).

    Example:
        >>> async def two():
        ...     return 2
        >>> drive(two())
        2
    """
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("an inline request suspended; its client must not set `inline = True`")


class RunInfo(NamedTuple):
    """Which run is making a request: arm name, item id, run number (immutable).

    A named tuple: the runner makes one per run, and a tuple is made several times faster than
    a frozen dataclass.
    """

    arm: str
    item: str
    run: int


current_run: contextvars.ContextVar[RunInfo | None] = contextvars.ContextVar(
    "hrbench_current_run", default=None
)
"""The run being executed; a replay client reads it to answer each arm with its own replies."""


class Arm:
    """A named way of answering an item (the seed's ``hr_arm``).

    Args:
        name: a non-empty name, unique within a benchmark.
        fn: ``fn(item, ctx)``, sync or ``async def``; returns the output the scorer reads (a
            string, a :class:`~hrbench.records.Result`, an :class:`~hrbench.records.Answer`,
            or a dict with ``text``/``answer``).
        version: the arm's version, recorded with the benchmark and part of its hash (a
            resume refuses a changed arm). Not part of the cache key (SPEC section 6: the
            request as sent, the arm's name, the draw index): a
            version bump whose requests are the same is served the cached replies.
        derived_from: the name of the arm this one was derived from, if any.
        settings: settings that change the arm's behaviour; part of its hash. The reasoning
            settings among them (``reasoning_effort``, ``thinking_budget``:
            :mod:`hrbench.models._reasoning`) are sent with every request the arm's runs make
            through ``ctx.call``; :func:`sweep` makes one arm per value.

    Attributes:
        hash: sha256 hex over the function's code, constants, closure, defaults, the version
            and the settings: it changes when the arm's behaviour may change.
        output_is_reply: ``True`` for an arm whose function returns the model's reply (a prompt
            arm, :func:`hrbench.specs.build_arm`): its output is the reply's text, which a
            scorer of one's own receives; the reply itself reaches only the scorers that read
            replies (:attr:`~hrbench.scoring.Scorer.reads_reply`: the built-in ones, for
            its finish reason and refusal). ``False`` (the default): the output is what the
            function returned. Not part of the hash.
        check: ``None``, or ``check(items, client, known, runs)``, which :func:`hrbench.runner._benchmark`
            calls with the items it will run (id -> payload, in order), its client, the item
            ids an output may name (the reference's, or its source's) and the runs per item
            before the first run, so that a spec error is refused
            once, not found in every run (a prompt arm's template,
            :func:`hrbench.specs.build_arm`; an outputs arm's ids,
            :func:`hrbench.reading.check_outputs`). It raises
            :class:`~hrbench.errors.ConfigError`. Not part of the hash.

    Raises:
        ConfigError: an empty name, a non-callable ``fn``, or a reasoning setting out of range.

    Example:
        >>> ask = Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text)
        >>> ask.name, len(ask.hash)
        ('ask', 64)
    """

    def __init__(
        self,
        name: str,
        fn: Callable[[Any, Context], Any],
        version: str = "1",
        derived_from: str | None = None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ConfigError("name", name, "an arm needs a non-empty name")
        if not callable(fn):
            raise ConfigError("fn", fn, f"arm {name!r} needs a callable fn(item, ctx)")
        self.name = name
        self.fn = fn
        self.version = str(version)
        self.derived_from = derived_from
        self.settings = dict(settings or {})
        self.reasoning: dict[str, Any] | None = check_reasoning(self.settings) or None
        """The arm's reasoning settings (``reasoning_effort``, ``thinking_budget``), sent with
        every request of its runs (:mod:`hrbench.models._reasoning`), or ``None``."""
        self.check: Callable[[dict[str, Any], Any, Collection[str], int], None] | None = None
        self.output_is_reply = False
        call = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)
        body = msgspec.json.encode(
            {"fn": fingerprint(fn), "version": self.version, "settings": fingerprint(self.settings)},
            order="sorted",
        )
        self.hash = hashlib.sha256(body).hexdigest()

    def __repr__(self) -> str:
        return f"Arm({self.name!r}, version={self.version!r}, hash={self.hash[:12]})"

    @property
    def spec(self) -> dict[str, Any]:
        """The arm's record: name, version, hash, derived_from, settings."""
        return {
            "name": self.name,
            "version": self.version,
            "hash": self.hash,
            "derived_from": self.derived_from,
            "settings": self.settings,
        }


_DEFAULT: Any = object()


@dataclass
class Context:
    """What an arm receives as ``ctx`` for one run.

    Attributes:
        arm: the arm's name.
        item_id: the item's id.
        run: the run number, from 1.
        draw_index: the run's draw index (its run number): every request carries it by default,
            so each run is its own entry in a cache and its own draw in a recording.
        rng: a private ``random.Random`` seeded from (seed, arm, item, run): reproducible under
            any concurrency; the global random state is never touched.
        client: the benchmark's model client, or ``None``.
        trace: the run's steps, in order.
        notes: limit notes gathered by the run (``"cost_cap_reached"``, ...).
        ledger_id: the run's id; every step carries it.
        reasoning: the arm's reasoning settings (``reasoning_effort``, ``thinking_budget``:
            :mod:`hrbench.models._reasoning`), sent with every request of the run in the
            provider's fields, or ``None``.
        budget: the run's own budget under per-run caps (``max_calls_per_run``,
            ``max_usd_per_run``, ``max_tokens_per_run``), made by the runtime at the run's
            first request, or ``None``.
    """

    arm: str
    item_id: str
    run: int
    draw_index: int
    seed: int
    client: Any
    ledger_id: str
    runtime: Sender | None = None
    _rng: random.Random | None = None
    trace: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reasoning: dict[str, Any] | None = None
    budget: Any = None

    @property
    def rng(self) -> random.Random:
        """The run's private random stream, made on first use."""
        if self._rng is None:
            self._rng = make_rng(self.seed, self.arm, self.item_id, self.run)
        return self._rng

    @property
    def governor(self) -> Any:
        """The benchmark's governor."""
        return None if self.runtime is None else self.runtime.governor

    def call(self, prompt: str | list[dict[str, Any]] | dict[str, Any], **params: Any) -> Result:
        """Send a request from a sync arm and wait for the reply.

        Args:
            prompt: a string (one user message) or chat messages.
            **params: ``model=...`` to override the client's model, ``draw_index=...`` to
                override the run's draw index (``None`` leaves it out), ``tools=...`` the tools
                the model may call (definitions in OpenAI's or Anthropic's form, or Python
                functions: :func:`hrbench.tools.tool_definitions`; the reply's
                ``tool_calls`` lists the calls it asks for), and sampling parameters
                (``temperature``, ``max_tokens``, ``seed``, ...) sent as they are. The arm's
                reasoning settings (:attr:`reasoning`) are added in the provider's fields.

        Returns:
            The reply as a :class:`~hrbench.records.Result`. When the call failed for good
            (after retries) its ``ok`` is false and reading its ``.text`` raises
            :class:`~hrbench.errors.ModelError`, so the run ends as ``"error"`` with that cause;
            ``raw_text`` reads it without raising.

        Raises:
            BudgetRefused: when the governor refuses the request (the run then ends as
                ``budget_stop`` unless the arm catches it).
            DuplicateDrawError: when the reply repeats an earlier run's draw.
            ConfigError: when the benchmark has no client, or ``call`` is used inside an
                ``async def`` arm (use ``await ctx.acall(...)`` there).
        """
        if asyncio._get_running_loop() is not None:  # None in a worker thread, as it should be
            raise ConfigError(
                "ctx.call", prompt, "ctx.call is for sync arms; use `await ctx.acall(...)` in an async arm"
            )
        if self.runtime is not None and self.runtime.inline:
            return drive(self._acall(prompt, params, inline=True))  # type: ignore[no-any-return]
        return anyio.from_thread.run(lambda: self.acall(prompt, **params))

    def acall(
        self, prompt: str | list[dict[str, Any]] | dict[str, Any], **params: Any
    ) -> Coroutine[Any, Any, Result]:
        """Send a request from an async arm; the async twin of :meth:`call` (same arguments).

        Returns the coroutine to await (``await ctx.acall(...)``): a plain method handing on
        :meth:`_acall`'s coroutine, one frame less for every request than an ``async def``.
        """
        return self._acall(prompt, params)

    async def _acall(
        self,
        prompt: str | list[dict[str, Any]] | dict[str, Any],
        params: dict[str, Any],
        inline: bool = False,
    ) -> Result:
        if self.client is None or self.runtime is None:
            raise ConfigError(
                "client", None, f"arm {self.arm!r} called a model but the benchmark has no client"
            )
        client = self.client
        if params:
            model = params.pop("model", None) or client.model
            draw = params.pop("draw_index", _DEFAULT)
            tools = params.pop("tools", None)
        else:  # ctx.call(prompt), the common call: nothing to take out
            model, draw, tools = client.model, _DEFAULT, None
        if self.reasoning:
            params = reasoning_params(self.reasoning, client.provider, params)
        request = Request(
            messages=normalise_messages(prompt),
            params=params,
            tools=None if tools is None else tool_definitions(tools),
            model=model,
            provider=client.provider,
            base_url=client.base_url,
            draw_index=self.draw_index if draw is _DEFAULT else draw,
        )
        if (wire := self.runtime.wire) is not None:  # keyed as sent (the runtime would copy it to add this)
            request.wire = wire(request)
        return await self.runtime.call(self, request, inline)

    def step_error(self, message: str) -> None:
        """Add an error step to the trace."""
        self.trace.append(Step(ledger_id=self.ledger_id, kind="error", source="arm", error=message))


def make_rng(seed: int, arm: str, item: str, run: int) -> random.Random:
    """The private random stream of one run, from (seed, arm, item, run)."""
    digest = hashlib.sha256(f"{seed}|{arm}|{item}|{run}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sweep(arm: Arm, **axes: Collection[Any]) -> list[Arm]:
    """One arm per combination of reasoning settings: an effort or thinking-budget sweep.

    Each arm made runs ``arm``'s function with the combination's settings added (sent with
    every request: :mod:`hrbench.models._reasoning`), is named ``"{arm.name}-{value}"`` (a value
    per axis, in the order given: ``"solve-low"``, ``"solve-low-2048"``) and records
    ``derived_from=arm.name``. Its hash covers the settings, so a resume refuses a changed sweep.

    Args:
        arm: the arm to sweep.
        **axes: ``reasoning_effort=[...]`` and/or ``thinking_budget=[...]``: the values of each.

    Returns:
        The arms, the first axis varying slowest.

    Raises:
        ConfigError: no axis, an axis that is not a reasoning setting, an empty or repeated
            list of values, or a value out of range (:func:`~hrbench.models.check_reasoning`).

    Example:
        >>> arms = sweep(Arm("solve", lambda item, ctx: ""), reasoning_effort=["low", "high"])
        >>> [(a.name, a.reasoning, a.derived_from) for a in arms]
        [('solve-low', {'reasoning_effort': 'low'}, 'solve'), ('solve-high', {'reasoning_effort': 'high'}, 'solve')]
    """
    if not axes:
        raise ConfigError("sweep", axes, f"give the values of one of {', '.join(REASONING_SETTINGS)}")
    values: list[list[Any]] = []
    for key, vals in axes.items():
        if key not in REASONING_SETTINGS:
            raise ConfigError(f"sweep.{key}", vals, f"a sweep runs over {', '.join(REASONING_SETTINGS)}")
        if isinstance(vals, (str, bytes)) or not isinstance(vals, Collection) or not vals:
            raise ConfigError(f"sweep.{key}", vals, "expected a non-empty list of values")
        listed = list(vals)
        if len({repr(v) for v in listed}) != len(listed):
            raise ConfigError(f"sweep.{key}", vals, "a value is given twice")
        for v in listed:
            check_reasoning({key: v}, where="sweep.")
        values.append(listed)
    out = []
    for combo in itertools.product(*values):
        extra = dict(zip(axes, combo, strict=True))
        name = "-".join([arm.name, *(str(v) for v in combo)])
        made = Arm(
            name, arm.fn, version=arm.version, derived_from=arm.name, settings={**arm.settings, **extra}
        )
        made.check = arm.check
        out.append(made)
    return out
