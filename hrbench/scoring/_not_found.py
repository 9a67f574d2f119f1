"""``is_not_found``: does an answer report that the document does not hold the answer?"""

from __future__ import annotations

import re
from functools import lru_cache

from hrbench.scoring._fold import fold_answer

__all__ = ["is_not_found"]

_DOC = (
    r"(?:passage|document|context|text|article|paragraph|excerpt|source|table|report|"
    r"information|data|snippet)s?"
)
_VERB = (
    r"(?:mention|state|say|specify|contain|include|provide|give|indicate|discuss|address|answer|"
    r"reveal|describe|list|tell|cover|have|hold|offer|explain|identify|name|refer|report|detail|"
    r"show|clarify|disclose|talk|note|suggest|define|support)s?"
)
_ADV = r"(?:(?:explicitly|directly|specifically|clearly|actually|really|precisely|expressly) )?"

# An answer that is nothing but one of these (after trimming punctuation and quotes).
_WHOLE = re.compile(
    r"(?:no answer(?: (?:found|available|given|provided))?|unanswerable|not answerable|unknown|"
    r"not known|n/?a|not applicable|unclear|not clear|cannot say|can't say|cannot tell|can't tell|"
    r"not " + _ADV + r"(?:stated|mentioned|specified|given|provided|available|found|included|listed|"
    r"disclosed|indicated|reported)|(?:i )?(?:do not|don't) know|no idea|no (?:information|info|data|"
    r"mention)|(?:none|nothing) (?:found|given|stated|mentioned)|insufficient (?:information|context|"
    r"data)|(?:it )?(?:cannot|can't|can not) be (?:determined|answered|found|said|known))"
)

# Phrases that say the document lacks the answer, wherever they occur.
_ANYWHERE = re.compile(
    "|".join(
        [
            # 1. the literal marker, in any case and spacing: NOT_IN_DOCUMENT, "not in the document"
            r"not[ _-]?in[ _-]?(?:the[ _-]?|this[ _-]?|that[ _-]?)?document",
            # 2. the question cannot be answered
            r"\bunanswerable\b",
            r"\bnot answerable\b",
            r"\b(?:cannot|can't|can not|could not|couldn't) be answered\b",
            # 3. the reader does not know
            r"\bi (?:do not|don't|did not|didn't) know\b",
            # 4. the document as subject, negated: "the passage does not mention",
            #    "the provided context doesn't specify", "the text fails to say"
            r"\b" + _DOC + r"\b[^.;!?]{0,40}?\b(?:does not|doesn't|do not|don't|did not|didn't|"
            r"does n't|fails? to|failed to)\s+" + _ADV + _VERB + r"\b",
            r"\b" + _DOC + r"\b[^.;!?]{0,40}?\b(?:makes?|made|has|gives?|contains?|provides?) no "
            r"(?:mention|reference|information|answer|indication)\b",
            r"\b" + _DOC + r"\b[^.;!?]{0,20}?\b(?:is|are|was|were) silent\b",
            # 5. "not stated", "not explicitly mentioned", anywhere
            r"\bnot " + _ADV + r"(?:stated|mentioned|specified|disclosed|indicated)\b",
            # 6. "not given in the passage", "not provided by this text", or at the very end
            r"\bnot " + _ADV + r"(?:given|provided|found|available|present|contained|answered|addressed|"
            r"discussed)\s+(?:in|by|within|from|on|anywhere in)\s+"
            r"(?:the|this|that|these|any)\b[^.;!?]{0,30}?\b" + _DOC + r"\b",
            r"\bnot (?:given|provided|available|found|included|listed|present)[.!]?$",
            # 7. "there is no mention / information / answer / specific ..."
            r"\bthere (?:is|are|was|were|'s) no (?:mention|information|info|data|details?|indication|"
            r"reference|record|answer|evidence|specific|particular|such|explicit|direct|clear|"
            r"relevant|way to (?:tell|know|determine|say|answer))\b",
            # 8. "no information is given", "no mention of", "no answer can be found"
            r"\bno (?:relevant |specific |such )?(?:information|info|mention|data|details?|indication|"
            r"answer)\b (?:is |was |are |were |can be |could be )?(?:given|provided|available|found|"
            r"stated|mentioned|present|included|about|on|of|regarding|in|for|to be found)\b",
            r"^no (?:answer|such)\b",
            # 9. "cannot be determined", "unable to find it in the passage"
            r"\b(?:cannot|can't|can not|could not|couldn't|is impossible to|is not possible to) be "
            r"(?:determined|found|inferred|deduced|identified|established|confirmed|known|located)\b",
            r"\b(?:cannot|can't|can not|could not|couldn't|unable to|not possible to|impossible to|"
            r"not able to) (?:determine|find|locate|identify|infer|deduce|answer|tell|say|know|confirm|"
            r"establish|see)\b[^.;!?]{0,60}?\b(?:" + _DOC + r"|given|provided)\b",
            # 10. not enough information
            r"\b(?:not enough|insufficient|no sufficient|too little) (?:information|context|data|"
            r"details?)\b",
            # 11. outside the document
            r"\boutside (?:the scope of )?(?:the|this) " + _DOC + r"\b",
            # 12. the answer is not there
            r"\b(?:the )?answer (?:is not|isn't|was not|cannot be|can't be) " + _ADV + r"(?:in|found|"
            r"present|provided|given|available|contained|stated|mentioned)\b",
            # 13. it is unclear (from the document)
            r"\b(?:it is|it's|this is|that is|remains) (?:unclear|not clear)\b",
            r"\b(?:unclear|not clear|not known|unknown|not evident) (?:from|in|based on|according to) "
            r"(?:the|this|that)\b",
            # 14. an answer that starts by saying so: "does not mention ...", "doesn't say"
            r"^(?:it )?(?:does not|doesn't) " + _ADV + _VERB + r"\b",
        ]
    )
)

