"""Shared helpers for the reading tests: an oracle reader over the example document."""

from __future__ import annotations

import re
from typing import Any

from hrbench.reading import example_questions

# How the example document writes each answer (the oracle copies it from the document).
DOC_ANSWERS = {
    "units-sheffield": "12,400",
    "units-total": "20,450",
    "staff": "214",
    "press-cost": "\u00a31.2 million",
    "scrap": "3.1%",
    "weight": "2.75 kg",
    "director": "Priya Raman",
    "leeds-close": "August 2024",
}
BY_QUESTION = {q["question"]: DOC_ANSWERS.get(q["id"]) for q in example_questions()}


def oracle(prompt: str) -> str:
    """Answer like a careful reader: copy the answer when the text shown holds it."""
    if "Answers:\n" in prompt:  # the chunked recipe's combine request: take the first answer
        first = prompt.split("Answers:\n", 1)[1].splitlines()[0]
        return re.sub(r"^\d+\.\s*", "", first)
    question = prompt.rsplit("Question: ", 1)[1].strip()
    document = prompt.split("Document:\n", 1)[1].rsplit("\n\nQuestion: ", 1)[0]
    answer = BY_QUESTION.get(question)
    if answer is not None and answer in document:
        return f"Answer: {answer}"
    return "NOT_IN_DOCUMENT"


def prompt_of(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)
