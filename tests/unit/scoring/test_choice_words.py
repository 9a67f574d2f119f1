"""``choice``: "I", "A" and "a" used as words after a cue are never letters; dressed, they are.

With the default letters A-J, "Answer: I'm not sure, but B" once read the pronoun as option I and
"Answer: A good answer is B" the article as option A. The family: pronouns ("I think", "I'd say",
"I'm", "I\u2019ll"), articles ("A good answer is", "a careful reading"), after every cue
("answer", "option", "choice") and after a join ("Answer: B and I'm sure"); and the letter
forms that stay letters ("(A)", "A)", "A.", "A because", "I is correct", "a) Paris").
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrbench as hb
from hrbench.scoring._choice import read_choice

CHOICE = hb.choice_scorer()  # the default letters A-J: I is an option

CUES = [
    "Answer: ",
    "ANSWER: ",
    "The answer is ",
    "Final answer: ",
    "**Answer:** ",
    "answer = ",
    "Option ",
    "My choice: ",
]
PRONOUN = [
    "I'm not sure",
    "I\u2019m not sure",
    "I'd say",
    "I\u2019d say",
    "I've checked",
    "I'll go with",
    "I think",
    "I believe",
    "I would say",
    "I am fairly sure it is",
    "I cannot tell, but",
    "I guess",
    "I pick",
    "I also like",
    "I only know",
    "I computed it as",
]
ARTICLE = [
    "A good answer is",
    "A careful reading shows",
    "A tough one, but",
    "A correct reading gives",
    "A likely choice:",
    "A quick check says",
    "A glass of water:",
]
# The letter stays a letter: dressed, alone, or followed by a word that follows a named letter
LETTER_FORMS = [
    "{x}",
    "{x}.",
    "{x})",
    "({x})",
    "[{x}]",
    "**{x}**",
    "${x}",
    "{x}) Paris",
    "{x}. Paris",
    "{x}: Paris",
    "{x} - Paris",
    "{x} (Paris)",
    "{x}, because it fits",
    "{x} because the treaty was signed in 1918",
    "{x} since it fits",
    "{x} is correct",
    "{x} was right",
    "{x} fits best",
    "{x} as shown",
    "{x}\nthe reasoning follows",
    "({x}) good choice",
    "**{x}** good choice",
]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Answer: I'm not sure, but B", set()),  # the cue's letter is hidden: refused, never I
        ("Answer: A good answer is B", {"B"}),  # the article passes; the second cue reads B
        ("Answer: I think the answer is C", {"C"}),
        ("Answer: I'd say C", set()),
        ("The answer is I think (D).", set()),
        ("Answer: a good one, (B) maybe", set()),
        ("Answer: B and I'm sure of it", {"B"}),  # a pronoun after a join is no second pick
        ("Answer: B, I think", {"B"}),
        ("Answer: B or A good alternative", {"B"}),
        ("Option I think is best: (C)", {"C"}),
        ("Answer: I", {"I"}),
        ("Answer: I.", {"I"}),
        ("The answer is I because the series diverges.", {"I"}),
        ("Answer: A or I", {"A", "I"}),  # two letters joined: a hedge, refused by the scorer
        ("Answer: A is correct", {"A"}),
        ("Answer: a) Paris", {"A"}),  # a bracket makes the lower-case letter a letter
        ("The answer is b) 1918", {"B"}),
        ("ANSWER: b", set()),  # a bare lower-case letter after a cue stays refused
        ("A", {"A"}),
        ("I", {"I"}),
        ("A.", {"A"}),
        ("(A)", {"A"}),
        ("A)", {"A"}),
    ],
)
def test_choice_words_and_letters_after_a_cue(output: str, expected: set[str]) -> None:
    assert read_choice(output) == expected


@pytest.mark.parametrize("phrase", PRONOUN + ARTICLE)
@pytest.mark.parametrize("cue", CUES)
def test_choice_a_pronoun_or_article_after_a_cue_is_no_letter(cue: str, phrase: str) -> None:
    text = f"{cue}{phrase} something."
    assert read_choice(text) == set(), text
    for label in ("A", "I"):
        assert CHOICE(None, text, label).correct is False, text


@given(
    st.sampled_from(CUES),
    st.sampled_from(PRONOUN + ARTICLE),
    st.sampled_from(["", " it.", " the second, but (B).", " more; (C) and (D)."]),
    st.sampled_from(["", "Let me think.\n", "(E) is out.\n"]),
)
def test_property_a_word_after_a_cue_never_picks_a_or_i(
    cue: str, phrase: str, rest: str, before: str
) -> None:
    text = before + cue + phrase + rest
    found = read_choice(text)
    assert not found & {"A", "I"}, text
    for label in ("A", "I"):
        assert CHOICE(None, text, label).correct is False, text


@given(
    st.sampled_from(CUES),
    st.sampled_from(PRONOUN + ARTICLE),
    st.sampled_from("BCDEFGHJ"),
    st.sampled_from(["Answer: {y}", "the answer is ({y})", "\\boxed{{{y}}}", "<answer>{y}</answer>"]),
)
def test_property_a_word_after_a_cue_lets_a_later_final_mark_decide(
    cue: str, phrase: str, y: str, mark: str
) -> None:
    text = f"{cue}{phrase} it.\nSo {mark.format(y=y)}."
    assert read_choice(text) == {y}, text
    assert CHOICE(None, text, y).correct is True, text


@given(
    st.sampled_from(CUES),
    st.sampled_from(["A", "I", "C", "J"]),
    st.sampled_from(LETTER_FORMS),
)
def test_property_a_letter_after_a_cue_stays_a_letter(cue: str, x: str, form: str) -> None:
    text = cue + form.format(x=x)
    assert read_choice(text) == {x}, text
    assert CHOICE(None, text, x).correct is True, text


@given(
    st.sampled_from(["Answer: {x} and ", "Answer: {x}, ", "The answer is {x} or maybe "]),
    st.sampled_from("BCDEFGH"),
    st.sampled_from(PRONOUN + ARTICLE),
)
def test_property_a_word_after_a_join_is_no_second_pick(join: str, x: str, phrase: str) -> None:
    text = join.format(x=x) + phrase + " it."
    assert read_choice(text) == {x}, text
    assert CHOICE(None, text, x).correct is True, text
