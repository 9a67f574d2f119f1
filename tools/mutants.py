"""The mutation check (``make mutants``): each patch breaks one promise; the suite must catch it.

Every :class:`Mutant` below is a small named patch of hrbench's code (an exact text, found
exactly once in its file, replaced by another) and the focused tests that hold the promise it
breaks. For each one the script applies the patch to a private copy of the repository, runs
those tests there, and puts the file back (on every path: a failure, a timeout, an interrupt).
A patch is *caught* when its tests fail (pytest's exit status 1). The check fails when:

- a patch *survives* (its tests pass: the suite would not notice that promise broken);
- a patch no longer applies (its text is gone or appears more than once: the code moved; the
  patch is rewritten, never skipped);
- its tests do not run as asked (a collection error, a node id that no longer exists, no test
  selected, a timeout), or the focused tests fail on the unpatched code (checked first, once).

The copies are made from the working tree's files (``git ls-files``: tracked and new, not
ignored), one per worker; their tests import the copy's packages (``PYTHONPATH`` puts the copy
before the editable install) and daemons the tests start do too. ``-j N`` runs N patches at
once (default 2).

Usage::

    .venv/bin/python tools/mutants.py            # every patch
    .venv/bin/python tools/mutants.py -k gate -j 1
    .venv/bin/python tools/mutants.py --list
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 900
"""Each patch's tests may take this long (times HRBENCH_TEST_SLOW when set) before the check fails."""


