"""``hrb gate CANDIDATE --baseline BASELINE``: fail a CI job only on a real regression.

Exit 1 when the candidate is worse than the baseline by more than ``--max-drop`` with
confidence ``1 - --alpha``; 0 when it is not; 3 when no comparison can be made (stderr says
why) or the daemon cannot answer; 2 on bad input (an unknown id or name, a bad option, a file
that is not a rows file), as every ``hrb`` command.

``--junit FILE`` and ``--markdown FILE`` are written on every exit, so that a CI step that
uploads them always finds a report: one JUnit test case, passed (0), with a ``<failure>`` (1), or
with an ``<error>`` naming the bad input (2) or the trouble (3), as promptfoo's JUnit output
keeps assertion failures and runtime errors apart (promptfoo PR #9073; shared cases H4-07,
H4-08, H4-10). Names are written whole: XML escaped, Markdown table cells with ``|``, backticks
and line breaks escaped (a promptfoo arm is ``PROVIDER | PROMPT``; shared case H4-11).
"""

from __future__ import annotations

import os
import re
from xml.etree import ElementTree as ET

from hrbench_client.cli._common import _client, _fail_usage, _msgspec

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from hrbench_client.protocol import GateResult

__all__ = [
    "cmd_gate",
    "gate_error_junit",
    "gate_error_markdown",
    "gate_junit",
    "gate_line",
    "gate_markdown",
    "md_code",
    "md_text",
    "report_bad_arguments",
]

_EXIT_KIND = {2: "bad input", 3: "error", 130: "interrupted"}


def _where(ref: str) -> str:
    """A reference that names a file here becomes its absolute path (the daemon reads it)."""
    path = os.path.expanduser(ref)
    return os.path.abspath(path) if os.path.isfile(path) else ref


def _num(x: float | None, sign: bool = True) -> str:
    return "NA" if x is None else (f"{x:+.3f}" if sign else f"{x:.3f}")


def _arms(r: GateResult, show: Callable[[str], str] = str) -> str:
    """`` (arm A)`` or `` (arms A vs B)``, each name passed through ``show``."""
    if r.arm_candidate is None:
        return ""
    if r.arm_candidate == r.arm_baseline:
        return f" (arm {show(r.arm_candidate)})"
    return f" (arms {show(r.arm_candidate)} vs {show(r.arm_baseline or '')})"


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MD_PUNCT = re.compile(r"([\\`*_\[\]<>&|~$])")


_CODE_SPAN = re.compile(r"(?<![^\s(\[])`([^`\s'\"][^`'\"]*?(?<!\s))`(?![^\s.,;:)\]!?])")
"""A command or name our messages quote as code: a backtick pair around text with no backtick or quote, set off
by spaces or punctuation (so a backtick inside a quoted name, as in ``'x`y'``, stays text)."""


def md_text(s: str) -> str:
    r"""``s`` as Markdown text that renders as written, on one line (a table cell's or a paragraph's).

    The characters that start Markdown or HTML (``\ ` * _ [ ] < > & | ~ $``) are escaped with a
    backslash and line breaks become ``<br>`` (CommonMark backslash escapes; GFM tables escape
    ``|`` as ``\|``); a command the message quotes between backticks (``hrb rows ID -o FILE``)
    becomes a code span (:func:`md_code`), as it reads in a terminal.

    Example:
        >>> md_text('a<b&"c" | d]]>')
        'a\\<b\\&"c" \\| d\\]\\]\\>'
        >>> md_text("two\nlines")
        'two<br>lines'
        >>> md_text("what `hrb rows ID -o FILE` writes; 'x`y' stays")
        "what `hrb rows ID -o FILE` writes; 'x\\`y' stays"
    """
    out = []
    for part in _LINE_BREAK.split(s):
        said, at = [], 0
        for m in _CODE_SPAN.finditer(part):
            said += [_MD_PUNCT.sub(r"\\\1", part[at : m.start()]), md_code(m.group(1))]
            at = m.end()
        out.append("".join([*said, _MD_PUNCT.sub(r"\\\1", part[at:])]))
    return "<br>".join(out)


