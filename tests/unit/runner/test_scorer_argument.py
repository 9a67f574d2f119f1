"""A scorer given by its spec name in Python, and a misspelt scorer name in a spec, say what to do.

``hb.benchmark(..., scorer="exact")`` does not point to ``hrbench.scorer()``, which wraps a
function of one's own (``hb.scorer("exact")`` raises a TypeError); ``scorer = "exakt"`` in a spec
lists the names with the closest one.
"""

from __future__ import annotations

import pytest

import hrbench as hb
from hrbench.specs import build_scorer


def _ref() -> hb.Reference:
    return hb.Reference({"q1": "France"}, labels=["Paris"])


def _arm() -> hb.Arm:
    return hb.Arm("ask", lambda item, ctx: "Paris")


def test_a_scorer_name_in_python_names_the_scorer_objects_to_pass() -> None:
    with pytest.raises(hb.ConfigError) as caught:
        hb.benchmark(_arm(), _ref(), scorer="exact")
    text = str(caught.value)
    assert text.startswith("scorer: a scorer's name is for a spec or hrb; in Python pass a scorer: ")
    assert "hb.exact_scorer()" in text and "hrbench.specs.build_scorer('exact')" in text
    assert "hb.scorer(fn, name) for a function of your own" in text and text.endswith("(got 'exact')")
    # what it names works: the spec's "exact" is this scorer
    bench = hb.benchmark(_arm(), _ref(), scorer=build_scorer("exact"))
    assert {r.correct for r in bench.rows} == {True}


def test_something_that_is_no_scorer_is_refused_with_what_to_pass() -> None:
    with pytest.raises(hb.ConfigError) as caught:
        hb.benchmark(_arm(), _ref(), scorer=3)
    assert str(caught.value) == (
        "scorer: expected a scorer: hb.exact_scorer(), or hb.scorer(fn, name) for a function of your own (got 3)"
    )


def test_a_misspelt_scorer_name_gets_the_closest_one() -> None:
    with pytest.raises(hb.ConfigError) as caught:
        build_scorer("exakt")
    text = str(caught.value)
    assert text.startswith("scorer: unknown scorer; did you mean 'exact'? expected exact, ")
    with pytest.raises(hb.ConfigError) as far:
        build_scorer("zzzz")
    assert "did you mean" not in str(far.value)