@dataclass(frozen=True)
class Mutant:
    """One patch: ``old`` (found exactly once in ``path``) becomes ``new``; ``tests`` must fail."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


def m(name: str, path: str, old: str, new: str, *tests: str) -> Mutant:
    return Mutant(name, path, old, new, tests)


RUNNER = "tests/unit/runner/"
INTEROP = "tests/unit/interop/"
SCORING = "tests/unit/scoring/"
BUDGET_STOPPED_CLUSTER = (
    RUNNER
    + "test_stopping.py::test_a_cluster_whose_last_runs_the_budget_stopped_is_never_committed_to_the_test"
)

MUTANTS: tuple[Mutant, ...] = (
    # -- keyed labels: a list of labels pairs with the items in the order the author gave them
    m(
        "keyed.client-pairs-sorted-ids",
        "clients/python/hrbench_client/client/outgoing.py",
        "    ids = [str(k) for k in items]\n    changed",
        "    ids = sorted(str(k) for k in items)\n    changed",
        "tests/server/test_reference_keyed.py::test_the_lists_pair_with_the_dicts_own_order_not_its_sorted_ids",
    ),
    m(
        "keyed.library-pairs-sorted-ids",
        "hrbench/reference.py",
        "    return dict(zip(ids, value, strict=True))",
        "    return dict(zip(sorted(ids), value, strict=True))",
        "tests/unit/test_reference_keyed.py",
    ),
    m(
        "keyed.mapping-read-by-position",
        "hrbench/reference.py",
        "        return {i: value.get(i, default) for i in ids}",
        "        return dict(zip(ids, value.values()))",
        "tests/unit/test_reference.py",
        "tests/unit/test_reference_keyed.py",
    ),
    m(
        "keyed.tuple-beside-a-mapping-taken",
        "hrbench/reference.py",
        "    listed = [name for name, value in per_item.items() if isinstance(value, (list, tuple))]",
        "    listed = [name for name, value in per_item.items() if isinstance(value, list)]",
        "tests/unit/test_reference_keyed.py",
    ),
    m(
        "keyed.daemon-pairs-a-list-with-a-mapping",
        "server/hrbench_server/bench_spec.py",
        "        if isinstance(spec, p.ReferenceSpec):\n            check_keyed(",
        "        if False:\n            check_keyed(",
        "tests/server/test_reference_keyed.py::test_a_list_beside_a_mapping_of_items_is_refused_on_the_wire",
    ),
    # -- reservations and settlement
    m(
        "governor.call-cap-one-over",
        "hrbench/runner/_governor.py",
        "self.max_calls is not None and self.calls + 1 > self.max_calls",
        "self.max_calls is not None and self.calls > self.max_calls",
        RUNNER + "test_governor.py",
    ),
    m(
        "governor.usd-cap-ignores-requests-in-flight",
        "hrbench/runner/_governor.py",
        "self.usd + self._reserved_usd + usd > self.max_usd + 1e-12",
        "self.usd + usd > self.max_usd + 1e-12",
        RUNNER + "test_governor.py",
    ),
    m(
        "governor.token-cap-ignores-requests-in-flight",
        "hrbench/runner/_governor.py",
        "self.tokens + self._reserved_tokens + tokens > self.max_tokens",
        "self.tokens + tokens > self.max_tokens",
        RUNNER + "test_governor.py",
    ),
    m(
        "governor.settlement-keeps-the-hold",
        "hrbench/runner/_governor.py",
        "            self._reserved_usd -= reservation.usd\n            self._reserved_tokens -= reservation.tokens\n"
        "            if lost:",
        "            if lost:",
        RUNNER + "test_governor.py",
        RUNNER + "test_reservation.py",
    ),
    m(
        "governor.an-unsent-attempt-stays-a-call",
        "hrbench/runner/_governor.py",
        "            if not sent:\n                self.calls -= 1",
        "            if False:\n                self.calls -= 1",
        RUNNER + "test_governor_unsent.py",
    ),
    m(
        "reservation.a-lost-reply-booked-at-what-it-says",
        "hrbench/runner/_reservation.py",
        "    return (reservation.usd, reservation.tokens) if lost else (usd, tokens)",
        "    return (usd, tokens)",
        RUNNER + "test_reservation.py",
    ),
    m(
        "reservation.settled-twice",
        "hrbench/runner/_reservation.py",
        "    if reservation.settled:\n        return None\n",
        "",
        RUNNER + "test_reservation.py",
        RUNNER + "test_governor.py",
    ),
    m(
        "reservation.a-retry-keeps-the-failed-attempts-hold",
        "hrbench/runner/_reservation.py",
        "        if self._open is not None:\n            self.governor.settle(self._open, 0.0, 0)\n"
        "            self._open = None\n        self._cleared = False",
        "        self._cleared = False",
        RUNNER + "test_governor.py",
    ),
    m(
        "reservation.a-cancel-gives-back-a-sent-call",
        "hrbench/runner/_reservation.py",
        "        if self._open is not None and not self._cleared:\n            self.unsent()",
        "        if self._open is not None:\n            self.unsent()",
        RUNNER + "test_ledger.py",
    ),
    m(
        "settlement.a-served-again-bill-counts-its-tokens-twice",
        "hrbench/runner/_remade.py",
        "        if step.usage is not None and not again:",
        "        if step.usage is not None:",
        "hrbench/runner/_remade.py",
        RUNNER + "test_draws_resume.py",
    ),
    m(
        "settlement.a-billed-retry-is-not-in-the-row",
        "hrbench/runner/_invoke.py",
        '            elif kind == "attempt":  # a retried attempt the provider billed',
        "            elif False:  # a retried attempt the provider billed",
        "tests/unit/models/test_rows_match_the_bill.py::test_rows_carry_every_billed_attempt_of_a_reply_with_no_text",
    ),
    # -- a failed call never reaches a scorer
    m(
        "failed.an-ok-false-mapping-is-scored",
        "hrbench/runner/_invoke.py",
        '        if output.get("ok") is False:\n            return output\n',
        "",
        RUNNER + "test_failed_calls.py",
    ),
    m(
        "failed.an-arms-reported-error-is-scored",
        "hrbench/runner/_invoke.py",
        '    if kind in ("error", "budget_stop", "reasoning_exhausted"):\n        return kind, None',
        '    if kind in ("budget_stop", "reasoning_exhausted"):\n        return kind, None',
        RUNNER + "test_failed_calls.py",
        RUNNER + "test_run_errors.py",
    ),
    # -- the stop guard (stop when sure)
    m(
        "stop.a-budget-stopped-cluster-is-committed",
        "hrbench/runner/_stopping.py",
        "            if self._blocked or any(",
        "            if self._blocked and any(",
        BUDGET_STOPPED_CLUSTER,
    ),
    m(
        "stop.an-unfinished-cluster-is-committed",
        "hrbench/runner/_stopping.py",
        "            if self._left[cluster]:\n                break",
        "            if False:\n                break",
        RUNNER
        + "test_stopping.py::test_a_clear_winner_stops_early_with_the_cancelled_clusters_kept_unreportable_and_paid",
    ),
    m(
        "stop.a-budget-stop-ends-as-max-clusters",
        "hrbench/runner/_stopping.py",
        'await self._end(self.reason or ("budget" if self._budget else "max_clusters"))',
        'await self._end(self.reason or "max_clusters")',
        BUDGET_STOPPED_CLUSTER,
    ),
    m(
        "stop.cancelled-clusters-are-reported",
        "hrbench/runner/_stopping.py",
        "                await self._give(cluster, self._where[cluster] < self.committed)",
        "                await self._give(cluster, True)",
        RUNNER + "test_stopping.py",
    ),
    m(
        "stop.a-sequence-of-an-earlier-commit-is-read",
        "hrbench/stats/_sequential_test.py",
        "        self._cs.clear()\n",
        "",
        "tests/unit/stats/test_sequential_incremental.py::test_the_incremental_test_decides_and_reports_as_the_full_recomputation",
    ),
    m(
        "stop.a-commit-runs-on-the-event-loop",
        "hrbench/runner/_stopping.py",
        "                    n = await anyio.to_thread.run_sync(self._commit, ready)",
        "                    n = self._commit(ready)",
        RUNNER + "test_stopping_oracle.py::test_the_gate_commits_off_the_event_loop",
    ),
    # -- each import's field mapping
    m(
        "inspect.an-empty-target-is-a-label",
        "hrbench/interop/_inspect_read.py",
        '    return None if target == "" or target == [] else target',
        "    return target",
        INTEROP + "test_inspect_logs.py",
        INTEROP + "test_imported.py",
    ),
    m(
        "inspect.a-failed-sample-is-scored",
        "hrbench/interop/_inspect_read.py",
        '        out = ErrorRun(str(err.get("message") or "error")) if isinstance(err, dict) else _output(s)',
        "        out = _output(s)",
        INTEROP + "test_inspect_logs.py",
        INTEROP + "test_imported.py",
    ),
    m(
        "inspect.cache-reads-left-out-of-tokens-in",
        "hrbench/interop/_inspect_read.py",
        '            _count(u.get("input_tokens"))\n            + _count(u.get("input_tokens_cache_read"))\n',
        '            _count(u.get("input_tokens"))\n',
        INTEROP + "test_inspect_imported.py",
        INTEROP + "test_inspect_logs.py",
    ),
    m(
        "inspect.the-choices-text-ignored",
        "hrbench/interop/_inspect_read.py",
        "        if text is not None:\n            return text\n",
        "",
        INTEROP + "test_inspect_logs.py",
        INTEROP + "test_imported.py",
    ),
    m(
        "lmeval.a-loglikelihood-not-greedy-is-right",
        "hrbench/interop/_lmeval.py",
        '        return [rec["target"] if greedy else {"text": None, "failure_kind": "wrong"}], rec["target"]',
        '        return [rec["target"]], rec["target"]',
        INTEROP + "test_lmeval.py",
    ),
    m(
        "lmeval.the-least-likely-choice-is-picked",
        "hrbench/interop/_lmeval.py",
        "    return [scores.index(max(scores))], gold",
        "    return [scores.index(min(scores))], gold",
        INTEROP + "test_lmeval.py",
    ),
    m(
        "lmeval.mutual-info-reads-the-unconditional-half",
        "hrbench/interop/_lmeval.py",
        "        lls = lls[: len(lls) // 2]",
        "        lls = lls[len(lls) // 2 :]",
        INTEROP + "test_lmeval.py",
    ),
    m(
        "promptfoo.repeats-by-file-position",
        "hrbench/interop/_promptfoo.py",
        'results = sorted(enumerate(body["results"]), key=lambda nr: (nr[1].get("testIdx", 0), nr[0]))',
        'results = list(enumerate(body["results"]))',
        INTEROP + "test_promptfoo.py::test_repeats_are_ordered_by_test_idx_not_by_file_position",
    ),
    m(
        "promptfoo.a-templated-label-unrendered",
        "hrbench/interop/_promptfoo.py",
        '            return render_value(a.get("value"), test_vars, where)',
        '            return a.get("value")',
        INTEROP + "test_promptfoo.py",
    ),
    m(
        "promptfoo.an-error-result-is-scored",
        "hrbench/interop/_promptfoo.py",
        '    if result.get("failureReason") == _ERROR or (response.get("error") and response.get("output") is None):',
        '    if response.get("error") and response.get("output") is None:',
        INTEROP + "test_promptfoo.py",
        INTEROP + "test_imported.py",
    ),
    # -- each scorer's decided rules
    m(
        "exact.a-full-stop-folded-away",
        "hrbench/scoring/_scorer.py",
        '    return _SPACE.sub(" ", caseless(text)).strip()',
        '    return _SPACE.sub(" ", caseless(text)).strip().rstrip(".")',
        SCORING + "test_scorer_cases.py",
        SCORING + "test_scorer.py",
    ),
    m(
        "exact.curly-quotes-kept",
        "hrbench/scoring/_scorer.py",
        '        text = fold_minus(unicodedata.normalize("NFKC", text).translate(_QUOTES))',
        '        text = fold_minus(unicodedata.normalize("NFKC", text))',
        SCORING + "test_scorer_cases.py",
        SCORING + "test_scorer.py",
    ),
    m(
        "exact.not-in-document-is-just-wrong",
        "hrbench/scoring/_scorer.py",
        '            return Score(correct=False, outcome=seen, failure_kind="not_in_document")',
        '            return Score(correct=False, outcome=seen, failure_kind="wrong")',
        SCORING + "test_scorer_cases.py",
        SCORING + "test_scorer.py",
    ),
    m(
        "label.float-noise-kept",
        "hrbench/scoring/_scorer.py",
        "        return [written] if short == written else [written, short]",
        "        return [written]",
        SCORING + "test_scorer.py",
        SCORING + "test_numeric_noise.py",
    ),
    m(
        "label.a-number-in-exponent-form",
        "hrbench/scoring/_scorer.py",
        '    d = Decimal(repr(x)) if isinstance(x, float) else Decimal(x)\n    s = format(d, "f")',
        "    d = Decimal(repr(x)) if isinstance(x, float) else Decimal(x)\n    s = str(d)",
        SCORING + "test_scorer_cases.py",
        SCORING + "test_scorer.py",
    ),
    m(
        "choice.the-article-a-is-a-letter",
        "hrbench/scoring/_choice.py",
        '_WORD = rf"(?<=[AI])(?:',
        '_WORD = rf"(?<=[I])(?:',
        SCORING + "test_choice_words.py",
    ),
    m(
        "choice.an-unread-answer-falls-back-to-options",
        "hrbench/scoring/_choice.py",
        "    if unread.search(t):\n        return set()\n",
        "",
        SCORING + "test_more_scorers.py",
        SCORING + "test_choice_words.py",
    ),
    m(
        "numeric.tolerance-relative-to-the-output",
        "hrbench/scoring/_numeric.py",
        "Decimal(repr(rel_tol)) * abs(b))",
        "Decimal(repr(rel_tol)) * abs(a))",
        SCORING + "test_more_scorers.py",
        SCORING + "test_numerals.py",
    ),
    m(
        "squad.articles-kept",
        "hrbench/scoring/_squad.py",
        '_ARTICLES = re.compile(r"\\b(a|an|the)\\b", re.UNICODE)',
        '_ARTICLES = re.compile(r"\\b(an)\\b", re.UNICODE)',
        SCORING + "test_more_scorers.py",
        SCORING + "test_inspect_oracle.py",
    ),
    m(
        "answer-contains.percent-forms-not-accepted",
        "hrbench/scoring/_answer.py",
        "        forms = [m.group(1) + p for p in _PERCENT_FORMS] if m else [f]",
        "        forms = [f]",
        "tests/unit/reading/test_number_noise_forms.py",
    ),
    m(
        "answer-contains.an-abstention-is-just-wrong",
        "hrbench/scoring/_answer.py",
        '        return Score(correct=False, outcome=outcome, failure_kind="not_in_document")\n'
        '    return Score(correct=False, outcome=outcome, failure_kind="wrong")',
        '        return Score(correct=False, outcome=outcome, failure_kind="wrong")\n'
        '    return Score(correct=False, outcome=outcome, failure_kind="wrong")',
        "tests/unit/reading/test_answer_scorer.py",
        "tests/unit/reading/test_answer_edges.py",
        "tests/unit/reading/test_not_found.py",
    ),
    m(
        "judge.a-verdict-read-from-prose",
        "hrbench/scoring/_judge.py",
        '    m = _WORD.fullmatch(text) if kind == "correct" else _NUMBER.fullmatch(text)',
        '    m = _WORD.search(text) if kind == "correct" else _NUMBER.fullmatch(text)',
        "tests/unit/models/test_judge.py",
    ),
    m(
        "judge.the-pass-mark-exclusive",
        "hrbench/scoring/_judge.py",
        "int(grade) >= self.pass_mark",
        "int(grade) > self.pass_mark",
        "tests/unit/models/test_judge.py::test_rubric_pass_mark_and_user_template",
    ),
    # -- the gate's decision
    m(
        "gate.decided-on-the-lower-bound",
        "hrbench/stats/_gate.py",
        "    if c.ci_high < -max_drop:",
        "    if c.ci_low < -max_drop:",
        "tests/unit/stats/test_gate.py",
    ),
    m(
        "gate.two-sided-level",
        "hrbench/stats/_gate.py",
        "level=1 - 2 * alpha,",
        "level=1 - alpha,",
        "tests/unit/stats/test_gate.py",
    ),
    m(
        "gate.a-stopped-baseline-is-gated",
        "hrbench/stats/_gate.py",
        '    for stop, field in ((stop_c, "candidate"), (stop_b, "baseline")):',
        '    for stop, field in ((stop_c, "candidate"),):',
        "tests/unit/stats/test_gate.py",
    ),
    m(
        "gate.a-baseline-of-few-of-the-candidates-items-is-gated",
        "hrbench/stats/_gate.py",
        "    if 2 * shared < len(cand):",
        "    if shared == 0:",
        "tests/unit/stats/test_gate.py",
    ),
    m(
        "gate.the-drop-ignored",
        "hrbench/stats/_gate.py",
        "    if c.ci_high < -max_drop:",
        "    if c.ci_high < 0:",
        "tests/unit/stats/test_gate.py",
    ),
)


class Broken(Exception):
    """The check cannot be made as asked: a patch that no longer applies, tests that do not run."""


def check_applies(mutants: tuple[Mutant, ...]) -> None:
    """Raise :class:`Broken` naming every patch whose text is not in its file exactly once."""
    bad = []
    names = [mu.name for mu in mutants]
    for name in {n for n in names if names.count(n) > 1}:
        bad.append(f"{name}: two patches have this name")
    for mu in mutants:
        path = ROOT / mu.path
        if not path.is_file():
            bad.append(f"{mu.name}: {mu.path} does not exist")
            continue
        n = path.read_text(encoding="utf-8").count(mu.old)
        if n != 1:
            bad.append(
                f"{mu.name}: its text is in {mu.path} {n} times, not once: the patch no longer applies"
            )
        if mu.old == mu.new:
            bad.append(f"{mu.name}: the patch changes nothing")
        if not mu.tests:
            bad.append(f"{mu.name}: names no test")
    if bad:
        raise Broken("\n".join(bad))


def _files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def make_copy(dest: Path, files: list[str]) -> None:
    """Copy the working tree's files (not ``.venv``, ``.git`` or what git ignores) to ``dest``."""
    for f in files:
        target = dest / f
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, target)


