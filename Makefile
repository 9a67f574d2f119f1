# hrbench: every target sets up .venv on a fresh machine; nothing is installed by hand.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DATA ?= ../shared/data
HRBENCH_DATA ?= $(abspath $(DATA))
# `make demo DATA=...` wins over an exported HRBENCH_DATA
ifeq ($(origin DATA),command line)
HRBENCH_DATA := $(abspath $(DATA))
endif
export HRBENCH_DATA

.PHONY: help install test test-slow mutants test-docs test-ray test-browser test-interop check lint format types bench demo schema docs docs-serve clean

help:
	@echo "make demo   - a real benchmark on the real data of $(HRBENCH_DATA), through the daemon"
	@echo "make test   - the test suite (fault simulations apart); HRBENCH_TEST_SLOW=3 triples its time limits"
	@echo "make test-slow - the fault simulations (daemons killed, cancelled, stopped, left idle), Monte Carlo checks, property tests in full"
	@echo "make mutants - the mutation check: each patch of tools/mutants.py breaks a promise, and its tests must catch it"
	@echo "make test-ray - the Ray executor's tests on a local Ray cluster (installs the ray extra)"
	@echo "make test-browser - hrb view in a real headless Chromium (installs chromium, playwright)"
	@echo "make test-interop - exports and imports against the real Inspect, lm-eval and promptfoo (installs them in .venv-interop and .interop-npm)"
	@echo "make check  - format check, lint, types, tests"
	@echo "make bench  - every script in bench/"
	@echo "make docs   - build the docs site into site/ (warnings are errors); make docs-serve serves it"
	@echo "make test-docs - run every code block of the README and the docs pages as written"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Eight pytest-xdist workers on two cores: most tests wait on real daemons, servers and
# subprocesses (3 workers kept the idle machine 0.7 cores busy: 7:50 for 3,012 tests; with 6 the
# tests themselves used about 1 core: 6:10-6:26 for 3,367; with 8, 5:14; 4,573 tests took 7:28
# with 8 in a fresh clone, and 7:29 with 10; 24 GB of memory is ample for them; 4,632 took 7:50
# idle, and 19:16 with the machine at a load of 12-13 from other runs). 4,632 now take 14:13 at a
# load of 13-14: the teardowns stop each `hrb`-started daemon with SIGTERM and wait for its exit,
# not for init to reap it (tests._procs.stop_daemon: `hrb daemon stop` waited 1.5 s more each),
# and Monte Carlo simulations and multi-process stress are `slow` too. In a fresh clone on the
# idle machine 4,640 tests took 6:53 with xdist's default distribution and 6:26 with
# `--dist worksteal` (an idle worker takes queued tests from a busy one: the long daemon tests
# no longer end the run on one worker). Fault simulations (daemons SIGKILLed, cancelled,
# stopped or left idle; tests marked `slow`) run apart in `make test-slow`, which .ci/run runs too.
#
# Bytecode caches: the tests start hundreds of daemons and thousands of `hrb` and Python processes,
# and each xdist worker imports every test module. With PYTHONDONTWRITEBYTECODE=1 in the caller's
# shell each of them compiled hrbench (and pytest re-did its assertion rewriting) anew: 0.4 s more
# CPU per daemon start, 10 s more per worker's collection. The test targets write the caches to
# .venv/pycache (PYTHONPYCACHEPREFIX), never beside the sources or into the tests' folders.
# 5,169 tests then took 6:41 with the two cores 99.7% busy (8:55 before, in a fresh clone): the
# tests are CPU-bound, about 60% of it in the ~310 daemons they start (~1 s of imports each).
# Property tests (hypothesis) draw a quarter of their examples in make test (at least 20);
# make test-slow runs every one of them again with all their examples (tests/_examples.py).
# Tests that need no daemon of their own (refusals, scores, reads of one benchmark) share one per
# module and worker (tests/server/conftest.py `shared_daemon`, tests/clients/conftest.py
# `shared_home`): 206 daemons serve in a run instead of 270; with the daemons' lighter start-up
# imports (0.38 s of CPU each, was 0.7) 5,178 tests took 4:25 in a fresh clone (5:01 with the venv).
# Where the CPU goes, from every Python process's own CPU logged at its exit (7,024 tests, load
# 10-13): about 780 s in all. 340 s in the 321 daemons the tests start (~0.45 s of each is its
# start, 0.32 s of that pygls importing lsprotocol.types; the rest is the benchmarks they run);
# 210 s in the tests' own code (61 s in tests/unit/stats, mostly power()'s simulations); 118 s
# fixed in the 8 workers (each collects every module and doctest: ~8 s, then xdist's own work);
# 94 s in 953 `hrb` processes (0.1 s each). Test modules import ppi-python (statsmodels,
# scikit-learn, numba: 1.6 s) and scipy.stats (~1 s) inside the tests that use them, not at
# every worker's collection. 7,024 tests then took 10:35 with another suite running beside them
# (load 9-13); 8:27 in CI before. Of a daemon's ~0.45 s start, ~0.3 s is lsprotocol.types
# (~550 attrs classes, their generated methods compiled): pygls's JSON-RPC layer itself
# (pygls.exceptions, pygls.protocol.json_rpc) imports it, so no plain client's daemon avoids it
# while its dispatch is pygls's. The daemon's start-up imports and each worker's collection run
# with the cyclic collector off, then freeze what they made (a worker's collection: 5.0 s of CPU
# -> 3.7 s; power() is no longer run at collection, which imported scipy.stats in every worker).
# 7,165 tests in a fresh clone (venv install included, ~47 s of CPU): 763.9 s of CPU, 32:41 at a
# load of 15-19 before; 655.5 s, 22:01 at a load of 11-21 after (the load moves both figures).
TEST_ENV := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(abspath $(VENV))/pycache
test: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -q -p no:cacheprovider --ignore=tests/ray_cluster --ignore=tests/interop -n 8 --dist worksteal -m "not browser and not slow and not pages"

