"""Scoring: the official metrics that scorers and ``evaluate()``'s metrics share (SQuAD v2.0, TAT-QA)."""
