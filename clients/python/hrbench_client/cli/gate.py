"""``hrb gate CANDIDATE --baseline BASELINE``: fail a CI job only on a real regression.

Exit 1 when the candidate is worse than the baseline by more than ``--max-drop`` with
confidence ``1 - --alpha``; 0 when it is not; 3 when no comparison can be made (stderr says
why); 2 on bad input (an unknown id or name, a bad option), as every ``hrb`` command.
"""

from __future__ import annotations

import os
from xml.etree import ElementTree as ET

from hrbench_client.cli._common import _client, _err, _fail_usage, _msgspec

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from hrbench_client.protocol import GateResult

__all__ = ["cmd_gate", "gate_junit", "gate_line", "gate_markdown"]


def _where(ref: str) -> str:
    """A reference that names a file here becomes its absolute path (the daemon reads it)."""
    path = os.path.expanduser(ref)
    return os.path.abspath(path) if os.path.isfile(path) else ref


def _num(x: float | None, sign: bool = True) -> str:
    return "NA" if x is None else (f"{x:+.3f}" if sign else f"{x:.3f}")


def _arms(r: GateResult) -> str:
    if r.arm_candidate is None:
        return ""
    if r.arm_candidate == r.arm_baseline:
        return f" (arm {r.arm_candidate})"
    return f" (arms {r.arm_candidate} vs {r.arm_baseline})"


def gate_line(r: GateResult) -> str:
    """The one line ``hrb gate`` prints: the difference, its interval and the decision.

    Example:
        >>> from hrbench_client.protocol import GateResult
        >>> r = GateResult(decision="pass", reason="no drop", candidate="b2", baseline="b1", diff=-0.01,
        ...                ci_low=-0.05, ci_high=0.03, confidence=0.95, max_drop=0.02, alpha=0.05, n_items=40)
        >>> gate_line(r)
        'gate PASS: candidate - baseline = -0.010, 90% interval [-0.050, +0.030] on 40 items; no drop'
    """
    level = f"{1 - 2 * r.alpha:.0%}"
    iv = "no interval" if r.ci_low is None else f"{level} interval [{_num(r.ci_low)}, {_num(r.ci_high)}]"
    return (
        f"gate {r.decision.upper()}: candidate - baseline = {_num(r.diff)}, {iv} on {r.n_items} items"
        f"{_arms(r)}; {r.reason}"
    )


def gate_markdown(r: GateResult) -> str:
    """A Markdown summary of a gate (for a CI job's summary page or a pull-request comment).

    Example:
        >>> from hrbench_client.protocol import GateResult
        >>> r = GateResult(decision="fail", reason="worse", candidate="b2", baseline="b1", diff=-0.2,
        ...                ci_low=-0.3, ci_high=-0.1, confidence=0.95, max_drop=0.02, alpha=0.05)
        >>> gate_markdown(r).splitlines()[0]
        '## hrbench gate: FAIL'
    """
    icon = {"pass": "PASS", "fail": "FAIL", "cannot": "CANNOT COMPARE"}[r.decision]
    rows = [
        ("candidate", f"`{r.candidate}`{_arms(r)}"),
        ("baseline", f"`{r.baseline}`"),
        ("accuracy (candidate / baseline)", f"{_num(r.accuracy_candidate, False)} / {_num(r.accuracy_baseline, False)}"),
        ("difference (candidate - baseline)", _num(r.diff)),
        (f"{1 - 2 * r.alpha:.0%} interval", "none" if r.ci_low is None else f"[{_num(r.ci_low)}, {_num(r.ci_high)}]"),
        ("tolerated drop", f"{r.max_drop:.3f} (fails when the {r.confidence:.0%} upper bound is below {-r.max_drop:+.3f})"),
        ("items both ran (clusters)", f"{r.n_items} ({r.n_clusters})"),
    ]  # fmt: skip
    lines = [f"## hrbench gate: {icon}", "", r.reason, "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    for extra in (
        "Descriptive: fewer than 5 runs per item; the interval covers the sampling of items only."
        if r.descriptive
        else None,
        r.note,
    ):
        if extra:
            lines += ["", extra]
    return "\n".join(lines) + "\n"


def gate_junit(r: GateResult) -> bytes:
    """JUnit XML of a gate: one test case; a ``failure`` when it fails, an ``error`` when it cannot compare.

    Example:
        >>> from hrbench_client.protocol import GateResult
        >>> r = GateResult(decision="cannot", reason="cannot compare: no item", candidate="b2", baseline="b1",
        ...                confidence=0.95, max_drop=0.02, alpha=0.05)
        >>> b'<error message="cannot compare: no item"' in gate_junit(r)
        True
    """
    failed, errored = int(r.decision == "fail"), int(r.decision == "cannot")
    counts = {"tests": "1", "failures": str(failed), "errors": str(errored), "skipped": "0"}
    suites = ET.Element("testsuites", {"name": "hrbench gate", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": "hrbench gate", **counts})
    case = ET.SubElement(
        suite, "testcase", classname="hrbench.gate", name=f"{r.candidate} vs {r.baseline}{_arms(r)}"
    )
    if failed or errored:
        bad = ET.SubElement(case, "failure" if failed else "error", message=r.reason)
        bad.text = gate_line(r)
    ET.SubElement(case, "system-out").text = gate_line(r)
    out: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return out


def _write(path: str, data: bytes, option: str) -> None:
    from hrbench_client.files import atomic_file, why_not_written

    try:
        with atomic_file(os.path.expanduser(path)) as f:  # whole or not at all
            f.write(data)
    except OSError as exc:
        _fail_usage(f"{option} {path}: cannot write the file: {why_not_written(exc)}")


def cmd_gate(args: argparse.Namespace) -> int:
    """Run ``hrb gate``; returns 0 (pass), 1 (fail) or 3 (cannot compare)."""
    from hrbench_client import protocol as p

    params = p.GateParams(
        candidate=_where(args.candidate),
        baseline=_where(args.baseline),
        arm=args.arm,
        max_drop=args.max_drop,
        alpha=args.alpha,
    )
    with _client(args) as hb:
        res = hb.call("benchmark/gate", params, p.GateResult)
    if args.markdown:
        _write(args.markdown, gate_markdown(res).encode("utf-8"), "--markdown")
    if args.junit:
        _write(args.junit, gate_junit(res), "--junit")
    if args.json:
        print(_msgspec().json.encode(res).decode())
    else:
        print(gate_line(res))
    if res.decision == "cannot":
        _err(res.reason)
    return res.exit_code
