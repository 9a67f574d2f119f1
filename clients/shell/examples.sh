#!/usr/bin/env bash
# hrb from the shell: every command prints JSON lines on stdout (pipe them to jq).
# Exit codes (also in `hrb --help`):
#   0    ok: every run was scored (right or wrong)
#   1    an output scored wrong (`hrb score --check`); an accuracy under --fail-under, or NA
#        there (nothing was measured); no daemon runs (`hrb daemon status`)
#   2    usage or invalid input: bad arguments, an invalid spec or JSON line, an unknown or
#        ambiguous benchmark id, id prefix or name (NotFound), a report of fewer than 5 runs
#        without --descriptive; under `hrb score`, a label or output the scorer cannot read
#   3    runs ended in errors (stderr counts them by arm and cause), the daemon died or was
#        stopped while `hrb bench` ran, `hrb cancel ID` from another shell, or a daemon or
#        transport error (no daemon could be reached or started)
#   4    a budget stopped the benchmark: stderr prints the command that resumes it
#   130  interrupted by Ctrl-C (the benchmark is cancelled; `hrb bench --resume ID` finishes it)
#   141  the output closed before the command finished (`| head`): nothing more is printed
set -euo pipefail

# Score one output (a daemon starts on first use; `hrb daemon stop` ends it).
hrb score --label Paris "  paris "
hrb score --scorer answer_contains --label 8000 "About 8,000 people live there." --check

# Score many: JSON lines {"output", "label", "item"?} on stdin, one verdict per line. A bad line
# stops the input: the verdicts of the lines before it are printed, then "hrb: stdin line N: ..."
# and exit 2.
printf '%s\n' '{"output": "Lima", "label": "Lima"}' '{"output": "Quito", "label": ["Lima"]}' | hrb score

# Run a benchmark from a TOML spec; rows stream as JSON lines, the last line is the result.
id=$(hrb bench examples/capitals.toml | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
hrb rows "$id" --limit 3
hrb report "$id" --text
# The daemon writes the PNG (needs matplotlib: pip install 'hrbench[plot]'); "plot" in the JSON is
# its absolute path (a relative FILE is taken from the current directory). A temporary folder here,
# so that running this script leaves no file behind.
out=$(mktemp -d)
hrb report "$id" --plot "$out/report.png"
rm -r "$out"

# References kept in the daemon's store, by name.
hrb ref list

# The shared daemon: `status` prints {"running": false} and exits 1 when none runs (it never starts
# one), so scripts test it directly; `stop` returns once the daemon process has exited.
if hrb daemon status >/dev/null; then echo "a daemon is running"; fi
hrb daemon stop
