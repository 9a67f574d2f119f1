"""The house's shape: no import cycle, no module or function a reader must scroll past, the public names kept.

Imports are read with ``ast`` (nothing is imported): every ``import`` and ``from ... import``
in ``hrbench/``, ``server/hrbench_server/`` and ``clients/python/hrbench_client/``, those inside
functions (lazy imports) and under ``if TYPE_CHECKING:`` too. A ``from
pkg import name`` where ``name`` is a module of ``pkg`` is an edge to that module; otherwise to
``pkg`` itself (its ``__init__.py``).

Sizes: a module over :data:`MAX_MODULE_LINES` lines, or a function over
:data:`MAX_FUNCTION_LINES` lines of code (its docstring not counted), must be in
:data:`STILL_OVER` with at most the size listed there: the list only shrinks as the house is
reshaped, and an entry that is back within the limit must leave it.
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "hrbench": ROOT / "hrbench",
    "hrbench_server": ROOT / "server" / "hrbench_server",
    "hrbench_client": ROOT / "clients" / "python" / "hrbench_client",
}
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

# What is still over the limits, with its size today: it may shrink, never grow; a new entry
# fails the test. (path relative to the repository: lines; path::qualified.name: code lines)
STILL_OVER: dict[str, int] = {}


@functools.cache
def _modules() -> dict[str, Path]:
    """Every module of the three packages by dotted name (a package by its ``__init__.py``)."""
    found: dict[str, Path] = {}
    for top, base in PACKAGES.items():
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((top, *parts))] = path
    return found


@functools.cache
def _tree(path: Path) -> ast.Module:
    """Module ``path`` parsed once per process: five checks read the same modules (never changed)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement: lazy ones and those under ``if TYPE_CHECKING:`` included.

    A name imported for type hints alone is still a dependency a reader follows: a loop of
    them is a loop in the design, even though Python never runs it.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(_tree(path)):
            graph[name].update(t for t in _targets(node, package, modules) if t != name)
    return graph


def _targets(node: ast.Import | ast.ImportFrom, package: str, modules: dict[str, Path]) -> list[str]:
    """The modules of ours an import statement names (a name imported from a module: the module)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    found = []
    for target in targets:
        while target and target not in modules:  # `import a.b.c` of a non-module name
            target = target.rpartition(".")[0]
        if target:
            found.append(target)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_and_passes_a_tree() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_lazy_and_type_checking_imports_count() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\nelse:\n    import y\n"
        "def f():\n    import z\n"
    )
    names = sorted(alias.name for node in _imports(tree) for alias in node.names)
    assert names == ["TYPE_CHECKING", "x", "y", "z"]


# Cycles still to be broken, if any: the list only shrinks (it is empty: there are none).
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycle_in_the_library_the_daemon_or_the_clients() -> None:
    cycles = sorted(_cycles(_edges(_modules())))
    new = [c for c in cycles if c not in KNOWN_CYCLES]
    assert not new, "import cycles: " + "; ".join(" <-> ".join(c) for c in new)
    broken = [c for c in KNOWN_CYCLES if c not in cycles]
    assert not broken, f"no longer cycles: take these out of KNOWN_CYCLES: {broken}"


def _room(module: str) -> str:
    """The room a module stands in: ``hrbench``'s first-level package or module, or a whole package.

    Example: ``hrbench.runner.runtime._core`` -> ``hrbench.runner``; ``hrbench.records`` itself;
    ``hrbench_server.methods.score`` -> ``hrbench_server``.
    """
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "hrbench" else parts[0]


def _room_imports() -> list[tuple[str, str, str, int, bool]]:
    """Every import from one room into another: (room, target room, module, line, inside a function)."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = _tree(path)
        in_function = {
            id(node)
            for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(fn)
        }
        for node in _imports(tree):
            for target in _targets(node, package, modules):
                if target != name and _room(target) != _room(name):
                    found.append((_room(name), _room(target), name, node.lineno, id(node) in in_function))
    return found


