"""The scorer names ``hrb score --help`` lists: generated from ``hrbench.specs.SCORERS``.

Never hand-edited: ``make schema`` writes it, and a test fails when it is stale.
"""

# fmt: off
SCORERS: dict[str, str] = {
    'exact': 'exact match after folding case and white space',
    'exact_normalised': 'the same as exact',
    'answer_contains': 'the number-aware reading scorer: right when the reply contains an accepted answer',
    'answer': 'the same as answer_contains',
    'numeric': "the reply's number equals the label's, within a tolerance",
    'choice': "the one letter a reply picks equals the label's",
    'pattern': 'what a regex captures, scored by exact, settings {"pattern": ...}',
    'tatqa': 'the official TAT-QA exact match',
    'squad': 'the official SQuAD v2.0 exact match',
    'judge': 'an LLM judge, in a benchmark only, settings {"client": {...}}',
    'tool_sequence': 'the run\'s tool calls match, in a benchmark only, settings {"expected": [...], "mode": "exact"}',
    'tool_args': 'a tool was called with the expected arguments, in a benchmark only, settings {"tool": ..., "expected": {...}}',
    'step_count': 'the run took at most max_steps turns, in a benchmark only, settings {"max_steps": N}',
    'trajectory_judge': 'an LLM judge of the run\'s tool calls and answer, in a benchmark only, settings {"client": {...}}',
}
# fmt: on
"""Scorer name -> what it does, in the registry's order."""
