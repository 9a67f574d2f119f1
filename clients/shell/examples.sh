#!/usr/bin/env bash
# hrb from the shell: every command prints JSON lines on stdout (pipe them to jq).
# Exit codes: 0 ok, 1 scored wrong (--check), 2 usage or invalid spec, 3 daemon or run error,
# 130 interrupted (the benchmark is cancelled; `hrb bench --resume ID` finishes it).
set -euo pipefail

# Score one output (a daemon starts on first use; `hrb daemon stop` ends it).
hrb score --label Paris "  paris "
hrb score --scorer answer_contains --label 8000 "About 8,000 people live there." --check

# Score many: JSON lines {"output", "label", "item"?} on stdin, one verdict per line.
printf '%s\n' '{"output": "Lima", "label": "Lima"}' '{"output": "Quito", "label": ["Lima"]}' | hrb score

# Run a benchmark from a TOML spec; rows stream as JSON lines, the last line is the result.
id=$(hrb bench examples/capitals.toml | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
hrb rows "$id" --limit 3
hrb report "$id" --text

# References kept in the daemon's store, by name.
hrb ref list

# The shared daemon.
hrb daemon status