def _floors(arrows: set[tuple[str, str]], rooms: set[str]) -> dict[str, int]:
    """Each room's floor: 1 for a room that imports no other, else one above the highest it imports."""
    rooms = rooms | {r for arrow in arrows for r in arrow}
    below = {r: {b for a, b in arrows if a == r} for r in rooms}
    floors: dict[str, int] = {}

    def floor(room: str, seen: tuple[str, ...] = ()) -> int:
        if room not in floors:
            assert room not in seen, f"rooms in a circle: {' -> '.join((*seen, room))}"
            floors[room] = 1 + max((floor(b, (*seen, room)) for b in below[room]), default=0)
        return floors[room]

    for room in sorted(rooms):
        floor(room)
    return floors


def test_no_arrow_runs_back_up_between_rooms() -> None:
    """The rooms stand on floors: every import, lazy and type-only ones too, points down."""
    imports = _room_imports()
    graph: dict[str, set[str]] = {}
    for room, target, *_ in imports:
        graph.setdefault(room, set()).add(target)
        graph.setdefault(target, set())
    circles = _cycles(graph)
    where = sorted(
        {
            f"{module}:{line} -> {target}"
            for circle in circles
            for room, target, module, line, _ in imports
            if room in circle and target in circle
        }
    )
    assert not circles, "rooms that import each other (an arrow runs back up):\n" + "\n".join(where)


def test_no_import_inside_a_function_reaches_a_higher_floor() -> None:
    """A lazy import may save start-up time; it may not hide an arrow that would run up.

    The floors are drawn from the imports at module level; an import inside a function may reach
    the same floor or one below, never above (optional extras are no rooms of ours).
    """
    imports = _room_imports()
    rooms = {_room(m) for m in _modules()}
    floors = _floors({(room, target) for room, target, _, _, lazy in imports if not lazy}, rooms)
    up = [
        f"{module}:{line} ({room}, floor {floors[room]}) -> {target} (floor {floors[target]})"
        for room, target, module, line, lazy in imports
        if lazy and floors[target] > floors[room]
    ]
    assert not up, "imports inside functions that reach a higher floor:\n" + "\n".join(up)
    assert sum(lazy for *_, lazy in imports) > 0  # the check sees imports inside functions


def test_the_floor_checks_see_a_circle_and_an_import_up() -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert _floors({("a", "b"), ("b", "c")}, {"d"}) == {"a": 3, "b": 2, "c": 1, "d": 1}
    with pytest.raises(AssertionError, match="rooms in a circle"):
        _floors({("a", "b"), ("b", "a")}, set())


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    lines = (node.end_lineno or node.lineno) - node.lineno + 1
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        doc = body[0]
        if isinstance(doc.value.value, str):  # type: ignore[attr-defined]
            lines -= (doc.end_lineno or doc.lineno) - doc.lineno + 1
    return lines


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, _code_lines(node)
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


@functools.cache
def _sizes() -> dict[str, int]:
    """Every module over the module limit and every function over the function limit, by size."""
    over: dict[str, int] = {}
    for path in _modules().values():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if (n := len(text.splitlines())) > MAX_MODULE_LINES:
            over[rel] = n
        for name, n in _functions(_tree(path)):
            if n > MAX_FUNCTION_LINES:
                over[f"{rel}::{name}"] = n
    return over


def test_no_module_or_function_grows_past_the_limits() -> None:
    over = _sizes()
    new = {k: v for k, v in over.items() if k not in STILL_OVER}
    grown = {k: (STILL_OVER[k], v) for k, v in over.items() if k in STILL_OVER and v > STILL_OVER[k]}
    assert not new, f"over {MAX_MODULE_LINES} lines a module or {MAX_FUNCTION_LINES} a function: {new}"
    assert not grown, f"grown since listed (listed, now): {grown}"


def test_what_is_listed_as_over_the_limits_still_is() -> None:
    over = _sizes()
    back = sorted(k for k in STILL_OVER if k not in over)
    assert not back, f"within the limits now: take these out of STILL_OVER: {back}"


