"""A small bundled document, with questions, for docs and tests."""

from __future__ import annotations

from typing import Any

__all__ = ["example_document", "example_questions"]

_DOCUMENT = """\
Northfield Components: production report for the year 2023

Northfield Components makes steel fittings at two plants. The Sheffield plant produced 12,400 \
units in 2023, up from 11,150 units in 2022. The Leeds plant produced 8,050 units, so the \
company made 20,450 units in all.

The Sheffield plant runs two shifts of 8 hours and employs 214 people. Its main press was \
replaced in March at a cost of \u00a31.2 million. Scrap fell from 4.5% of output to 3.1%, and \
the average fitting weighs 2.75 kg.

Deliveries to customers in Germany took 10-12 days by road. The Leeds plant will close for \
maintenance for three weeks in August 2024. The report was approved by the finance director, \
Priya Raman, on 14 February 2024.
"""

_QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "units-sheffield",
        "question": "How many units did the Sheffield plant produce in 2023?",
        "label": 12400,
    },
    {"id": "units-total", "question": "How many units did the company make in 2023?", "label": 20450},
    {"id": "staff", "question": "How many people does the Sheffield plant employ?", "label": 214},
    {"id": "press-cost", "question": "What did the new press cost?", "label": ["1.2 million", "1,200,000"]},
    {"id": "scrap", "question": "What was the scrap rate?", "label": 3.1},
    {"id": "weight", "question": "How much does the average fitting weigh?", "label": 2.75},
    {"id": "director", "question": "Who approved the report?", "label": "Priya Raman"},
    {
        "id": "leeds-close",
        "question": "When will the Leeds plant close for maintenance?",
        "label": "August 2024",
    },
    {
        "id": "ceo",
        "question": "Who is the chief executive of Northfield Components?",
        "label": "NOT_IN_DOCUMENT",
    },
    {"id": "profit", "question": "What profit did the company make in 2023?", "label": "NOT_IN_DOCUMENT"},
]


def example_document() -> str:
    """A short production report, written for hrbench's docs and tests (the seed's example).

    It holds numbers with thousands separators (12,400), a decimal (2.75 kg), a percentage
    (3.1%), a currency amount (\u00a31.2 million) and a range (10-12 days); it does not say who
    the chief executive is or what profit was made (see :func:`example_questions`).

    Returns:
        The document text.

    Example:
        >>> "12,400 units" in example_document()
        True
    """
    return _DOCUMENT


def example_questions() -> list[dict[str, Any]]:
    """Questions on :func:`example_document`, two of them unanswerable.

    Returns:
        A fresh list of ``{"id", "question", "label"}`` dicts; an unanswerable question has the
        label ``"NOT_IN_DOCUMENT"``. Feed them to :func:`~hrbench.reading.qa_reference` with the
        document as a column.

    Example:
        >>> [q["label"] for q in example_questions()][:2]
        [12400, 20450]
    """
    return [dict(q) for q in _QUESTIONS]