test-slow: $(STAMP)
	$(TEST_ENV) HRBENCH_TEST_EXAMPLES=full $(PY) -m pytest -q -p no:cacheprovider --ignore=tests/ray_cluster --ignore=tests/interop -n 8 --dist worksteal -m "(slow or hypothesis) and not browser and not pages"
	$(MAKE) mutants

# The mutation check: each named patch of tools/mutants.py (keyed labels, reservations and
# settlement, the stop guard, each import's field mapping, each scorer's decided rules, the
# gate's decision) is applied to a private copy of the tree, the focused tests that hold its
# promise run there, and every patch must be caught; a patch that no longer applies fails the
# check. Two patches at a time (MUTANTS_JOBS=N for more): 49 patches took 8:23 on the 2-core
# machine at a load of 40-47 from other work, 3:28 of it the focused tests run once unpatched.
mutants: $(STAMP)
	$(PY) tools/mutants.py

# Ray (~240 MB) is an extra, not part of dev: its tests run apart, on a local 2-CPU cluster.
RAY_STAMP := $(VENV)/.ray-installed
$(RAY_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,ray]'
	touch $(RAY_STAMP)

test-ray: $(RAY_STAMP)
	$(PY) -m pytest -q -p no:cacheprovider tests/ray_cluster

# hrb view in Debian's headless Chromium, driven by Playwright's Python package (Playwright's own
# browser download is not used). Installs chromium (apt-get, as root or through sudo) and the
# `browser` extra; screenshots land in out/view-*.png.
CHROMIUM := /usr/bin/chromium
BROWSER_STAMP := $(VENV)/.installed-browser
$(BROWSER_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,browser]'
	touch $(BROWSER_STAMP)

$(CHROMIUM):
	@SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	$$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver

test-browser: $(BROWSER_STAMP) $(CHROMIUM)
	$(PY) -m pytest -q -p no:cacheprovider -m browser tests/view

# Interop with the real tools, offline, none of them a dependency of hrbench, each installed by a
# stamp of its own: inspect-ai 0.3.285 in a venv of its own with hrbench; lm-eval 0.4.13 in the
# same venv with its `api` extra only (its OpenAI-compatible model types; no torch); promptfoo
# 0.123.1 from npm in .interop-npm, with a Node.js 22 from the npm registry's node-linux-* package
# (promptfoo 0.123.1 refuses a Node.js older than 22.22). The peers write their files with their
# own CLIs during the tests (Inspect runs its mockllm model, with tiktoken's encoding from the copy
# hrbench ships; lm-eval and promptfoo a loopback model or their echo and python providers), into
# pytest's temporary folders: nothing they write lands in the repository.
INTEROP := .venv-interop
INTEROP_STAMP := $(INTEROP)/.installed
INSPECT_STAMP := $(INTEROP)/.installed-inspect-ai-0.3.285
$(INTEROP_STAMP): pyproject.toml
	$(PYTHON) -m venv $(INTEROP)
	$(INTEROP)/bin/python -m pip install --quiet --upgrade pip
	$(INTEROP)/bin/python -m pip install --quiet -e '.[dev]'
	touch $(INTEROP_STAMP)