def md_code(s: str) -> str:
    r"""``s`` as a Markdown code span that a GFM table cell shows whole.

    ``|`` is escaped (``\|``: GFM splits cells before it reads code spans), the span is fenced by
    one backtick more than the longest run of backticks in ``s`` (padded by a space when ``s``
    starts or ends with a backtick or a space: CommonMark strips one space from each side), and
    a line break closes the span and opens the next after ``<br>``.

    Example:
        >>> md_code("ask"), md_code("a | b"), md_code("x`y"), md_code("`q`")
        ('`ask`', '`a \\| b`', '``x`y``', '`` `q` ``')
    """
    spans = []
    for part in _LINE_BREAK.split(s):
        if not part:
            continue
        fence = "`" * (max((len(m) for m in re.findall("`+", part)), default=0) + 1)
        pad = " " if part[0] in "` " or part[-1] in "` " else ""
        if not part.strip(" "):
            pad = ""
        spans.append(f"{fence}{pad}{part.replace('|', chr(92) + '|')}{pad}{fence}")
    return "<br>".join(spans)


_XML_BAD = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(s: str) -> str:
    r"""``s`` with the characters XML 1.0 cannot hold (controls, lone surrogates) written as ``\xNN``.

    ElementTree escapes ``< > & "`` but writes a control character as it is, which no XML
    reader accepts.

    Example:
        >>> _xml("a\x1bb\udcff")
        'a\\x1bb\\udcff'
    """

    def shown(m: re.Match[str]) -> str:
        c = ord(m.group())
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"

    return _XML_BAD.sub(shown, s)


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
    left = "" if r.coverage is None else f"; {r.coverage}"
    return (
        f"gate {r.decision.upper()}: candidate - baseline{_metric(r)} = {_num(r.diff)}, {iv} {_on(r)}"
        f"{_arms(r)}{left}; {r.reason}"
    )


def _on(r: GateResult) -> str:
    """On which items the gate decided: ``on 40 items``, or of the candidate's when the two sides' items differ.

    Example:
        >>> from hrbench_client.protocol import GateResult
        >>> r = GateResult(decision="pass", reason="", candidate="b2", baseline="b1", confidence=0.95,
        ...                max_drop=0.02, alpha=0.05, n_items=6, n_items_candidate=28, coverage="22 of them ...")
        >>> _on(r)
        "on 6 of the candidate's 28 items"
    """
    if r.coverage is None:
        return f"on {r.n_items} items"
    if r.n_items == r.n_items_candidate:
        return f"on all {r.n_items} of the candidate's items"
    return f"on {r.n_items} of the candidate's {r.n_items_candidate} items"


def _metric(r: GateResult) -> str:
    """`` (pass^5)`` or `` (flip rate)`` when the gate is not on accuracy, else nothing."""
    if r.metric == "accuracy":
        return ""
    return f" ({'pass^' + str(r.pass_k_runs) if r.metric == 'pass^k' else r.metric.replace('_', ' ')})"


def _table(rows: list[tuple[str, str]]) -> list[str]:
    return ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]


def gate_markdown(r: GateResult) -> str:
    """A Markdown summary of a gate (for a CI job's summary page or a pull-request comment).

    Names are code spans (:func:`md_code`), the reason and notes escaped text (:func:`md_text`).

    Example:
        >>> from hrbench_client.protocol import GateResult
        >>> r = GateResult(decision="fail", reason="worse", candidate="b2", baseline="b1", diff=-0.2,
        ...                ci_low=-0.3, ci_high=-0.1, confidence=0.95, max_drop=0.02, alpha=0.05)
        >>> gate_markdown(r).splitlines()[0]
        '## hrbench gate: FAIL'
    """
    icon = {"pass": "PASS", "fail": "FAIL", "cannot": "CANNOT COMPARE"}[r.decision]
    rows = [
        ("candidate", f"{md_code(r.candidate)}{_arms(r, md_code)}"),
        ("baseline", md_code(r.baseline)),
        (f"{_metric(r).strip(' ()') or 'accuracy'} (candidate / baseline)", f"{_num(r.accuracy_candidate, False)} / {_num(r.accuracy_baseline, False)}"),
        ("difference (candidate - baseline)", _num(r.diff)),
        (f"{1 - 2 * r.alpha:.0%} interval", "none" if r.ci_low is None else f"[{_num(r.ci_low)}, {_num(r.ci_high)}]"),
        ("tolerated drop", f"{r.max_drop:.3f} (fails when the {r.confidence:.0%} upper bound is below {-r.max_drop:+.3f})")
        if r.metric != "flip_rate"
        else ("tolerated rise", f"{r.max_drop:.3f} (fails when the {r.confidence:.0%} lower bound is above {r.max_drop:+.3f})"),
        ("items both ran (clusters)", f"{r.n_items} ({r.n_clusters})" if r.coverage is None
         else f"{r.n_items} of the candidate's {r.n_items_candidate} ({r.n_clusters}); {md_text(r.coverage)}"),
    ]  # fmt: skip
    decided = md_text(r.reason if r.coverage is None else f"{r.reason}; decided {_on(r)}; {r.coverage}")
    lines = [f"## hrbench gate: {icon}", "", decided, "", *_table(rows)]
    for extra in (
        "Descriptive: fewer than 5 runs per item; the interval covers the sampling of items only."
        if r.descriptive
        else None,
        r.note,
    ):
        if extra:
            lines += ["", md_text(extra)]
    return "\n".join(lines) + "\n"