def environment(copy: Path) -> dict[str, str]:
    """The tests' environment in a copy: its packages first, the shared data where it is."""
    shared = ROOT.parent / "shared"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONHOME")}
    env.update(
        PYTHONPATH=os.pathsep.join(str(copy / p) for p in (".", "server", "clients/python")),
        PYTHONPYCACHEPREFIX=str(copy / ".pycache"),
        HRBENCH_DATA=os.environ.get("HRBENCH_DATA") or str(shared / "data"),
        HRBENCH_CASES=os.environ.get("HRBENCH_CASES") or str(shared / "cases"),
        HRBENCH_SEEDS=os.environ.get("HRBENCH_SEEDS") or str(shared / "seeds"),
    )
    return env


def check_imports(copy: Path, env: dict[str, str]) -> None:
    """Raise :class:`Broken` unless a process in ``copy`` imports the copy's packages."""
    code = "import hrbench, hrbench_server, hrbench_client; print(hrbench.__file__, hrbench_server.__file__, hrbench_client.__file__)"
    got = subprocess.run(
        [sys.executable, "-P", "-c", code], cwd=copy, env=env, capture_output=True, text=True, check=False
    )
    paths = got.stdout.split()
    if got.returncode != 0 or len(paths) != 3 or not all(Path(p).is_relative_to(copy) for p in paths):
        raise Broken(
            f"a process in the copy {copy} does not import the copy's packages: {got.stdout}{got.stderr}"
        )


