"""``is_not_found``: ordinary abstentions fire; answers that merely contain "not" or "no" do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hrbench.reading import answer_scorer, is_not_found, qa_reference

ABSTENTIONS = [
    "NOT_IN_DOCUMENT",
    "not_in_document",
    "Not in document.",
    "NOT_IN_DOCUMENT.",
    "'NOT_IN_DOCUMENT'",
    "The answer is not in the document.",
    "The passage does not mention who the CEO is.",
    "The provided context doesn't specify the year.",
    "The text does not say.",
    "The article makes no mention of a profit figure.",
    "The passage is silent on this point.",
    "unanswerable",
    "This question is unanswerable from the passage.",
    "The question cannot be answered from the given context.",
    "Not stated",
    "The amount is not stated.",
    "It is not explicitly mentioned.",
    "Not mentioned in the passage.",
    "This information is not provided in the text.",
    "The year is not given.",
    "I don't know",
    "I don\u2019t know.",
    "I do not know the answer.",
    "NO ANSWER",
    "No answer",
    "There is no information about the CEO in the text.",
    "There is no mention of a chief executive.",
    "No information is given about profit.",
    "It cannot be determined from the context.",
    "This cannot be determined.",
    "I am unable to find the answer in the provided text.",
    "I could not find this in the passage.",
    "Unknown",
    "N/A",
    "Insufficient information.",
    "There is not enough information to answer.",
    "It is unclear from the passage.",
    "That is outside the scope of the document.",
    "Does not mention it.",
    "Doesn't say.",
]

ANSWERS = [
    "NP is not equal to P",
    "co-NP is not equal to NP",
    "They are some of the very few NP problems not known to be",
    "is not a physically realizable model",
    "No Fear and RVCA",
    "BSkyB included Sky+ at no extra charge for customers with",
    "It cannot be used to decrypt other services",
    "It would mean that there is no known polynomial-time solution for \u03a0",
    "I cannot answer that.",  # case H10f: a refusal in words, not a claim about the document
    "I can't help with that.",
    "Sorry for the delay - the total is 1,204.",
    "None",
    "NO",
    "no",
    "no problem",
    "Nothing",
    "NOT NP",
    "Notre-Dame de Paris",
    "The knot was not tied until 1066.",
    "The treaty was not signed by France.",
    "Normandy, not Brittany",
    "the unknown soldier",
    "Sybilla of Normandy",
    "12,400 units",
    "The amount of unfunded pension obligations is not included in the table because they are remeasured",
    "The input does not have a factor below k.",
    "",
]


@pytest.mark.parametrize("text", ABSTENTIONS)
def test_abstentions_fire(text: str) -> None:
    assert is_not_found(text) is True


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_with_not_or_no_do_not_fire(text: str) -> None:
    assert is_not_found(text) is False


def test_none_is_not_a_report() -> None:
    assert is_not_found(None) is False


# -- both directions on the bundled real answers (Llama-3.2-3B on SQuAD 2.0 dev) ---------------
# Real abstentions written in words (the course's marker is "NO ANSWER").
REAL_ABSTENTIONS = {
    "There is no specific architectural period that directly precedes Anglo-Saxon architecture. "
    "Anglo-Saxon architecture is a distinct style that",
    "NO such problem is given",
}
# Real answers containing "not"/"no" that are not abstentions.
REAL_ANSWERS = {
    "is not equal to NP",
    "It would mean that there is no known polynomial-time solution for \u03a0",
    "They are some of the very few NP problems not known to be",
    "NO, it is believed that NP is not equal to co-N",
    "If P is not equal to NP, then P is not equal",
    "No Fear and RVCA",
    "NO, the dispute was in 2007",
    "None, the new brand for OneDrive for Business and OneDrive",
    "NO, the 16th century",
    "is not a physically realizable model",
    "polynomial-time reduction is not the same, polynomial-time reduction is",
    "If P = NP is not solved, and a known NP-complete",
    "NOT NP",
    "None",
    "no problem",
    "ne not equal",
    "NP is not equal to P",
    "co-NP is not equal to NP",
    "NO,",
    "NO",
    "NO 1018",
    "BSkyB included Sky+ at no extra charge for customers with",
    "It cannot be used to decrypt other services",
    "Sky UK Limited is now known as Sky.",
    "There are 17 California University campuses mentioned in the context:",
    "Based on the context, the answer is:",
}


def _runs(data: Path) -> list[tuple[str, str]]:
    runs = sorted((data / "squad2-dev-llama32-3b" / "runs").glob("*.jsonl"))
    assert runs, f"shared data missing: no SQuAD runs under {data} (set HRBENCH_DATA)"
    out = []
    for f in runs:
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out.append((row["qid"], row["prediction"]))
    return out


def test_real_answers_both_directions(data: Path) -> None:
    preds = _runs(data)
    texts = {p for _, p in preds}
    assert REAL_ABSTENTIONS <= texts and REAL_ANSWERS <= texts, "the bundled runs changed"
    fired = {p for p in texts if is_not_found(p)}
    assert fired == {"NO ANSWER"} | REAL_ABSTENTIONS
    assert not (fired & REAL_ANSWERS)
    assert sum(1 for _, p in preds if p == "NO ANSWER") > 700


def test_real_right_answers_never_read_as_abstentions(data: Path) -> None:
    ref = qa_reference(data / "squad2-dev-llama32-3b" / "questions.jsonl")
    s = answer_scorer()
    checked = 0
    for qid, pred in _runs(data):
        label = ref.labels[qid]
        if label == "NOT_IN_DOCUMENT":
            continue
        if s(ref.items[qid], pred, label).correct:
            checked += 1
            assert not is_not_found(pred), pred
    assert checked > 500


def test_real_tatqa_answers_never_fire(data: Path) -> None:
    runs = sorted((data / "tatqa-dev-llm" / "runs").glob("*.jsonl"))
    assert runs, f"shared data missing: no TAT-QA runs under {data} (set HRBENCH_DATA)"
    fired = []
    for f in runs:
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for part in [
                *row["generated"],
                *(row["pred_answer"] if isinstance(row["pred_answer"], list) else []),
            ]:
                if is_not_found(str(part)):
                    fired.append(str(part)[:80])
    assert fired == []  # TAT-QA has no unanswerable questions and these models never abstain
