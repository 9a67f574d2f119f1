"""``hrb bench`` and ``hrb cancel``: run a benchmark from a TOML file, its exit code and advice."""

from __future__ import annotations

import contextlib
import os
import sys

from hrbench_client.cli._common import _client, _err, _fail_usage, _measured, _msgspec, _out, explain
from hrbench_client.cli.exit_codes import (
    EXIT_BUDGET,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE,
    EXIT_WRONG,
    closed_output,
    output_closed,
)
from hrbench_client.cli.progress import _Progress, _Waiting
from hrbench_client.cli.spec_files import _load_toml, _resolve
from hrbench_client.cli.stop_flags import apply_stop_flags
from hrbench_client.errors import (
    BenchmarkCancelled,
    DaemonError,
    DaemonStopped,
    HrbenchError,
    InvalidParams,
    RequestCancelled,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["NOT_RETRIED_CAUSES", "bench_exit", "bench_params", "shell_limits_note", "uncapped"]


def bench_params(path: str) -> Any:
    """The :class:`~hrbench_client.protocol.BenchmarkParams` of a TOML file, paths resolved.

    Raises:
        InvalidParams: the file does not match the schema (msgspec's message names the field).
    """
    from hrbench_client import protocol as p

    data, base = _load_toml(path)
    ref = data.get("reference")
    if isinstance(ref, dict):
        for key in ("path", "ids_from"):
            if key in ref:
                ref[key] = _resolve(base, ref[key])
    for arm in data.get("arms", []) or []:
        if isinstance(arm, dict) and arm.get("kind") == "outputs" and "path" in arm:
            arm["path"] = _resolve(base, arm["path"])
    data["python_path"] = [str(base), *[_resolve(base, x) for x in data.get("python_path", [])]]
    data.pop("grades", None)  # human grades: put by `hrb bench` when the run ends (spec_grades)
    data.setdefault("name", os.path.splitext(os.path.basename(path))[0])  # `hrb report capitals` finds it
    try:
        return _msgspec().convert(data, p.BenchmarkParams)
    except _msgspec().ValidationError as exc:
        raise InvalidParams(f"{path}: {explain(exc, p.BenchmarkParams, data)}") from None


def spec_grades(path: str) -> str | None:
    """The absolute path of the human grades file a benchmark TOML names (``grades = "FILE"``), or ``None``.

    Relative to the TOML file, as its other paths are; ``hrb bench`` keeps its grades
    (``grades/put``) with the benchmark's rows when the run ends.
    """
    data, base = _load_toml(path)
    grades = data.get("grades")
    if grades is None:
        return None
    if not isinstance(grades, str) or not grades:
        raise InvalidParams(
            f"{path}: grades: the path of a human grades file (CSV or JSON lines), got {grades!r}"
        )
    return str(_resolve(base, grades))


def cmd_bench(args: argparse.Namespace) -> int:
    """``hrb bench FILE | --resume ID``: rows as JSON lines as they come, then the result."""
    spec = _bench_spec(args)
    grades = spec_grades(args.file) if args.file else None
    if (said := shell_limits_note(spec)) is not None:
        _err(f"note: {said}")
    if args.detach:
        if grades is not None:
            _err(
                f"note: the grades of {grades} are kept when the run ends in the foreground: when it ends, "
                f"run `hrb grades put ID {grades}`"
            )
        return _submit_detached(args, spec)
    progress = _Progress("bench")
    with _client(args) as hb:
        stream = hb.benchmark(spec, on_progress=progress)
        progress.stream = stream
        stopped = _follow(stream, progress)
        if stopped is not None:
            return stopped
        progress.end()
        assert stream.result is not None
        if grades is not None:  # the spec's human grades, kept with the rows just run
            kept = hb.grades_put(stream.result.id, path=grades)
            _err(f"grades: {kept.stored} kept from {grades} ({kept.n_graded} for this benchmark's rows)")
        _out(stream.result)
        if sys.stderr.isatty():
            print(stream.result.text, file=sys.stderr)
    return bench_exit(stream.result, args.fail_under)


def _bench_spec(args: argparse.Namespace) -> Any:
    """The request of ``hrb bench``: the FILE's spec or a resume, with the flags applied."""
    from hrbench_client import protocol as p

    caps = (
        "max_calls",
        "max_usd",
        "max_tokens",
        "max_calls_per_run",
        "max_usd_per_run",
        "max_tokens_per_run",
    )
    limits = {k: getattr(args, k) for k in caps if getattr(args, k, None) is not None}
    if args.resume:
        if args.file:
            _fail_usage("give a FILE or --resume ID, not both")
        if getattr(args, "batch", False):
            _fail_usage(
                "--batch is a new benchmark's: a resume runs as its benchmark ran (batch mode or not)"
            )
        governor = p.GovernorSpec(**limits) if limits else None
        spec: Any = p.BenchmarkParams(
            resume=args.resume,
            stream=not args.no_rows,
            governor=governor,
            detach=args.detach,
            retry_errors=args.retry_errors,
            concurrency=args.concurrency,  # None: the benchmark's own
        )
    elif args.retry_errors:
        _fail_usage("--retry-errors runs the runs that ended in errors again: give --resume ID")
    elif args.file:
        spec = bench_params(args.file)
        if getattr(args, "batch", False) and spec.batch is None:  # --batch: the [batch] defaults
            spec = _msgspec().structs.replace(spec, batch=p.BatchSpec())
        if args.no_rows:
            spec = _msgspec().structs.replace(spec, stream=False)
        if args.detach:
            spec = _msgspec().structs.replace(spec, detach=True)
        if args.concurrency is not None:
            spec = _msgspec().structs.replace(spec, concurrency=args.concurrency)
        if limits:  # one flag replaces one limit; the others in force stay
            kept = p.GovernorSpec(defaults=True) if spec.governor is None else spec.governor
            spec = _msgspec().structs.replace(spec, governor=_msgspec().structs.replace(kept, **limits))
        if (why := uncapped(spec)) is not None:
            _err(f"warning: {why}")
    else:
        _fail_usage("give a benchmark FILE.toml or --resume ID")
    return apply_stop_flags(args, spec)


def _follow(stream: Any, progress: _Progress) -> int | None:
    """Print the rows of ``stream`` as they come; the exit code when it ended early, else ``None``."""
    try:
        with _Waiting(progress) as waiting:
            for row in stream:
                waiting.row()
                _out(row)
                sys.stdout.buffer.flush()  # live rows, and a closed reader is seen while it runs
    except KeyboardInterrupt:
        progress.end()
        # as `hrb cancel` does, the daemon lets the requests already sent finish
        # (its grace), saving their rows; a second Ctrl-C leaves at once, the daemon goes on
        _err(
            "cancelling: the requests already sent finish first (the daemon's "
            "HRBENCH_CANCEL_GRACE_S, else 10 s); Ctrl-C again to leave now"
        )
        ended = False
        with contextlib.suppress(KeyboardInterrupt):
            stream.close()
            ended = _cancel_ended(stream)
        if stream.id and ended:
            _err(f"cancelled; finished rows are kept. Resume with: hrb bench --resume {stream.id}")
        elif stream.id:  # left at a second Ctrl-C: the daemon is still cancelling it
            _err(
                f"still cancelling: the daemon ends benchmark {stream.id} once the requests already sent "
                f"finish (`hrb ls` shows it running until then); finished rows are kept. Resume with: "
                f"hrb bench --resume {stream.id}"
            )
        return EXIT_INTERRUPTED
    except RequestCancelled:
        progress.end()
        _err(f"cancelled; resume with: hrb bench --resume {stream.id}")
        return EXIT_INTERRUPTED
    except (BenchmarkCancelled, DaemonStopped) as exc:  # `hrb cancel ID` from another shell,
        # or `hrb daemon stop` meanwhile: the id, the runs saved, the resume command
        progress.end()
        _err(exc.message)
        return EXIT_ERROR
    except DaemonError as exc:  # the daemon died (a kill, a crash): say which benchmark, and how on
        progress.end()
        if not stream.id:
            raise
        _err(
            f"the daemon stopped while benchmark {stream.id} ran ({exc.message}); its saved rows are "
            f"kept (`hrb rows {stream.id}`). Resume it with: hrb bench --resume {stream.id}"
        )
        return EXIT_ERROR
    except OSError as exc:  # `hrb bench spec | head -1`: the submitter goes, so the daemon cancels
        if not closed_output(exc):
            raise
        progress.end()
        output_closed()
        stream.close()
        if stream.id:
            _err(
                f"the output closed, so benchmark {stream.id} was cancelled; finished rows are kept. "
                f"Resume with: hrb bench --resume {stream.id}"
            )
        return EXIT_PIPE
    return None


def _cancel_ended(stream: Any, poll_s: float = 0.1) -> bool:
    """Wait until the daemon no longer runs the cancelled benchmark; ``True`` once it has ended.

    Rule: ``hrb bench`` interrupted says "cancelled" only when it is (the daemon lets the
    requests already sent finish, its grace, then stores the end), so `hrb ls` right after
    shows it ended. A second Ctrl-C leaves at once (``KeyboardInterrupt`` propagates). A
    daemon that cannot be asked (it stopped) counts as ended.
    """
    import time

    if not stream.id:
        return True
    client = stream._client
    while True:
        try:
            listed = [b for b in client.benchmarks(search=stream.id) if b.id == stream.id]
        except (HrbenchError, OSError):
            return True
        if not listed or listed[0].status != "running":
            return True
        time.sleep(poll_s)


def shell_limits_note(spec: Any, environ: Any = None) -> str | None:
    """What becomes of the ``HRBENCH_MAX_*`` variables set in this shell, or ``None`` when none is.

    Rule (``HRBENCH_MAX_CALLS=50 hrb bench`` holds even for a daemon started before, and says
    so): ``hrb`` sends them with the request
    (:func:`hrbench_client.client.with_caller_env`) and the daemon takes them as the default
    limits, for the limits the spec and the flags do not set; this says which apply and which
    do not (a spec's ``[governor]`` sets every limit itself; a flag replaces its variable; a
    resume keeps the limits in force), so they are never ignored silently.

    Args:
        spec: the request (:class:`~hrbench_client.protocol.BenchmarkParams`).
        environ: the environment to read (``os.environ`` by default).

    Example:
        >>> from hrbench_client import protocol as p
        >>> shell_limits_note(p.BenchmarkParams(), {"HRBENCH_MAX_CALLS": "50"})
        'HRBENCH_MAX_CALLS=50 from this shell is a default limit of this benchmark (the spec has no [governor])'
        >>> shell_limits_note(p.BenchmarkParams(governor=p.GovernorSpec(max_usd=1.0)), {"HRBENCH_MAX_CALLS": "50"})
        "HRBENCH_MAX_CALLS=50 from this shell is not used: the spec's [governor] sets the limits (one it leaves out has no cap)"
        >>> shell_limits_note(p.BenchmarkParams(), {}) is None
        True
    """
    from hrbench_client.client import LIMIT_VARIABLES

    env = os.environ if environ is None else environ
    given = [(n, env[n]) for n in LIMIT_VARIABLES if env.get(n)]
    if not given:
        return None
    shown = ", ".join(f"{n}={v}" for n, v in given)
    gov = spec.governor
    if spec.resume is not None:
        return (
            f"{shown} from this shell is not used: a resume keeps the limits in force (`hrb ls` shows "
            "them); give --max-calls/--max-usd/--max-tokens to change one"
        )
    if gov is not None and not gov.defaults:
        return f"{shown} from this shell is not used: the spec's [governor] sets the limits (one it leaves out has no cap)"
    flagged = {
        f"HRBENCH_{k.upper()}"
        for k in ("max_calls", "max_usd", "max_tokens")
        if gov and getattr(gov, k) is not None
    }
    used = [f"{n}={v}" for n, v in given if n not in flagged]
    replaced = [n for n, _ in given if n in flagged]
    parts = []
    if used:
        parts.append(
            f"{', '.join(used)} from this shell {'is a default limit' if len(used) == 1 else 'are default limits'} "
            "of this benchmark (the spec has no [governor])"
        )
    if replaced:
        parts.append(
            f"{', '.join(replaced)} from this shell {'is' if len(replaced) == 1 else 'are'} replaced by the flag given"
        )
    return "; ".join(parts)


def _submit_detached(args: argparse.Namespace, spec: Any) -> int:
    """``hrb bench --detach``: submit, say the id and how to follow it, exit 0 while it runs.

    Rule (``--detach`` does not stream every row or wait for the end): a detached benchmark survives its submitter, so ``hrb bench --detach`` waits only until the
    daemon has checked and stored it, then prints one JSON line (``id``, ``status``
    ``"running"``, ``detached``, rows ``done`` and ``total``, and the commands that follow it)
    and exits 0; the daemon runs it to its end. A spec the daemon refuses exits 2 as without
    ``--detach``. ``--fail-under`` needs the result, so it is refused with ``--detach``.
    """
    if args.fail_under is not None:
        _fail_usage("--fail-under needs the benchmark's result: not with --detach (see `hrb report ID`)")
    spec = _msgspec().structs.replace(spec, stream=False, detach=True)
    with _client(args) as hb:
        stream = hb.benchmark(spec)
        bid = stream.started()
    follow = {
        "status": "hrb ls",
        "rows": f"hrb rows {bid}",
        "report": f"hrb report {bid}",
        "cancel": f"hrb cancel {bid}",
    }
    line = {"id": bid, "status": "running", "detached": True, "done": stream.done, "total": stream.total}
    try:
        _out({**line, "follow": follow})
        sys.stdout.flush()
    except OSError as exc:
        if not closed_output(exc):
            raise
        output_closed()
        _err(f"the output closed; benchmark {bid} runs on (detached): `hrb rows {bid}`, `hrb ls`")
        return EXIT_PIPE
    _err(
        f"benchmark {bid} runs on in the daemon (detached, {stream.done}/{stream.total} rows done). "
        f"Follow it: `hrb ls` (status, rows), `hrb rows {bid}` (rows saved so far), "
        f"`hrb report {bid}` (once done); stop it: `hrb cancel {bid}` (resumable)"
    )
    return EXIT_OK


def uncapped(spec: Any) -> str | None:
    """Why a benchmark spec runs a billing model with no limit at all, or ``None``.

    Rule (a copy of a spec with an empty ``[governor]`` pointed at a paid model has no cap, and
    is told so): an empty ``[governor]`` still means no limits, but
    ``hrb bench`` warns when such a spec's client bills (``openai``, ``anthropic``, or a
    ``replay`` falling back to one) and an arm calls it (not ``outputs`` only).

    Example:
        >>> from hrbench_client import protocol as p
        >>> arms = [p.PromptArmSpec(name="a", template="{item}")]
        >>> uncapped(p.BenchmarkParams(arms=arms, client=p.OpenAIClientSpec(model="m"), governor=p.GovernorSpec()))[:30]
        'openai model m runs with no li'
        >>> uncapped(p.BenchmarkParams(arms=arms, client=p.OpenAIClientSpec(model="m"))) is None
        True
    """

    def kind(x: Any) -> Any:  # a tagged Struct keeps its tag on the class
        return None if x is None else x.__struct_config__.tag

    gov, client = spec.governor, spec.client
    if (
        gov is None
        or gov.defaults
        or any(x is not None for x in (gov.max_calls, gov.max_usd, gov.max_tokens))
    ):
        return None
    billing = client.fallback if kind(client) == "replay" else client
    if kind(billing) not in ("openai", "anthropic") or all(kind(a) == "outputs" for a in spec.arms):
        return None
    return (
        f"{kind(billing)} model {billing.model} runs with no limit at all (an empty [governor] means "
        "no cap); set [governor] max_calls/max_usd/max_tokens, or --max-usd USD, or remove the "
        "table for the defaults (400 calls, $5)"
    )


_CAP_FLAGS = (
    ("call_cap_reached", "--max-calls N"),
    ("cost_cap_reached", "--max-usd USD"),
    ("token_cap_reached", "--max-tokens N"),
)
"""The governor's refusal of each cap, and the flag that raises it."""


NOT_RETRIED_CAUSES = ("duplicate_draw", "no output for item ")
"""Causes of error runs that a resume or ``--retry-errors`` fails the same way (the library's
``DUPLICATE_CAUSE`` and ``MISSING_OUTPUT_CAUSE``: a run again draws the same replies, or reads
the same outputs); for them ``hrb bench`` advises no retry."""


def bench_exit(result: Any, fail_under: float | None = None) -> int:
    """The exit code of a finished benchmark, with a plain summary on stderr (SPEC section 6).

    4 when the governor stopped runs (with the command that resumes it, naming the flag of
    the cap that stopped them: a cost stop ``--max-usd``; ``--retry-errors`` too when runs
    ended in errors), else 3 when runs ended in errors, all or some (how many, by arm and
    cause, and ``hrb bench --resume ID --retry-errors`` to run them again once the cause is
    fixed; no such advice when every such run had a cause a retry cannot fix:
    :data:`NOT_RETRIED_CAUSES`), else 1 when an arm's accuracy is under ``fail_under`` or is NA
    (nothing measured: :func:`_gate`), else 0: every run was scored.

    Rule (a ``NoLabelsWarning`` or ``FewRunsWarning`` never lives only in the JSON result
    line): every warning the benchmark raised is printed on
    stderr once, a terminal or not, as ``hrb: warning: Class: message``; the warnings of runs
    that ended in errors or were stopped by the budget are printed with that summary instead.
    """
    stopped = sum(s.budget_stop - s.run_capped for s in result.summary)  # a run's own cap: that run only
    errors = sum(sum(s.error_causes.values()) or s.errors for s in result.summary)
    retry = " --retry-errors" if errors else ""
    warned = list(dict.fromkeys(result.warnings))
    said = [w.split(": ", 1)[1] for w in warned if w.startswith(("ArmErrorWarning", "BudgetStoppedWarning"))]
    summarised = stopped or errors or result.status == "errors"
    for w in warned:
        if not (w.startswith(("ArmErrorWarning", "BudgetStoppedWarning")) and summarised):
            _err(f"warning: {w}")
    if stopped:
        _err(
            f"budget stop: {stopped} run(s) were stopped by the governor and not run; the rows scored are kept"
        )
        for w in said:
            _err(w)
        note = getattr(result, "stop_note", None)
        if note:  # the daemon's note, the one hrb ls, the report and the view show
            _err(f"budget stopped: {note}")
        else:  # a daemon that sends no note: the caps its refusals name
            caps = [f for name, f in _CAP_FLAGS if any(name in w for w in said)]
            how = " ".join(caps) if caps else "--max-calls N (or --max-usd USD, --max-tokens N)"
            _err(f"resume with higher limits: hrb bench --resume {result.id} {how}{retry}")
        return EXIT_BUDGET
    if errors or result.status == "errors":
        _err(f"{errors} run(s) ended in errors and were scored 'error'")
        for w in said:
            _err(w)
        unretried = sum(
            k for s in result.summary for c, k in s.error_causes.items() if c.startswith(NOT_RETRIED_CAUSES)
        )
        if errors and unretried == errors:  # a retry reads the same outputs, or draws the same replies
            _err(
                "a resume or --retry-errors would fail these runs the same way "
                "(the note above says what helps); fix the outputs or the arms and run the benchmark anew"
            )
        else:
            _err(
                f"once the cause is fixed, run them again with: hrb bench --resume {result.id} --retry-errors"
            )
        return EXIT_ERROR
    if fail_under is not None:
        return _gate(result.summary, fail_under)
    return EXIT_OK


def _gate(summary: list[Any], fail_under: float) -> int:
    """``--fail-under``: 1 when an arm's accuracy is under the bar OR was not measured.

    Rule (``--fail-under 0.9`` never passes on a benchmark whose items have no label,
    accuracy NA): a gate that measured nothing fails, naming the arms whose
    accuracy is NA (no labelled, reportable run: every item unlabelled, or only on ``dev``).
    """
    na = [s.arm for s in summary if not _measured(s.accuracy)]
    low = [s for s in summary if _measured(s.accuracy) and s.accuracy < fail_under]
    if low:
        shown = ", ".join(f"{s.arm} {s.accuracy:.3f}" for s in low)
        _err(f"accuracy under --fail-under {fail_under:g}: {shown}")
    if na or not summary:
        shown = ", ".join(na) or "no arm"
        _err(
            f"accuracy is NA, nothing was measured, so --fail-under {fail_under:g} fails: {shown} "
            "(no labelled run on a reportable split: label the items, or run them off the dev split)"
        )
    return EXIT_WRONG if low or na or not summary else EXIT_OK


def cmd_cancel(args: argparse.Namespace) -> int:
    """Cancel running benchmarks, or provider batches, from any shell: one JSON line each, then how to resume.

    An id that names no benchmark but a batch (its tag, or a provider's ``batch_...`` id) cancels that batch.
    """
    from hrbench_client.cli.batches import cancel_batch, is_batch_id
    from hrbench_client.errors import NotFound

    with _client(args) as hb:
        for ref in args.ids:
            try:
                if is_batch_id(ref):
                    raise NotFound(f"no benchmark has the id {ref!r}")
                done = hb.cancel_benchmark(ref, grace_s=args.grace)
            except NotFound as no_benchmark:
                try:
                    batch = cancel_batch(hb, ref)
                except NotFound:  # neither: the benchmark's error names the closest ids
                    if is_batch_id(ref):
                        raise
                    raise no_benchmark from None
                _out(batch)
                _err(
                    f"cancelled batch {batch.id or batch.tag} of benchmark {batch.benchmark} ({batch.state})"
                )
                continue
            _out(done)
            left = f"; {done.unknown_note}" if done.unknown_note else ""
            _err(
                f"cancelled {done.id} with {done.rows} row(s) kept{left}; resume with: hrb bench --resume {done.id}"
            )
    return EXIT_OK