def timeout_s() -> float:
    slow = os.environ.get("HRBENCH_TEST_SLOW")
    return TIMEOUT_S * (float(slow) if slow else 1.0)


def pytest(copy: Path, env: dict[str, str], tests: tuple[str, ...], *extra: str) -> tuple[int, str, float]:
    """Run ``tests`` in ``copy``: (pytest's exit status or -1 on a timeout, its output's tail, seconds)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *extra, *tests]
    start = time.monotonic()
    with subprocess.Popen(
        cmd, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    ) as proc:
        try:
            out, _ = proc.communicate(timeout=timeout_s())
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, _ = proc.communicate()
            rc = -1
        except BaseException:  # an interrupt: the tests' processes end with the check
            os.killpg(proc.pid, 9)
            raise
    tail = "\n".join(out.decode(errors="replace").strip().splitlines()[-15:])
    return rc, tail, time.monotonic() - start


def run_one(mu: Mutant, index: int, copy: Path, env: dict[str, str]) -> tuple[str, str, float]:
    """Apply ``mu`` in ``copy``, run its tests, put the file back: (verdict, detail, seconds)."""
    path = copy / mu.path
    before = path.read_bytes()
    stat = path.stat()
    text = before.decode("utf-8")
    if text.count(mu.old) != 1:
        return "broken", f"its text is in {mu.path} {text.count(mu.old)} times, not once", 0.0
    try:
        path.write_bytes(text.replace(mu.old, mu.new).encode("utf-8"))
        # a distinct mtime per patch: a cached bytecode of another patch of the same size is never reused
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + (index + 1) * 1_000_000_000_000))
        rc, tail, seconds = pytest(copy, env, mu.tests)
    finally:
        path.write_bytes(before)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    if rc == 1:
        return "caught", "", seconds
    if rc == 0:
        return "SURVIVED", f"its tests pass with the patch: {' '.join(mu.tests)}", seconds
    why = "timed out" if rc == -1 else f"pytest exited {rc} (not a test failure)"
    return "broken", f"{why}:\n{tail}", seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-j", type=int, default=int(os.environ.get("MUTANTS_JOBS", "2")), help="patches at once")
    ap.add_argument(
        "-k", metavar="TEXT", action="append", help="only the patches whose name contains TEXT (repeatable)"
    )
    ap.add_argument("--list", action="store_true", help="print the patches' names and exit")
    ap.add_argument(
        "--tests", nargs="+", metavar="TEST", help="run these tests for the chosen patches instead of theirs"
    )
    args = ap.parse_args(argv)
    chosen = tuple(
        mu if not args.tests else Mutant(mu.name, mu.path, mu.old, mu.new, tuple(args.tests))
        for mu in MUTANTS
        if args.k is None or any(k in mu.name for k in args.k)
    )
    if args.list:
        for mu in chosen:
            print(f"{mu.name:55} {mu.path}")
        print(f"{len(chosen)} patch(es)")
        return 0
    if not chosen:
        print(f"mutants: no patch name contains {args.k!r}", file=sys.stderr)
        return 2
    try:
        check_applies(MUTANTS)
    except Broken as exc:
        print(f"mutants: FAILED before running:\n{exc}", file=sys.stderr)
        return 1
    jobs = max(1, min(args.j, len(chosen)))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hrbench-mutants-") as tmp:
        files = _files()
        copies = [Path(tmp) / f"copy{i}" for i in range(jobs)]
        for c in copies:
            make_copy(c, files)
        envs = [environment(c) for c in copies]
        try:
            for c, e in zip(copies, envs, strict=True):
                check_imports(c, e)
        except Broken as exc:
            print(f"mutants: FAILED: {exc}", file=sys.stderr)
            return 1
        union = tuple(dict.fromkeys(t for mu in chosen for t in mu.tests))
        rc, tail, seconds = pytest(copies[0], envs[0], union, *(("-n", str(jobs)) if jobs > 1 else ()))
        print(f"mutants: the focused tests on the unpatched code: exit {rc} in {seconds:.0f} s", flush=True)
        if rc != 0:
            print(f"mutants: FAILED: the focused tests do not pass without a patch:\n{tail}", file=sys.stderr)
            return 1
        free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(jobs):
            free.put(i)
        lock = threading.Lock()
        results: dict[str, str] = {}

        def one(index: int, mu: Mutant) -> None:
            w = free.get()
            try:
                verdict, detail, secs = run_one(mu, index, copies[w], envs[w])
            finally:
                free.put(w)
            with lock:
                results[mu.name] = verdict
                print(f"{verdict:9} {mu.name:55} {secs:5.1f} s", flush=True)
                if detail:
                    print("          " + detail.replace("\n", "\n          "), flush=True)

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for f in [pool.submit(one, i, mu) for i, mu in enumerate(chosen)]:
                f.result()
    bad = {n: v for n, v in results.items() if v != "caught"}
    took = time.monotonic() - start
    print(f"mutants: {len(results) - len(bad)} of {len(chosen)} patches caught in {took:.0f} s", flush=True)
    if bad:
        print("mutants: FAILED: " + ", ".join(f"{n} ({v})" for n, v in bad.items()), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
