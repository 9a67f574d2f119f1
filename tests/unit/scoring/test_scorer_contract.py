"""Seed 000's scorer contract at the edges: what a scorer may return."""

from __future__ import annotations

import pytest

import hrbench as hb

REF_ITEMS = {"q1": "France", "q2": "Peru"}
REF_LABELS = ["Paris", "Lima"]


def _ref() -> hb.Reference:
    return hb.Reference(items=REF_ITEMS, labels=REF_LABELS)


def _arm() -> hb.Arm:
    return hb.Arm("fixed", lambda item, ctx: {"France": "Paris", "Peru": "Lima"}[item])


def _bench(scorer, runs: int = 5) -> hb.Bench:
    with pytest.warns(hb.ArmErrorWarning) as seen:
        bench = hb.benchmark(_arm(), _ref(), runs=runs, scorer=scorer)
    bench.warned = [str(w.message) for w in seen]  # type: ignore[attr-defined]
    return bench


# Values that are not a score, as a custom scorer's function may return them by mistake.
NOT_A_SCORE = [
    pytest.param(None, "returned None (a missing `return`?)", id="none"),
    pytest.param("false", "returned 'false'", id="str"),
    pytest.param(1, "returned 1", id="int-one"),
    pytest.param(0.0, "returned 0.0", id="float"),
    pytest.param([True], "returned [True]", id="list"),
    pytest.param((True, None), "returned (True, None)", id="short-tuple"),
    pytest.param({"correct": "yes"}, "malformed score", id="dict-str-correct"),
    pytest.param({"outcome": "Paris"}, "malformed score", id="dict-no-correct"),
    pytest.param(("yes", None, None), "returned correct='yes'", id="tuple-str-correct"),
    pytest.param((1, None, None), "returned correct=1", id="tuple-int-correct"),
    pytest.param(hb.Score(correct=True, outcome=3), "returned outcome=3", id="score-int-outcome"),  # type: ignore[arg-type]
    pytest.param(
        {"correct": None}, "correct=None with no failure_kind on an item with a label", id="na-on-label"
    ),
    pytest.param(hb.Score(correct=None), "correct=None with no failure_kind", id="score-na-on-label"),
]


@pytest.mark.parametrize(("value", "says"), NOT_A_SCORE)
def test_a_value_that_is_not_a_score_is_refused_naming_scorer_and_value(value, says) -> None:
    s = hb.scorer(lambda item, output, label: value, "mine")
    with pytest.raises(hb.ScorerError, match="scorer 'mine'") as err:
        s("France", "Paris", "Paris")
    assert says in str(err.value), err.value


@pytest.mark.parametrize(("value", "says"), NOT_A_SCORE)
def test_in_a_benchmark_it_is_an_error_run_never_a_silent_na(value, says) -> None:
    bench = _bench(hb.scorer(lambda item, output, label: value, "mine"))
    assert {(r.correct, r.failure_kind) for r in bench.rows} == {(False, "error")}
    assert bench.status == "errors"
    for row in bench.rows:
        errors = [s.error for s in bench.traces[row.ledger_id] if s.kind == "error"]
        assert len(errors) == 1 and "scorer 'mine'" in errors[0] and says in errors[0], errors
    assert any("10 of 10" in w and "scorer 'mine'" in w for w in bench.warned), bench.warned  # type: ignore[attr-defined]


def test_a_plain_function_scorer_that_returns_nothing_is_an_error_run() -> None:
    # a plain function passed as scorer=, no `return`
    def my_scorer(item, output, label):
        output.strip().lower() == label.lower()  # noqa: B015 -- the fault under test

    bench = _bench(my_scorer)
    assert bench.status == "errors" and {r.failure_kind for r in bench.rows} == {"error"}
    assert all(r.correct is False for r in bench.rows)
    summary = {s["arm"]: s for s in bench.summary()}
    assert summary["fixed"]["accuracy"] == 0.0


def test_only_some_runs_not_a_score_errors_those_runs_only() -> None:
    calls = {"n": 0}

    def flaky(item, output, label):
        calls["n"] += 1
        return None if item == "Peru" else output == label

    bench = _bench(flaky)
    by_item = {(r.item, r.correct, r.failure_kind) for r in bench.rows}
    assert by_item == {("q1", True, None), ("q2", False, "error")}
    assert bench.status == "errors"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, hb.Score(correct=True)),
        (False, hb.Score(correct=False, failure_kind="wrong")),
        ({"correct": True, "outcome": "paris"}, hb.Score(correct=True, outcome="paris")),
        ((False, "lyon", None), hb.Score(correct=False, outcome="lyon", failure_kind="wrong")),
        (hb.Score(correct=None, failure_kind="refusal"), hb.Score(correct=False, failure_kind="refusal")),
    ],
)
def test_the_score_forms_are_still_read(value, expected) -> None:
    assert hb.scorer(lambda item, output, label: value, "ok")(None, "x", "Paris") == expected


