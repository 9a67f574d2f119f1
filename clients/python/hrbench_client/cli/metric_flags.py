"""``hrb report`` and ``hrb gate``'s repeat-consistency flags: ``--metric`` and ``--pass-k``.

``--metric pass^k`` compares (or gates on) the chance that ``k`` runs of an item are all right
(tau-bench's pass^k; promptfoo asks for it as pass^N), ``--metric flip_rate`` the chance that two
runs of an item disagree; ``--pass-k K`` sets ``k`` (default: the runs per item).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["METRICS", "add_metric_flags"]

METRICS = ("accuracy", "pass^k", "flip_rate")
"""What ``hrb report --compare`` and ``hrb gate`` may compare (``hrbench.stats._consistency.METRICS``)."""

_HELP = {
    "report": "what --compare compares: accuracy (default), pass^k (k runs of an item all right) or "
    "flip_rate (two runs of an item disagree)",
    "gate": "what is gated: accuracy (default), pass^k (a drop in the chance that k runs of an item are "
    "all right) or flip_rate (a rise in the chance that two runs of an item disagree)",
}
_K_HELP = {
    "report": "the k of pass^k (default: the runs per item); the text shows pass^k and the flip rate "
    "with 2 or more runs",
    "gate": "the k of pass^k (default: the runs per item)",
}


def add_metric_flags(p: Any, command: str) -> None:
    """Add ``--metric`` and ``--pass-k`` to ``command``'s parser ``p`` (``"report"`` or ``"gate"``)."""
    default = "accuracy" if command == "gate" else None
    p.add_argument("--metric", choices=METRICS, default=default, help=_HELP[command])
    p.add_argument("--pass-k", type=int, metavar="K", help=_K_HELP[command])
