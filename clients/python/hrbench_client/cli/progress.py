"""``hrb bench``'s progress on stderr: the bar on a terminal, and a line when no row comes."""

from __future__ import annotations

import sys

from hrbench_client.cli._common import usd_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["progress_line", "usd_text"]


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
        width: the bar's width in characters.

    Returns:
        The line, without a carriage return.

    Example:
        >>> progress_line("bench", 50, 200, 25.0, 0.1234, 2.0, width=10)
        'bench [##........] 50/200 rows  25.0 rows/s  ETA 6s  $0.1234 of $2.00'
        >>> progress_line("bench", 0, 0, None, width=4)
        'bench [####] 0/0 rows'
    """
    filled = min(width, int(width * done / total)) if total else width
    parts = [f"{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} rows"]
    if rate:
        parts.append(f"{rate:.1f} rows/s")
        if done < total:
            parts.append(f"ETA {_duration((total - done) / rate)}")
    if usd is not None:
        parts.append(f"${usd_text(usd)}" + ("" if max_usd is None else f" of ${max_usd:.2f}"))
    return "  ".join(parts)


class _Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal.

    ``stream`` (set once the benchmark is sent) supplies the spend and the cap.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.on = sys.stderr.isatty()
        self.last = 0.0
        self.stream: Any = None
        self.start: tuple[float, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        if not self.on:
            return
        import time

        now = time.monotonic()
        if self.start is None:
            self.start = (now, done)  # resumed rows do not count towards the rate
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        t0, d0 = self.start
        rate = (done - d0) / (now - t0) if now > t0 and done > d0 else None
        note = getattr(self.stream, "progress", None)
        usd = None if note is None else note.usd
        max_usd = None if note is None else note.max_usd
        line = progress_line(self.label, done, total, rate, usd, max_usd)
        sys.stderr.write(f"\r{line}\x1b[K")
        sys.stderr.flush()

    def end(self) -> None:
        if self.on:
            sys.stderr.write("\n")


class _Waiting:
    """A plain line on stderr when no row came for ``every`` seconds.

    Rule: a benchmark whose endpoint never answers never leaves ``hrb bench`` silent for
    minutes (the progress bar is drawn on a terminal only). A thread prints, a terminal or not, at
    most one line per ``every`` seconds while no row arrives: ``hrb: waiting: no row for 10 s
    (3 of 40 runs done; benchmark ID)``, then ``... for 20 s``, ``... for 30 s``: the time since
    the last row, not since the last line (not 10 s every time). A
    terminal's progress bar is redrawn after it.
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

        Example:
            >>> w = _Waiting(_Progress("bench"))
            >>> w.row(now=0.0)
            >>> [w.line_at(t) is not None for t in (9.0, 10.0, 15.0, 20.0)]
            [False, True, False, True]
        """
        quiet = now - self.last_row
        if quiet < self.every or now - self.said < self.every:
            return None
        self.said = now  # at most one line per `every` seconds
        note = getattr(self.progress.stream, "progress", None)
        done = "" if note is None else f"{note.done} of {note.total} runs done; "
        bench_id = getattr(self.progress.stream, "id", None)
        where = f"benchmark {bench_id}" if bench_id else "the benchmark"
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
