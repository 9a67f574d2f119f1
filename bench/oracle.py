"""inspect_ai's scorer tests as an oracle: the tally, and each fault.

Runs every case of ``tests/unit/oracle/inspect_scorer_cases.json`` (the inputs of inspect_ai's
``tests/scorer/``: match, pattern, answer, choice, exact, f1, math, model-graded grade parsing)
through the hrbench scorer that does the same job, and prints how many were ported, how many give
inspect's outcome, how many differ by a written hrbench rule, and the faults: cases where hrbench
does not give what its own rules say (goal: 0). Each fault is listed with its input, what hrbench
gives and what it should give. ``tests/unit/scoring/test_inspect_oracle.py`` asserts the same cases.

Usage: .venv/bin/python bench/oracle.py [--by-file]
Exit status: 0 with no fault, 1 otherwise.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from tests.unit.oracle.inspect_oracle import accepted, tally


def main() -> int:
    start = time.perf_counter()
    t = tally()
    took = time.perf_counter() - start
    faults = t["faults"]
    print(f"inspect_ai tests/scorer/ as an oracle ({took:.1f} s)")
    print("  hrbench: each case's input through the hrbench scorer doing the same job (match, pattern, ...)")
    print("  oracle:  the outcome inspect_ai's own test expects for that input")
    print(f"  ported           {t['ported']:>4}")
    print(f"  same             {t['same']:>4}")
    print(f"  differs by rule  {t['differs by rule']:>4}")
    print(f"  faults           {len(faults):>4}  (goal: 0)")
    if "--by-file" in sys.argv:
        from tests.unit.oracle.inspect_oracle import load

        files = Counter((c["inspect"]["test"].split("::")[0], c["verdict"]) for c in load())
        for (name, verdict), n in sorted(files.items()):
            print(f"    {name:<40} {verdict:<16} {n:>4}")
    for case, got, text in faults:
        reply = case.get("judge_reply", case["output"])
        want = accepted(case)
        print(f"  FAULT {case['id']}")
        print(f"        input {reply!r} against {case['target']!r} by {case['hrbench']}")
        print(
            f"        hrbench gives {got!r} (outcome {text!r}); should give {' or '.join(map(repr, want))}",
            end="",
        )
        print(f" (outcome {case['expected_outcome']!r})" if "expected_outcome" in case else "")
    return 1 if faults else 0


if __name__ == "__main__":
    raise SystemExit(main())
