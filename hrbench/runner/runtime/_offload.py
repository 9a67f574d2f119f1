"""Which scoring leaves the event loop for a worker thread, and how many such threads there are.

A heavy scorer, or a long reply or label, is scored off the loop.
"""

from __future__ import annotations

import os
from typing import Any

from hrbench.records import Result
from hrbench.scoring import output_text

__all__ = ["INLINE_CHARS", "heavy_scorer_threads", "off_loop", "offloaded"]


INLINE_CHARS = 2000
"""The most text (characters of the reply and the label) a scorer is called with on the event loop.

The built-in scorers take one to three microseconds a character (NFKC folding, number reading):
2,000 characters take a few milliseconds at worst, and a hand-off to a worker thread costs about
a tenth of a millisecond, more than scoring a short reply. Past this, the thread is the cheaper
of the two for the daemon's other clients."""


def offloaded(scorer: Any) -> bool:
    """Whether ``scorer`` declares itself heavy: ``offload = True`` (the pattern scorer does).

    Example:
        >>> from hrbench.scoring import exact_scorer
        >>> offloaded(exact_scorer())
        False
    """
    return getattr(scorer, "offload", False) is True


def off_loop(scorer: Any, output: Any, label: Any = None) -> bool:
    """Whether scoring ``output`` against ``label`` runs in a worker thread, off the event loop.

    Rule (case S12a): a scorer that may take long on one reply declares it
    (:func:`offloaded`: the pattern scorer, whose pattern may backtrack up to its time limit),
    and a long reply or label (over :data:`INLINE_CHARS` characters) is scored there too; the
    runner and the daemon's ``score`` then call the scorer in a worker thread, so the event loop
    goes on serving (other runs' requests, the daemon's other clients). A short reply with a
    scorer that does not declare itself heavy is scored inline: a thread hop per row would cost
    more than the scorer (the runner's rows/s). A scorer of one's own that may be slow says so by
    the attribute (``my_scorer.offload = True``).

    Example:
        >>> from hrbench.scoring import exact_scorer
        >>> off_loop(exact_scorer(), "Paris", "Paris"), off_loop(exact_scorer(), "Paris " * 400, "Paris")
        (False, True)
        >>> off_loop(exact_scorer(), Result(ok=False, error="openai: HTTP 500"), "Paris")
        False
    """
    if (
        getattr(scorer, "offload", False) is True
    ):  # offloaded(scorer), without the call: this runs for every row
        return True
    if type(output) is str:
        n = len(output)
    elif type(output) is Result:  # its stored text (a failed reply's .text raises)
        n = len(output.raw_text or "")
    else:
        try:
            n = len(output_text(output) or "")
        except Exception:  # an output whose text cannot be read: scored where a scorer's fault is safe
            return True
    if type(label) is str:
        return n + len(label) > INLINE_CHARS
    if isinstance(label, (list, tuple)):
        for answer in label:
            n += len(answer) if type(answer) is str else 16
            if n > INLINE_CHARS:
                return True
    return n > INLINE_CHARS


def heavy_scorer_threads() -> int:
    """How many heavy scorers (:func:`offloaded`) one benchmark, or the daemon's ``score``, runs at once.

    A core is left for the event loop: a pattern scorer matches without the GIL, so each of them
    may keep a core busy until its time limit.
    """
    return max(1, (os.cpu_count() or 1) - 1)
