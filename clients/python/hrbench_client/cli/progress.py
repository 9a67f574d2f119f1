"""``hrb bench``'s progress on stderr: a bar on a terminal, a plain line every few seconds elsewhere.

On a terminal, one line redrawn in place: ``bench [####......] 120/400 rows  12.0 rows/s  ETA
23s  $0.0123 of $2.00``. On anything else (a file, a pipe, a CI log), a plain line every
:data:`PLAIN_EVERY_S` seconds while rows are scored, and one at the end (none for a benchmark
done sooner): ``hrb: bench 120/400 rows  12.0 rows/s  ETA 23s  $0.0123 of $2.00``. Either way a line ``hrb: waiting: no row for 10 s
(...)`` when no row was scored for 10 s (rows streamed, or counted by the daemon's progress
with ``--no-rows``). The guide is ``docs/guides/shell.md``.
"""

from __future__ import annotations

import math
import sys
import time

from hrbench_client.cli._common import usd_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PLAIN_EVERY_S", "progress_line", "usd_text"]

PLAIN_EVERY_S = 5.0
"""How often the plain progress line is printed when stderr is not a terminal (seconds)."""


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    return (
        f"{s // 3600}h{s % 3600 // 60:02d}m"
        if s >= 3600
        else f"{s // 60}m{s % 60:02d}s"
        if s >= 60
        else f"{s}s"
    )


def progress_line(
    label: str,
    done: int,
    total: int,
    rate: float | None,
    usd: float | None = None,
    max_usd: float | None = None,
    width: int = 30,
    usd_known: bool = True,
) -> str:
    """One line of ``hrb bench``'s progress bar: rows done, rate, ETA, spend against the cap.

    Args:
        label: what runs (``bench``).
        done: rows scored so far (resumed rows included).
        total: rows the benchmark will have.
        rate: rows per second over this session; ``None`` (or 0) before it is known: the rate
            and ETA are left out.
        usd: USD spent so far; ``None`` leaves spend out.
        max_usd: the USD cap; ``None``: spend is shown alone.
        width: the bar's width in characters; 0 leaves the bar out (the plain line).
        usd_known: ``False`` when a model has no price: spend is shown ``$NA`` (seed 002), never
            as the 0 its runs were counted at.

    Returns:
        The line, without a carriage return.

    Example:
        >>> progress_line("bench", 50, 200, 25.0, 0.1234, 2.0, width=10)
        'bench [##........] 50/200 rows  25.0 rows/s  ETA 6s  $0.1234 of $2.00'
        >>> progress_line("bench", 0, 0, None, width=4)
        'bench [####] 0/0 rows'
        >>> progress_line("bench", 50, 200, 25.0, 0.1234, 2.0, width=0)
        'bench 50/200 rows  25.0 rows/s  ETA 6s  $0.1234 of $2.00'
        >>> progress_line("bench", 50, 200, None, 0.0, None, width=0, usd_known=False)
        'bench 50/200 rows  $NA'
    """
    filled = min(width, int(width * done / total)) if total else width
    bar = f"[{'#' * filled}{'.' * (width - filled)}] " if width else ""
    parts = [f"{label} {bar}{done}/{total} rows"]
    if rate:
        parts.append(f"{rate:.1f} rows/s")
        if done < total:
            parts.append(f"ETA {_duration((total - done) / rate)}")
    if usd is not None:
        spent = usd_text(usd) if usd_known else "NA"
        parts.append(f"${spent}" + ("" if max_usd is None else f" of ${max_usd:.2f}"))
    return "  ".join(parts)


