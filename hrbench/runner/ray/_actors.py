"""The cluster's two actors.

The benchmark's one governor, and the hub that carries rows, cache and recording traffic to the
driver.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from hrbench.errors import BudgetRefused
from hrbench.runner._reservation import Reservation


class GovernorActor:
    """The benchmark's governor, one for the cluster: an :class:`~hrbench.Governor` in an actor."""

    def __init__(self, limits: dict[str, Any], used: tuple[int, float, int, int]) -> None:
        # numbers are never reused, so a late settlement of an earlier run cannot hit a new
        # reservation; next() on a count is atomic, so the actor's threads share it safely
        self.numbers = itertools.count(1)
        self.reset(limits, used)

    def reset(self, limits: dict[str, Any], used: tuple[int, float, int, int]) -> None:
        from hrbench.runner._governor import Governor

        self.gov = Governor(**limits)
        self.gov.calls, self.gov.usd, self.gov.tokens, self.gov.refused = used
        self.open: dict[int, Reservation] = {}

    def reserve(self, usd: float, tokens: int) -> int | tuple[str, str]:
        """A reservation's number, or ``(limit, message)`` when refused."""
        try:
            r = self.gov.reserve(usd, tokens)
        except BudgetRefused as exc:
            return (exc.limit, str(exc))
        number = next(self.numbers)
        self.open[number] = r
        return number

    def settle(self, number: int, usd: float | None, tokens: int, sent: bool = True) -> None:
        r = self.open.pop(number, None)
        if r is not None:
            self.gov.settle(r, usd, tokens, sent=sent)

    def halt(self, reason: str) -> None:
        self.gov.halt(reason)

    def first_bill(self, key: tuple[str, str]) -> str:
        """The cluster's one slow start (:meth:`hrbench.Governor.first_bill`), or ``"halted"``."""
        if self.gov.halted is not None:
            return "halted"
        return self.gov.first_bill((key[0], key[1]))

    def bill_seen(self, key: tuple[str, str], confirmed: bool) -> None:
        self.gov.bill_seen((key[0], key[1]), confirmed)

    def use(self) -> dict[str, Any]:
        g = self.gov
        return {
            "calls": g.calls,
            "usd": g.usd,
            "tokens": g.tokens,
            "refused": g.refused,
            "halted": g.halted,
            "open": len(self.open),
        }


class Hub:
    """The driver's post box: rows, cache and recording traffic from workers, in order.

    Workers ``tell`` (rows, cache writes, recordings) and ``ask`` (cache reads, answered by the
    driver); the driver ``take``s everything in arrival order and ``answer``s the asks. The hub
    remembers which runs reached it, so a retried batch makes only the others (``todo``).
    """

    def __init__(self) -> None:
        self.n = 0
        self.wake = asyncio.Event()
        self.events: list[tuple[Any, ...]] = []
        self.futures: dict[int, asyncio.Future[Any]] = {}
        self.delivered: set[int] = set()

    async def reset(self) -> None:
        self.events, self.futures, self.delivered = [], {}, set()
        self.wake.clear()

    def _push(self, event: tuple[Any, ...]) -> None:
        self.events.append(event)
        self.wake.set()

    async def todo(self, seqs: list[int]) -> list[int]:
        return [s for s in seqs if s not in self.delivered]

    async def tell(self, events: list[tuple[Any, ...]]) -> None:
        for e in events:
            if e[0] == "row":
                if e[1] in self.delivered:
                    continue  # a retried batch's run that already came in
                self.delivered.add(e[1])
            self._push(e)

    async def ask(self, *args: Any) -> Any:
        self.n += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.futures[self.n] = fut
        self._push(("get", self.n, *args))
        return await fut

    async def take(self, wait_s: float) -> list[tuple[Any, ...]]:
        if not self.events:
            try:
                await asyncio.wait_for(self.wake.wait(), wait_s)
            except TimeoutError:
                pass
        out, self.events = self.events, []
        self.wake.clear()
        return out

    async def answer(self, answers: dict[int, Any]) -> None:
        for n, value in answers.items():
            fut = self.futures.pop(n, None)
            if fut is not None and not fut.done():
                fut.set_result(value)