@pytest.mark.parametrize("value", [None, True, {"correct": None}, (None, "x", None)])
def test_na_stays_allowed_on_an_item_with_no_label(value) -> None:
    # seed 000: every run on an item with no label is NA -- but None is still no score at all
    s = hb.scorer(lambda item, output, label: value, "mine")
    if value is None:
        with pytest.raises(hb.ScorerError, match="returned None"):
            s(None, "x", None)
    else:
        assert s(None, "x", None).correct is None


# -- the call signature fn(item, output, label) -----------------------------------------------


def _misordered_1(output, label, item=None):
    return output == label


def _misordered_2(prediction, target, question):
    return prediction == target


def _misordered_3(item, label, output):
    return output == label


def _misordered_4(gold, output, item):
    return output == gold


def _misordered_5(output, label):
    return output == label


def _misordered_6(response, *rest):
    return True


def _too_few(output):
    return True


def _kw_only(*, item, output, label):
    return output == label


@pytest.mark.parametrize(
    "fn",
    [_misordered_1, _misordered_2, _misordered_3, _misordered_4, _misordered_6],
    ids=lambda f: f.__name__,
)
def test_parameter_names_in_another_order_are_refused_naming_the_order(fn) -> None:
    for make in (lambda: hb.scorer(fn, "mine"), lambda: hb.benchmark(_arm(), _ref(), runs=5, scorer=fn)):
        with pytest.raises(hb.ConfigError, match=r"calls fn\(item, output, label\)") as err:
            make()
        assert "reorder the parameters" in str(err.value) and str(err.value).startswith("scorer: ")


@pytest.mark.parametrize("fn", [_misordered_5, _too_few, _kw_only], ids=lambda f: f.__name__)
def test_a_function_that_cannot_take_three_positional_arguments_is_refused(fn) -> None:
    with pytest.raises(hb.ConfigError, match=r"three positional arguments"):
        hb.scorer(fn, "mine")


def _positional(a, b, c):
    return b == c


def _star(*args):
    return args[1] == args[2]


def _seed_names(item, output, label, extra=None):
    return output == label


def _aliases(question, prediction, gold):
    return prediction == gold


def _underscored(_item, output, label):
    return output == label


class _Callable:
    def __call__(self, item, output, label):
        return output == label


@pytest.mark.parametrize(
    "fn",
    [_positional, _star, _seed_names, _aliases, _underscored, _Callable(), lambda i, o, lab: o == lab, min],
    ids=lambda f: getattr(f, "__name__", type(f).__name__),
)
def test_names_in_the_seed_order_or_saying_nothing_are_accepted(fn) -> None:
    s = hb.scorer(fn, "mine")
    if fn is not min:  # a builtin with no signature to read is taken as it is
        assert s("France", "Paris", "Paris").correct is True
        assert s("France", "Lima", "Paris").failure_kind == "wrong"


def test_a_module_scorer_with_its_arguments_out_of_order_is_refused_when_loaded(
    tmp_path, monkeypatch
) -> None:
    from hrbench.specs import build_scorer

    (tmp_path / "nc3_scorers.py").write_text(
        "def flaky(output, label, item=None):\n"
        "    if 'Peru' in str(item) or output == 'Lima':\n"
        "        raise ValueError('cannot parse')\n"
        "    return output.strip().lower() == str(label).lower()\n"
        "def right(item, output, label):\n"
        "    if output == 'Lima':\n"
        "        raise ValueError('cannot parse')\n"
        "    return output.strip().lower() == str(label).lower()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(hb.ConfigError, match=r"scorer 'flaky' takes \(output, label, item=None\)"):
        build_scorer("nc3_scorers:flaky")
    # the same scorer written in the seed's order: the raising run is an error, never wrong
    bench = _bench(build_scorer("nc3_scorers:right"))
    assert {(r.item, r.correct, r.failure_kind) for r in bench.rows} == {
        ("q1", True, None),
        ("q2", False, "error"),
    }
    cause = [
        s.error for r in bench.rows if r.item == "q2" for s in bench.traces[r.ledger_id] if s.kind == "error"
    ]
    assert len(cause) == 5 and all("scorer 'right' raised ValueError: cannot parse" in c for c in cause), (
        cause
    )


class _OwnScorer:
    name = "own"

    def __init__(self, value):
        self.value = value

    def __call__(self, item, output, label):
        return self.value


@pytest.mark.parametrize("value", [None, True, {"correct": True}])
def test_a_scorer_object_of_ones_own_that_returns_no_score_is_an_error_run(value) -> None:
    bench = _bench(_OwnScorer(value))
    assert {r.failure_kind for r in bench.rows} == {"error"} and bench.status == "errors"