class _Progress:
    """``hrb bench``'s progress on stderr: a bar redrawn on a terminal, else a plain line every few seconds.

    ``stream`` (set once the benchmark is sent) supplies the spend and the cap. :attr:`moved` is
    when the rows done last grew (monotonic seconds), which :class:`_Waiting` reads: with
    ``--no-rows`` no row comes, but the daemon's progress says rows are scored.
    """

    def __init__(self, label: str, plain_every: float = PLAIN_EVERY_S, on: bool | None = None) -> None:
        self.label = label
        self.on = sys.stderr.isatty() if on is None else on
        self.plain_every = plain_every
        self.last = 0.0
        self.stream: Any = None
        self.start: tuple[float, int] | None = None
        self.moved = -math.inf
        self.seen: int | None = None  # the rows done at the last progress
        self.printed: tuple[float, int] | None = None  # when the last plain line was, and its rows

    def __call__(self, done: int, total: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if self.start is None:
            self.start = (now, done)  # resumed rows do not count towards the rate
        if done != self.seen:
            self.seen, self.moved = done, now
        line = self.line_at(now, done, total)
        if line is None:
            return
        if self.on:
            sys.stderr.write(f"\r{line}\x1b[K")
            sys.stderr.flush()
        else:
            print(f"hrb: {line}", file=sys.stderr, flush=True)

    def line_at(self, now: float, done: int, total: int) -> str | None:
        """The line to draw at ``now`` (monotonic seconds), or ``None`` when not due; a line drawn is remembered.

        On a terminal the bar at most every 0.1 s. Else a plain line every :attr:`plain_every`
        seconds while rows grow, and one when all are done if a line was printed before: a
        benchmark done within :attr:`plain_every` seconds prints none (a quick one stays quiet).

        Example:
            >>> p = _Progress("bench", plain_every=5.0, on=False)
            >>> p.start = (0.0, 0)
            >>> [(t, p.line_at(t, d, 40)) for t, d in [(0.0, 0), (2.0, 8), (5.0, 20), (6.0, 24), (8.0, 40)]]
            ... # doctest: +NORMALIZE_WHITESPACE
            [(0.0, None), (2.0, None), (5.0, 'bench 20/40 rows  4.0 rows/s  ETA 5s'),
             (6.0, None), (8.0, 'bench 40/40 rows  5.0 rows/s')]
            >>> quick = _Progress("bench", plain_every=5.0, on=False)
            >>> quick.start = (0.0, 0)
            >>> quick.line_at(3.0, 40, 40) is None
            True
        """
        if self.on:
            if now - self.last < 0.1 and done < total:
                return None
            self.last = now
        else:
            assert self.start is not None
            last = self.printed or self.start
            finished = done >= total and self.printed is not None and last[1] < done
            if not finished and (now - last[0] < self.plain_every or done == last[1]):
                return None
            self.printed = (now, done)
        assert self.start is not None
        t0, d0 = self.start
        rate = (done - d0) / (now - t0) if now > t0 and done > d0 else None
        note = getattr(self.stream, "progress", None)
        usd = None if note is None else note.usd
        max_usd = None if note is None else note.max_usd
        known = True if note is None else note.usd_known
        line = progress_line(self.label, done, total, rate, usd, max_usd, 30 if self.on else 0, known)
        if note is not None and note.batches:
            from hrbench_client.cli.batches import batches_note

            line += f"  {batches_note(note.batches)}"
        return line

    def end(self) -> None:
        if self.on:
            sys.stderr.write("\n")


class _Waiting:
    """A plain line on stderr when no row was scored for ``every`` seconds.

    A benchmark whose endpoint never answers must not leave ``hrb bench`` silent for minutes. A
    thread prints, a terminal or not, at most one line per ``every`` seconds while no row is
    scored: ``hrb: waiting: no row for 10 s (3 of 40 runs done; benchmark ID)``, then ``... for
    20 s``, ``... for 30 s``: the time since the last row, not since the last line. A row counts
    when it arrives, or when the daemon's progress says more rows are done (``--no-rows`` sends
    none). A terminal's progress bar is redrawn after it.
    """

    def __init__(self, progress: _Progress, every: float = 10.0) -> None:
        import threading
        import time

        self.progress = progress
        self.every = every
        self.last_row = self.said = time.monotonic()
        self.stop = threading.Event()
        self.done: tuple[int, int] | None = None
        self.thread = threading.Thread(target=self._run, name="hrb-waiting", daemon=True)

    def __enter__(self) -> _Waiting:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=1.0)

    def row(self, now: float | None = None) -> None:
        """A row arrived (at ``now``, :func:`time.monotonic` seconds; now by default)."""
        import time

        self.last_row = self.said = time.monotonic() if now is None else now

    def line_at(self, now: float) -> str | None:
        """The line to print at ``now`` (monotonic seconds), or ``None``; a line printed is remembered.

        Quiet time counts from the last row, or the last progress that said more rows were done
        (``--no-rows``: rows are scored, none is sent).

        Example:
            >>> w = _Waiting(_Progress("bench"))
            >>> w.row(now=0.0)
            >>> [w.line_at(t) is not None for t in (9.0, 10.0, 15.0, 20.0)]
            [False, True, False, True]
            >>> w.progress.moved = 24.0  # the daemon's progress: rows were scored
            >>> [w.line_at(t) is not None for t in (30.0, 33.0, 34.0)]
            [False, False, True]
        """
        last = max(self.last_row, self.progress.moved)
        quiet = now - last
        if quiet < self.every or now - max(self.said, last) < self.every:
            return None
        self.said = now  # at most one line per `every` seconds
        note = getattr(self.progress.stream, "progress", None)
        done = "" if note is None else f"{note.done} of {note.total} runs done; "
        bench_id = getattr(self.progress.stream, "id", None)
        where = f"benchmark {bench_id}" if bench_id else "the benchmark"
        if note is not None and note.batches:  # batch mode: what its batches are doing
            from hrbench_client.cli.batches import batches_note

            where += f"; {batches_note(note.batches)}"
        return f"hrb: waiting: no row for {quiet:.0f} s ({done}{where} is running; Ctrl-C cancels it)"

    def _run(self) -> None:
        import time

        while not self.stop.wait(min(1.0, self.every / 4)):
            line = self.line_at(time.monotonic())
            if line is None:
                continue
            if self.progress.on:
                sys.stderr.write("\r\x1b[K")
            print(line, file=sys.stderr, flush=True)