# The public names as they were before the house was reshaped: every one must still be there.
PUBLIC: dict[str, list[str]] = {
    "hrbench": [
        "Answer",
        "AnthropicClient",
        "Arm",
        "ArmErrorWarning",
        "ArmReport",
        "Batch",
        "Bench",
        "BudgetRefused",
        "BudgetStoppedWarning",
        "Cache",
        "CachedDrawsWarning",
        "Comparison",
        "ConfigError",
        "Context",
        "DrawsUncheckedWarning",
        "DuplicateDrawError",
        "EmptyDataWarning",
        "EvalError",
        "Evaluation",
        "Example",
        "FewRunsWarning",
        "GateResult",
        "Governor",
        "Grade",
        "HrbenchError",
        "MetricErrorWarning",
        "MockClient",
        "ModelError",
        "NOT_IN_DOCUMENT",
        "NoLabelsWarning",
        "NotCachedWarning",
        "NotFound",
        "OpenAIClient",
        "Options",
        "PowerPlan",
        "Prediction",
        "Pricing",
        "ReasoningExhausted",
        "Reference",
        "ReferenceLocked",
        "ReferenceReboundWarning",
        "ReferenceValueError",
        "ReplayClient",
        "ReplayMiss",
        "Report",
        "Request",
        "Result",
        "ResumedNewestWarning",
        "Row",
        "RowResult",
        "Score",
        "Scorer",
        "ScorerError",
        "Signature",
        "SignatureError",
        "Step",
        "StopWhenSure",
        "Store",
        "TooFewRunsError",
        "ToolCall",
        "ToolLoop",
        "Trace",
        "UnlabelledItemsWarning",
        "UnpricedModelWarning",
        "Usage",
        "UsageEstimatedWarning",
        "answer_scorer",
        "benchmark",
        "benchmark_async",
        "benchmark_stream",
        "cache_key",
        "choice_scorer",
        "compare",
        "compare_all",
        "evaluate",
        "evaluate_async",
        "exact_scorer",
        "example_document",
        "gate",
        "human_grades",
        "is_not_found",
        "judge_agreement",
        "judge_scorer",
        "metrics",
        "module",
        "module_fn",
        "next_grades",
        "numeric_scorer",
        "options",
        "outputs_arm",
        "pattern_scorer",
        "power",
        "qa_reference",
        "read_reference",
        "reading",
        "report",
        "request_hash",
        "run",
        "run_async",
        "run_dataset",
        "run_dataset_async",
        "scorer",
        "signature",
        "squad_scorer",
        "step_count_scorer",
        "sweep",
        "tatqa_reference",
        "tatqa_scorer",
        "tool_args_scorer",
        "tool_loop",
        "tool_loop_async",
        "tool_sequence_scorer",
        "trace_cost",
        "trajectory_judge",
    ],
    "hrbench.reading": [
        "INSTRUCTIONS",
        "LIMIT_NOTES",
        "NOT_IN_DOCUMENT",
        "NO_OUTPUT",
        "RECIPES",
        "REFUSAL_REASONS",
        "answer_contains_scores",
        "answer_scorer",
        "as_output",
        "check_outputs",
        "chunk_document",
        "chunked",
        "contains_answer",
        "direct",
        "document_id",
        "example_document",
        "example_questions",
        "fold_answer",
        "is_not_found",
        "json_lines",
        "missing_output",
        "outputs_arm",
        "qa_reference",
        "read_outputs",
        "read_rows",
        "retrieve",
        "squad_scorer",
        "squad_scores",
        "stop_kind",
        "tatqa_answer_string",
        "tatqa_em_f1",
        "tatqa_exact_match",
        "tatqa_f1",
        "tatqa_normalize",
        "tatqa_number",
        "tatqa_outputs",
        "tatqa_reference",
        "tatqa_scorer",
        "tatqa_scores",
        "with_check",
    ],
    "hrbench.stats": [
        "ArmReport",
        "Comparison",
        "FEW_CLUSTERS",
        "FrontierStep",
        "JudgedRows",
        "MIN_RUNS",
        "NoIntervalWarning",
        "PilotClustersWarning",
        "PowerPlan",
        "PowerPoint",
        "Report",
        "SequentialTest",
        "StopWhenSure",
        "cluster_se",
        "cluster_spread",
        "compare",
        "compare_all",
        "design_df",
        "difference_interval",
        "draw_probabilities",
        "estimable",
        "frontier",
        "gate",
        "next_grades",
        "power",
        "ppi_estimate",
        "proportion_interval",
        "report",
        "report_payload",
        "reported_rows",
        "scale",
        "stop_lines",
        "stop_section",
        "t_interval",
        "weighted_order",
    ],
    "hrbench.testing": [
        "ARM_X_CLUSTER_SD",
        "DESIGNS",
        "Design",
        "Fault",
        "LoopbackServer",
        "SKEW_SHARE",
        "check",
        "lognormal_sizes",
        "promised_power",
        "rows_for",
        "simulate",
        "stated_components",
        "verdict",
        "write_bombs",
    ],
    "hrbench_client": [
        "BenchmarkParams",
        "BenchmarkResult",
        "BenchmarkRunning",
        "BenchmarkStream",
        "BudgetRefused",
        "Client",
        "CodeRefused",
        "ConfigError",
        "DaemonError",
        "DaemonStopped",
        "DuplicateDrawError",
        "HrbenchError",
        "InvalidParams",
        "MethodNotFound",
        "ModelError",
        "NotFound",
        "ReplayMiss",
        "RequestCancelled",
        "Row",
        "ScoreResult",
        "ScorerError",
        "StoreCorrupt",
        "StoreError",
        "StoreFull",
        "StoreGone",
        "StoreReadOnly",
        "TooFewRunsError",
        "connect",
        "daemon_status",
        "start_daemon",
        "stop_daemon",
    ],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_public_name_of_before_the_move_is_still_offered(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == PUBLIC[module]
    missing = [name for name in PUBLIC[module] if not hasattr(mod, name)]
    assert not missing


@pytest.mark.parametrize(
    "path",
    [
        # import paths the README, docs and examples show
        "hrbench.runner:kept_ledger",
        "hrbench.stats:report",
        "hrbench.stats:compare",
        "hrbench.stats:power",
        "hrbench.reading:tatqa_reference",
        "hrbench.reading:tatqa_outputs",
        "hrbench_client.cli:main",
        "hrbench_client:Client",
    ],
)
def test_the_import_paths_the_docs_show_keep_working(path: str) -> None:
    module, _, name = path.partition(":")
    assert callable(getattr(importlib.import_module(module), name))


def test_the_readme_walk_through_names_every_stage_package_and_nothing_that_is_not_there() -> None:
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")  # the README's Layout, moved
    block = text[text.index("The library's folders are the stages") :].split("```")[1]
    named = {ln.split()[0] for ln in block.splitlines() if ln.startswith("hrbench/")}
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"the README names what is not there: {missing}"
    packages = {f"hrbench/{p.name}/" for p in (ROOT / "hrbench").iterdir() if (p / "__init__.py").exists()}
    unnamed = sorted(packages - named - {"hrbench/_util/"})
    assert not unnamed, f"packages the README's walk-through does not name: {unnamed}"


# -- one package convention: private modules behind a facade ----------------------------------
#
# A package's modules are private (``_name.py``; ``__main__.py`` too may stand there) and its
# ``__init__.py`` is the facade: its ``__all__`` lists the names other packages use. Code of
# ``hrbench/`` and ``server/`` outside a package imports from its facade only, names of its
# ``__all__``; the root facade ``hrbench/__init__.py`` names each private module it takes a name
# from (its lazy table imports that module alone). Tests and ``bench/`` may reach a private module
# to test an internal. A package whose own name is private (``hrbench/_util/``) is private as a
# whole: helpers any package of ``hrbench/`` may import by module, with no facade.
# ``tools/privatize.py PACKAGE`` gives a package the convention.

# Packages not yet given the convention (with their subpackages); empty it once
# `tools/privatize.py stats runner models runner/batch runner/ray runner/runtime` has run.
NOT_YET_PRIVATE: list[str] = []

# Imports that still reach past a facade (importer -> private module): the list only shrinks.
PASSING_BY: list[str] = []


def _packages() -> list[str]:
    """Every package of ``hrbench/`` under the convention (dotted), subpackages included."""
    return sorted(
        name
        for name, path in _modules().items()
        if path.name == "__init__.py"
        and name != "hrbench"
        and name.startswith("hrbench.")
        and not any(part.startswith("_") for part in name.split("."))
        and not any(name == p or name.startswith(p + ".") for p in NOT_YET_PRIVATE)
    )


def _all_of(path: Path) -> list[str] | None:
    """A facade's ``__all__`` (``__all__ = [...]`` or ``__all__: list[str] = [...]``), ``None`` if none."""
    for node in _tree(path).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == "__all__":
            value = getattr(node, "value", None)
            return [ast.literal_eval(e) for e in value.elts] if isinstance(value, ast.List) else None
    return None


def _package_breaches(packages: list[str], modules: dict[str, Path]) -> list[str]:
    """Public modules in a package, facades without ``__all__``, and imports that pass a facade by."""
    found = []
    for package in packages:
        folder = modules[package].parent
        public = sorted(p.name for p in folder.glob("*.py") if not p.name.startswith("_"))
        if public:
            found.append(f"{package}: public modules {public} (tools/privatize.py {package})")
        if _all_of(modules[package]) is None:
            found.append(f"{package}: its __init__.py has no __all__ list")
    offered = {p: set(_all_of(modules[p]) or []) for p in packages}
    for name, path in modules.items():
        if name == "hrbench" or not name.startswith(("hrbench.", "hrbench_server")):
            continue
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(_tree(path)):
            for target in _targets(node, here, modules):
                owner = next((p for p in packages if target.startswith(p + "._")), None)
                if owner and not (here == owner or here.startswith(owner + ".")):
                    found.append(f"{name} -> {target}")
            if isinstance(node, ast.ImportFrom):
                base = _targets(
                    ast.ImportFrom(module=node.module, names=[ast.alias("")], level=node.level), here, modules
                )
                facade = base[0] if base else None
                if facade in offered and not (here == facade or here.startswith(facade + ".")):
                    missing = [
                        a.name
                        for a in node.names
                        if a.name not in offered[facade] and f"{facade}.{a.name}" not in modules
                    ]
                    if missing:
                        found.append(
                            f"{name}:{node.lineno} imports {missing} from {facade}, not in its __all__"
                        )
    return sorted(set(found), key=found.index)


def test_every_package_has_private_modules_behind_a_facade() -> None:
    packages = _packages()
    assert {"hrbench.scoring", "hrbench.interop", "hrbench.evaluation.modules"} <= set(packages)
    breaches = _package_breaches(packages, _modules())
    new = [b for b in breaches if b not in PASSING_BY]
    assert not new, (
        "packages off the convention (an arrow: a private module of another package):\n" + "\n".join(new)
    )
    gone = [b for b in PASSING_BY if b not in breaches]
    assert not gone, f"these import from the facade now: take them out of PASSING_BY: {gone}"


def test_the_packages_not_yet_private_still_are_not() -> None:
    """An entry of NOT_YET_PRIVATE leaves it once its package is given the convention."""
    modules = _modules()
    done = [p for p in NOT_YET_PRIVATE if not any(q.name[0] != "_" for q in modules[p].parent.glob("*.py"))]
    assert not done, f"take these out of NOT_YET_PRIVATE: {done}"


def test_the_convention_check_sees_a_public_module_a_missing_all_and_a_facade_passed_by(
    tmp_path: Path,
) -> None:
    files = {
        "hrbench/__init__.py": "",
        "hrbench/pkg/__init__.py": "from hrbench.pkg._a import A\n__all__ = ['A']\n",
        "hrbench/pkg/_a.py": "A = 1\nB = 2\n",
        "hrbench/pkg/public.py": "",
        "hrbench/bare/__init__.py": "",
        "hrbench/user.py": "from hrbench.pkg._a import A\nfrom hrbench.pkg import B\nfrom hrbench.pkg import A\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    modules = {}
    for path in sorted((tmp_path / "hrbench").rglob("*.py")):
        parts = path.relative_to(tmp_path).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    assert _package_breaches(["hrbench.bare", "hrbench.pkg"], modules) == [
        "hrbench.bare: its __init__.py has no __all__ list",
        "hrbench.pkg: public modules ['public.py'] (tools/privatize.py hrbench.pkg)",
        "hrbench.user -> hrbench.pkg._a",
        "hrbench.user:2 imports ['B'] from hrbench.pkg, not in its __all__",
    ]