$(INSPECT_STAMP): $(INTEROP_STAMP)
	$(INTEROP)/bin/python -m pip install --quiet 'inspect-ai==0.3.285'
	touch $(INSPECT_STAMP)

LMEVAL_STAMP := $(INTEROP)/.installed-lmeval
$(LMEVAL_STAMP): $(INTEROP_STAMP)
	$(INTEROP)/bin/python -m pip install --quiet 'lm-eval[api]==0.4.13'
	touch $(LMEVAL_STAMP)

INTEROP_NPM := .interop-npm
PROMPTFOO_STAMP := $(INTEROP_NPM)/.installed-promptfoo
NODE_PACKAGE := node-linux-$(subst aarch64,arm64,$(subst x86_64,x64,$(shell uname -m)))@22.23.5
$(PROMPTFOO_STAMP):
	mkdir -p $(INTEROP_NPM)
	npm install --prefix $(INTEROP_NPM) --no-audit --no-fund --loglevel=error promptfoo@0.123.1 $(NODE_PACKAGE)
	touch $(PROMPTFOO_STAMP)

test-interop: $(INSPECT_STAMP) $(LMEVAL_STAMP) $(PROMPTFOO_STAMP)
	$(INTEROP)/bin/python -m pytest -q -p no:cacheprovider tests/interop

format: $(STAMP)
	$(PY) -m ruff format hrbench server clients tests bench examples tools

lint: $(STAMP)
	$(PY) -m ruff check hrbench server clients tests bench examples tools
	$(PY) -m ruff format --check hrbench server clients tests bench examples tools

types: $(STAMP)
	$(PY) -m mypy

check: lint types test test-docs test-slow

# The peers bench/overhead.py times hrbench against (bench/_peers.py), pinned so that a figure
# means the same release from one run to the next: inspect-ai 0.3.285 as in make test-interop
# (its mockllm/model counts tokens with tiktoken's o200k_base, which bench/_peers.py puts in
# tiktoken's cache from the copy hrbench ships: offline, Inspect would fail every sample), and
# DSPy 3.4.1. A new pin is a new stamp, so the venv is brought up to it.
PEERS := .venv-peers/.installed-dspy-3.4.1-inspect-ai-0.3.285
$(PEERS):
	$(PYTHON) -m venv .venv-peers
	.venv-peers/bin/python -m pip install --quiet --upgrade pip
	.venv-peers/bin/python -m pip install --quiet 'dspy==3.4.1' 'inspect-ai==0.3.285'
	touch $(PEERS)

bench: $(STAMP) $(PEERS) $(RAY_STAMP)
	@for f in bench/[!_]*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

schema: $(STAMP)
	$(PY) -m hrbench_client.protocol schema
	$(PY) -c "from hrbench.specs import client_scorers_module as m; open('clients/python/hrbench_client/_scorers.py', 'w').write(m())"
	$(PY) -c "from hrbench._util.atomic import client_copy as m; open('clients/python/hrbench_client/files.py', 'w').write(m())"
	$(PY) -c "from hrbench._util.utf8 import client_copy as m; open('clients/python/hrbench_client/utf8.py', 'w').write(m())"

demo: $(STAMP)
	$(PY) examples/demo.py

# The docs site (MkDocs + Material + mkdocstrings): the `docs` extra, built with warnings as
# errors; the reference pages are generated from the code at build time (docs/_gen/hooks.py).
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet
	$(PY) docs/_gen/check_site.py site

# Every code block of the README and the docs pages, run as written against a daemon and a loopback
# server (tests/docs, marked `pages`): several minutes of `hrb` processes, so apart from make test
# (which still checks the links, the reference entries and the user-facing text); .ci/run runs it.
test-docs: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -q -p no:cacheprovider -n 8 --dist worksteal -m pages tests/docs

docs-serve: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve

clean:
	rm -rf $(VENV) .venv-peers $(INTEROP) .pytest_cache .mypy_cache .ruff_cache site