_TRIM = " .!?\"'`*()[]"


def _search(folded: str) -> bool:
    if _WHOLE.fullmatch(folded.strip(_TRIM)):
        return True
    return _ANYWHERE.search(folded) is not None


_search_cached = lru_cache(maxsize=1 << 16)(_search)


def _folded_not_found(folded: str) -> bool:
    """``is_not_found`` of an already folded text (short texts cached)."""
    return _search_cached(folded) if len(folded) <= 512 else _search(folded)


def is_not_found(text: str | None) -> bool:
    """Whether an answer says the document does not hold the answer (seed 001).

    The text is folded first (case, curly quotes, white space; see
    :func:`~hrbench.reading.fold_answer`). It reports absence when it is, as a whole (ignoring
    surrounding quotes and punctuation), one of ``NO ANSWER``, ``unanswerable``, ``unknown``,
    ``N/A``, ``not stated`` / ``not mentioned`` / ``not given`` ..., ``I don't know``,
    ``no idea``, ``no information``, ``insufficient information``, ``cannot be determined``;
    or when it contains anywhere:

    1. the literal ``NOT_IN_DOCUMENT`` in any case and spacing ("not in the document");
    2. "unanswerable", "cannot be answered";
    3. "I don't know" / "I do not know";
    4. the document as the subject of a negated verb of telling: "the passage does not
       mention", "the provided context doesn't specify", "the text fails to say", "the
       article makes no mention of", "the passage is silent on";
    5. "not stated", "not (explicitly) mentioned / specified / disclosed / indicated";
    6. "not given / provided / found ... in the passage (or text, context, ...)", or the answer
       ending in "not given", "not provided", "not available" ("not included in the table
       because ..." is a real TAT-QA answer, so "included" and "listed" are left out);
    7. "there is no mention / information / answer / indication / specific ..." ("There is no
       specific period that directly precedes ..." is a real abstention in the bundled data);
    8. "no information is given", "no mention of", an answer starting "no answer" or "no such";
    9. "cannot be determined / found / inferred", or "unable to find / cannot determine ..."
       followed within a sentence by the passage (or "given", "provided");
    10. "not enough / insufficient information";
    11. "outside the scope of the passage";
    12. "the answer is not in / not found / not provided";
    13. "it is unclear", "unclear from the passage";
    14. an answer that starts "does not mention ...".

    So that answers which merely contain "not" or "no" do not fire, a bare "no",
    "none", "no problem", "nothing" or "NOT NP" is an answer, not an abstention (SQuAD and
    TAT-QA answers include "none", "no" and counts of zero); "not known to be", "is not equal
    to", "at no extra charge", "there is no known solution", "it cannot be used to" do not fire;
    nor does a refusal that does not mention the document ("I cannot answer that.", case H10f).

    Args:
        text: the answer text; ``None`` is not a report of absence.

    Returns:
        ``True`` when the text reports that the document does not hold the answer.

    Example:
        >>> is_not_found("not_in_document"), is_not_found("The passage does not mention it.")
        (True, True)
        >>> is_not_found("NP is not equal to P"), is_not_found("I cannot answer that.")
        (False, False)
    """
    if not text:
        return False
    return _folded_not_found(fold_answer(text))