def _junit(name: str, verdict: tuple[str, str, str, str] | None, out: str) -> bytes:
    """One JUnit test case ``name``; ``verdict`` is ``(tag, type, message, text)`` of its failure or error."""
    failed = int(verdict is not None and verdict[0] == "failure")
    errored = int(verdict is not None and verdict[0] == "error")
    counts = {"tests": "1", "failures": str(failed), "errors": str(errored), "skipped": "0"}
    suites = ET.Element("testsuites", {"name": "hrbench gate", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": "hrbench gate", **counts})
    case = ET.SubElement(suite, "testcase", classname="hrbench.gate", name=_xml(name))
    if verdict is not None:
        tag, kind, message, text = verdict
        ET.SubElement(case, tag, message=_xml(message), type=kind).text = _xml(text)
    ET.SubElement(case, "system-out").text = _xml(out)
    data: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return data


def gate_junit(r: GateResult) -> bytes:
    """JUnit XML of a gate: one test case; a ``failure`` when it fails, an ``error`` when it cannot compare.

    Example:
        >>> from hrbench_client.protocol import GateResult
        >>> r = GateResult(decision="cannot", reason="cannot compare: no item", candidate="b2", baseline="b1",
        ...                confidence=0.95, max_drop=0.02, alpha=0.05)
        >>> b'<error message="cannot compare: no item" type="cannot compare"' in gate_junit(r)
        True
    """
    verdict = None
    if r.decision != "pass":
        tag, kind = ("failure", "regression") if r.decision == "fail" else ("error", "cannot compare")
        verdict = (tag, kind, r.reason, gate_line(r))
    return _junit(f"{r.candidate} vs {r.baseline}{_arms(r)}", verdict, gate_line(r))


def _error_name(candidate: str | None, baseline: str | None) -> str:
    return f"{candidate or '?'} vs {baseline or '?'}"


def gate_error_junit(
    candidate: str | None, baseline: str | None, code: int, kind: str, message: str
) -> bytes:
    """JUnit XML of a gate that ended before a decision: one test case with an ``error``.

    Args:
        candidate: the candidate as given (``None``: not given); with the baseline it names the test case.
        baseline: the baseline as given (``None``: not given).
        code: the exit code (2 bad input, 3 trouble, 130 interrupted).
        kind: the error's kind (its class name, ``usage`` for bad arguments).
        message: what went wrong, naming the input.

    Example:
        >>> x = gate_error_junit("new", "base.jsonl", 2, "ConfigError", "baseline: is empty")
        >>> b'<error message="baseline: is empty" type="ConfigError">' in x
        True
    """
    what = f"hrb gate exited {code} ({_EXIT_KIND.get(code, 'error')}): {message}"
    return _junit(_error_name(candidate, baseline), ("error", kind, message, what), what)


def gate_error_markdown(candidate: str | None, baseline: str | None, code: int, message: str) -> str:
    """A Markdown summary of a gate that ended before a decision (exit 2, 3 or 130), naming why.

    Example:
        >>> print(gate_error_markdown("new", "base.jsonl", 2, "baseline: is empty"), end="")
        ## hrbench gate: BAD INPUT
        <BLANKLINE>
        Exit 2 (bad input): baseline: is empty
        <BLANKLINE>
        | | |
        |---|---|
        | candidate | `new` |
        | baseline | `base.jsonl` |
    """
    kind = _EXIT_KIND.get(code, "error")
    rows = [("candidate", md_code(candidate or "")), ("baseline", md_code(baseline or ""))]
    lines = [f"## hrbench gate: {kind.upper()}", "", f"Exit {code} ({kind}): {md_text(message)}", ""]
    return "\n".join([*lines, *_table(rows)]) + "\n"


def _write_reports(
    markdown_path: str | None, junit_path: str | None, markdown: str, junit: bytes
) -> list[str]:
    """Write the reports asked for, each whole or not at all; what could not be written (``--junit FILE: reason``)."""
    from hrbench_client.files import atomic_file, why_not_written

    bad = []
    for option, path, data in (
        ("--markdown", markdown_path, markdown.encode("utf-8")),
        ("--junit", junit_path, junit),
    ):
        if path:
            try:
                with atomic_file(os.path.expanduser(path)) as f:  # whole or not at all
                    f.write(data)
            except OSError as exc:
                bad.append(f"{option} {path}: cannot write the file: {why_not_written(exc)}")
    return bad


def _exit_of(exc: BaseException, args: argparse.Namespace) -> tuple[int, str, str]:
    """``(exit code, kind, message)`` of an error that ends ``hrb gate``, as :func:`hrbench_client.cli.run` maps it."""
    from hrbench_client.cli._common import _Usage
    from hrbench_client.cli.exit_codes import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, exit_code
    from hrbench_client.errors import HrbenchError, InvalidParams

    kind = type(exc).__name__
    if isinstance(exc, _Usage):
        return EXIT_USAGE, "usage", str(exc)
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED, kind, "interrupted"
    if isinstance(exc, InvalidParams):
        from hrbench_client.cli._arguments import option_message
        from hrbench_client.cli.parser import _parser

        return EXIT_USAGE, kind, f"invalid: {option_message(exc, args, _parser()) or exc}"
    message = f"{kind}: {exc}"
    return (exit_code(exc, "gate") if isinstance(exc, HrbenchError) else EXIT_ERROR), kind, message


def report_bad_arguments(argv: list[str], message: str) -> None:
    """Write ``--junit`` and ``--markdown`` of an ``hrb gate`` whose arguments argparse refused (exit 2).

    ``argv`` is read leniently for the report paths (and the names of the test case); nothing is
    written when they cannot be found.
    """
    import argparse

    lenient = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    lenient.add_argument("words", nargs="*")
    for option in ("--junit", "--markdown", "--baseline", "--arm", "--max-drop", "--alpha", "--home"):
        lenient.add_argument(option, nargs="?")  # its value is not the candidate; a missing one is None
    try:
        known, _ = lenient.parse_known_intermixed_args(argv)
    except (argparse.ArgumentError, SystemExit):
        return
    if not (known.junit or known.markdown):
        return
    words = list(known.words)
    candidate = words[words.index("gate") + 1] if "gate" in words[:-1] else None
    _write_reports(
        known.markdown,
        known.junit,
        gate_error_markdown(candidate, known.baseline, 2, message),
        gate_error_junit(candidate, known.baseline, 2, "usage", message),
    )


def _ask(args: argparse.Namespace) -> GateResult:
    from hrbench_client import protocol as p

    params = p.GateParams(
        candidate=_where(args.candidate),
        baseline=_where(args.baseline),
        arm=args.arm,
        max_drop=args.max_drop,
        alpha=args.alpha,
        metric=args.metric,
        pass_k=args.pass_k,
    )
    with _client(args) as hb:
        res: GateResult = hb.call("benchmark/gate", params, p.GateResult)
    return res


def cmd_gate(args: argparse.Namespace) -> int:
    """Run ``hrb gate``; returns 0 (pass), 1 (fail) or 3 (cannot compare); raises on 2 and 3 (the reports written)."""
    from hrbench_client.cli._common import _err

    try:
        res = _ask(args)
        bad = _write_reports(args.markdown, args.junit, gate_markdown(res), gate_junit(res))
        if bad:
            _fail_usage("; ".join(bad))
    except (Exception, KeyboardInterrupt) as exc:
        code, kind, message = _exit_of(exc, args)
        names = _where(args.candidate), _where(args.baseline)
        _write_reports(
            args.markdown,
            args.junit,
            gate_error_markdown(*names, code, message),
            gate_error_junit(*names, code, kind, message),
        )
        raise
    if args.json:
        print(_msgspec().json.encode(res).decode())
    else:
        print(gate_line(res))
    if res.decision == "cannot":
        _err(res.reason)
    return res.exit_code
