"""Give packages of ``hrbench/`` the house's package convention: private modules behind a facade.

Usage::

    .venv/bin/python tools/privatize.py scoring specs evaluation/modules
    .venv/bin/python tools/privatize.py --check stats      # exit 1 and say what would change

The convention (``docs/development.md``, "Layout"; ``tests/test_house.py`` checks it): a package's
modules are private (``_name.py``); its ``__init__.py`` is the facade, whose ``__all__`` lists the
names other packages use; code outside the package imports those names from the facade, never
from a private module (tests and ``bench/`` may reach a private module to test an internal).

For each package named (``scoring``, ``hrbench.scoring`` and ``hrbench/scoring`` all name it;
``evaluation/modules`` a subpackage), the script:

1. moves (``git mv``) every public module ``x.py`` to ``_x.py`` (``__init__.py``, ``__main__.py``,
   subpackages and modules already private stay);
2. rewrites every reference to a module of the package in ``hrbench/``, ``server/``, ``clients/``,
   ``tests/``, ``bench/``, ``tools/``, ``docs/``, ``examples/``, ``.ci/`` and the root's
   ``pyproject.toml``, ``Makefile``, ``mkdocs.yml`` and ``README.md``:

   - ``from hrbench.pkg.x import a`` outside the package becomes ``from hrbench.pkg import a``
     when the facade offers ``a`` (a private name, ``_a``, stays on ``hrbench.pkg._x``); inside the
     package (its subpackages included) it becomes ``from hrbench.pkg._x import a``;
   - ``from hrbench.pkg import x`` and ``from . import x`` become ``... import _x as x``;
     ``from .x import a`` becomes ``from ._x import a``; ``import hrbench.pkg.x`` becomes
     ``import hrbench.pkg._x``;
   - dotted paths in strings, comments and other files (``"hrbench.pkg.x:func"`` in specs, entry
     points and Makefiles, ``mock.patch("hrbench.pkg.x.name")`` targets) become the private
     module's path, so a patch still patches where the name is looked up; in Markdown, docstrings
     and comments a path to a name the facade offers becomes the facade's (``hrbench.pkg.name``);
   - file paths ``hrbench/pkg/x.py`` become ``hrbench/pkg/_x.py``;
3. adds the names code outside the package (not tests) imports from its modules to the facade:
   to ``__all__`` and to a block at the end of ``__init__.py`` that imports each on first use
   (:pep:`562`, as ``hrbench/__init__.py`` does), so no import costs more than it did and no
   package imports another's modules earlier than before;
4. sorts the imports and formats the files it changes, as ``make format`` would (ruff).

A module name that is also a name the facade offers (``pkg/power.py`` and ``pkg.power``, a function)
is rewritten only where it is followed by ``.name`` or ``:name``; a bare ``hrbench.pkg.power``
names the facade's function and is left alone.

Re-running is safe: a reference to ``hrbench.pkg.x`` whose module is now ``_x.py`` (code merged
from a branch made before the move) is rewritten the same way, and a run with nothing to do
changes nothing. The script prints what it moved, the names it added to each facade, and what it
could not do by itself (a facade with its own ``__getattr__``, one name offered by two modules).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED_DIRS = ("hrbench", "server", "clients", "tests", "bench", "tools", "docs", "examples", ".ci")
SCANNED_ROOT_FILES = ("pyproject.toml", "Makefile", "mkdocs.yml", "README.md")
TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".toml",
    ".yml",
    ".yaml",
    ".json",
    ".txt",
    ".cfg",
    ".ini",
    ".sh",
    ".el",
    ".lua",
}
USERS_NOT_TESTS = ("hrbench/", "server/", "clients/", "bench/", "tools/", "docs/", "examples/")
"""Where the code lives whose imports the facade must offer (tests import what it offers)."""
BLOCK_START = "# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)"
BLOCK_END = "# -- end of tools/privatize.py's block"
SKIPPED = {"__init__", "__main__"}


@dataclass
class Package:
    """One package being made private: its dotted name, folder and module names."""

    dotted: str
    folder: Path
    renames: dict[str, str] = field(default_factory=dict)
    """Old module stem -> new (``x`` -> ``_x``): modules moved now and modules moved before."""
    moving: list[str] = field(default_factory=list)
    """The stems moved by this run."""
    bound: set[str] = field(default_factory=set)
    """Names the facade binds or lists in ``__all__`` (before this run adds any)."""
    added: dict[str, str] = field(default_factory=dict)
    """Names to add to the facade -> the dotted private module that defines them."""
    offered: dict[str, str] = field(default_factory=dict)
    """Every name the facade offers after this run -> its private module ("" when the facade binds it)."""
    used: set[str] = field(default_factory=set)
    """Public names code outside the package imports from it (its ``__all__`` lists them all)."""

    def old(self, stem: str) -> str:
        return f"{self.dotted}.{stem}"

    def new(self, stem: str) -> str:
        return f"{self.dotted}.{self.renames[stem]}"

    def contains(self, module: str) -> bool:
        return module == self.dotted or module.startswith(self.dotted + ".")


def _package(arg: str, root: Path) -> Package:
    name = arg.strip("/").replace("/", ".").removesuffix(".__init__")
    if not name.startswith("hrbench"):
        name = f"hrbench.{name}"
    folder = root.joinpath(*name.split("."))
    if not (folder / "__init__.py").is_file():
        raise SystemExit(f"privatize: {arg}: no package at {folder} (no __init__.py)")
    pkg = Package(name, folder)
    for path in sorted(folder.glob("*.py")):
        stem = path.stem
        if stem in SKIPPED:
            continue
        if stem.startswith("_"):
            if not (folder / f"{stem[1:]}.py").exists() and stem[1:] and not stem.startswith("__"):
                pkg.renames[stem[1:]] = stem  # moved before: stale references are rewritten too
            continue
        if (folder / f"_{stem}.py").exists():
            raise SystemExit(f"privatize: {path}: _{stem}.py exists too; merge them by hand")
        pkg.renames[stem] = f"_{stem}"
        pkg.moving.append(stem)
    pkg.bound = _bound_names(folder / "__init__.py")
    return pkg


def _bound_names(init: Path) -> set[str]:
    """Names a facade binds at module level (``if TYPE_CHECKING:`` included) or lists in ``__all__``."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
                        if target.id == "__all__" and isinstance(node.value, ast.List | ast.Tuple):
                            names.update(
                                e.value
                                for e in node.value.elts
                                if isinstance(e, ast.Constant) and isinstance(e.value, str)
                            )
                        if target.id == "_LAZY" and isinstance(node.value, ast.Dict):
                            names.update(
                                k.value
                                for k in node.value.keys
                                if isinstance(k, ast.Constant) and isinstance(k.value, str)
                            )
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)

    visit(tree.body)
    return names - {"annotations", "__all__", "_LAZY"}


def _files(root: Path) -> list[Path]:
    """The files whose references are rewritten: tracked and new ones (not ignored), as text."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    found = []
    for rel in sorted(set(out)):
        top = rel.split("/")[0]
        path = root / rel
        if rel in SCANNED_ROOT_FILES or (
            top in SCANNED_DIRS and (path.suffix in TEXT_SUFFIXES or path.name == "Makefile")
        ):
            if path.is_file() and path.stat().st_size < 4_000_000:
                found.append(path)
    return found


def _module_of(path: Path, root: Path) -> str | None:
    """The dotted module a Python file of ``hrbench/`` is (``None`` elsewhere)."""
    rel = path.relative_to(root)
    if rel.parts[0] != "hrbench" or path.suffix != ".py":
        return None
    parts = rel.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path, root: Path) -> str | None:
    module = _module_of(path, root)
    if module is None:
        return None
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _absolute(node: ast.ImportFrom, package: str | None) -> str | None:
    if not node.level:
        return node.module
    if package is None:
        return None
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _stem(pkg: Package, module: str | None) -> str | None:
    """The old stem of ``pkg``'s module that ``module`` names, moved or not (``None``: not one)."""
    if module is None or not module.startswith(pkg.dotted + "."):
        return None
    rest = module[len(pkg.dotted) + 1 :]
    if "." in rest:
        return None
    if rest in pkg.renames:
        return rest
    for old, new in pkg.renames.items():
        if new == rest:
            return old
    if rest.startswith("_") and (pkg.folder / f"{rest}.py").exists() and not rest.startswith("__"):
        return rest  # a module private from the start: its own stem
    return None


def _private_module(pkg: Package, stem: str) -> str:
    return pkg.new(stem) if stem in pkg.renames else f"{pkg.dotted}.{stem}"


def _origin(pkg: Package, stem: str, name: str, seen: frozenset[str] = frozenset()) -> str:
    """The private module of ``pkg`` that defines ``name`` (followed through imports from siblings)."""
    module = _private_module(pkg, stem)
    if module in seen:
        return module
    path = pkg.folder / f"{module.rpartition('.')[2]}.py"
    if not path.exists():
        path = pkg.folder / f"{stem}.py"
    if not path.exists():
        return module
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, pkg.dotted)
            sibling = _stem(pkg, source)
            for alias in node.names:
                if (alias.asname or alias.name) == name and sibling is not None and alias.name == name:
                    return _origin(pkg, sibling, name, seen | {module})
    return module


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


def _collect_needs(pkg: Package, files: list[Path], trees: dict[Path, ast.AST], root: Path) -> None:
    """Fill ``pkg.added`` and ``pkg.offered``: what code outside the package imports from its modules."""
    pkg.offered = _facade_origins(pkg)
    clashes: dict[str, set[str]] = {}
    for path in files:
        rel = path.relative_to(root).as_posix()
        if path not in trees or not rel.startswith(USERS_NOT_TESTS):
            continue
        package = _package_of(path, root)
        if _module_of(path, root) == "hrbench" or (package is not None and pkg.contains(package)):
            continue  # the root facade and the package itself import from the private modules
        for node in _imports(trees[path]):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _absolute(node, package)
            if source == pkg.dotted:
                pkg.used.update(
                    a.name for a in node.names if a.name in pkg.offered and not a.name.startswith("_")
                )
            stem = _stem(pkg, source)
            if stem is None:
                continue
            for alias in node.names:
                name = alias.name
                if name == "*" or name.startswith("_"):
                    continue
                origin = _origin(pkg, stem, name)
                pkg.used.add(name)
                if name in pkg.offered:
                    if pkg.offered[name] != origin:
                        clashes.setdefault(name, {pkg.offered[name] or pkg.dotted}).add(origin)
                    continue
                pkg.offered[name] = origin
                pkg.added[name] = origin
    for name, origins in sorted(clashes.items()):
        print(f"privatize: {pkg.dotted}: {name} is imported from {sorted(origins)}; the facade offers one")


def _facade_origins(pkg: Package) -> dict[str, str]:
    """What the facade offers today: name -> the private module it comes from ("": elsewhere)."""
    tree = ast.parse((pkg.folder / "__init__.py").read_text(encoding="utf-8"))
    offered = dict.fromkeys(pkg.bound, "")

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom):
                stem = _stem(pkg, _absolute(node, pkg.dotted))
                for alias in node.names:
                    if stem is not None and alias.asname in (None, alias.name):
                        offered[alias.name] = _origin(pkg, stem, alias.name)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)

    visit(tree.body)
    for name, module in _lazy_table(tree).items():
        stem = _stem(pkg, module)  # a table written before the move names the old module
        offered[name] = module if stem is None else _origin(pkg, stem, name)
    return offered


# -- rewriting Python ----------------------------------------------------------------------------


def _alias_text(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname else name


def _from_text(module: str, aliases: list[tuple[str, str | None]], indent: str) -> str:
    names = ", ".join(_alias_text(n, a) for n, a in aliases)
    line = f"from {module} import {names}"
    if len(indent) + len(line) <= 100:
        return line
    inner = "".join(f"{indent}    {_alias_text(n, a)},\n" for n, a in aliases)
    return f"from {module} import (\n{inner}{indent})"


def _rewrite_import(
    node: ast.Import | ast.ImportFrom, pkgs: list[Package], package: str | None, root_facade: bool
) -> str | None:
    """The new text of one import statement, or ``None`` when it stays as it is.

    ``root_facade``: the statement is in ``hrbench/__init__.py``, which imports each of its
    names from the private module that defines it (its lazy table names those modules), as a
    package's own facade does.
    """
    indent = " " * node.col_offset
    if isinstance(node, ast.Import):
        changed = False
        parts = []
        for alias in node.names:
            name = alias.name
            for pkg in pkgs:
                segments = name.split(".")
                head = len(pkg.dotted.split("."))
                if pkg.contains(name) and len(segments) > head and segments[head] in pkg.renames:
                    segments[head] = pkg.renames[segments[head]]
                    name = ".".join(segments)
                    changed = True
            parts.append(_alias_text(name, alias.asname))
        return f"import {', '.join(parts)}" if changed else None
    source = _absolute(node, package)
    aliases = [(a.name, a.asname) for a in node.names]
    for pkg in pkgs:
        inside = root_facade or (package is not None and pkg.contains(package))
        stem = _stem(pkg, source)
        if stem is not None:
            private = _private_module(pkg, stem)
            if inside or aliases == [("*", None)]:
                if source == private:
                    return None
                if node.level:  # the same level, the module's last part made private
                    head, dot, _ = (node.module or "").rpartition(".")
                    relative = "." * node.level + head + dot + private.rpartition(".")[2]
                    return _from_text(relative, aliases, indent)
                return _from_text(private, aliases, indent)
            facade = [(n, a) for n, a in aliases if pkg.offered.get(n) == _origin(pkg, stem, n)]
            rest = [(n, a) for n, a in aliases if (n, a) not in facade]
            if not facade and source == private:
                return None
            lines = []
            if facade:
                lines.append(_from_text(pkg.dotted, facade, indent))
            if rest:
                lines.append(_from_text(private, rest, indent))
            return f"\n{indent}".join(lines)
        if source == pkg.dotted:
            changed = False
            new_aliases = []
            for n, a in aliases:
                if n in pkg.renames and n not in pkg.bound:
                    new_aliases.append((pkg.renames[n], a or n))
                    changed = True
                else:
                    new_aliases.append((n, a))
            if changed:
                module = "." * node.level + (node.module or "") if node.level else pkg.dotted
                text = _from_text(module, new_aliases, indent)
                if any(a.asname == a.name and a.name in pkg.renames for a in node.names):
                    text += "  # noqa: F401"  # `x as x` re-exported the module; `_x as x` says it no more
                return text
    return None


def _rewrite_python_imports(
    text: str, tree: ast.AST, pkgs: list[Package], package: str | None, root_facade: bool
) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    edits = []
    for node in _imports(tree):
        new = _rewrite_import(node, pkgs, package, root_facade)
        if new is None:
            continue
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[(node.end_lineno or node.lineno) - 1] + (node.end_col_offset or 0)
        if text[start:end] != new:
            edits.append((start, end, new))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _prose_spans(text: str) -> list[tuple[int, int]]:
    """Where a Python file's comments and docstrings (statement-level strings) are, as offsets."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    spans = []
    previous = tokenize.NEWLINE
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT or (
                tok.type == tokenize.STRING
                and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL)
            ):
                spans.append((offsets[tok.start[0] - 1] + tok.start[1], offsets[tok.end[0] - 1] + tok.end[1]))
            if tok.type not in (tokenize.COMMENT, tokenize.NL):
                previous = tok.type
            elif tok.type == tokenize.NL and previous == tokenize.NEWLINE:
                previous = tokenize.NEWLINE
    except (tokenize.TokenError, SyntaxError):
        return []
    return spans


def _rewrite_paths(text: str, pkgs: list[Package], prose: list[tuple[int, int]] | None) -> str:
    """Dotted and file paths to the packages' modules, in any text (``prose=None``: all of it prose)."""

    def in_prose(at: int) -> bool:
        return prose is None or any(a <= at < b for a, b in prose)

    for pkg in pkgs:
        if not pkg.renames:
            continue
        olds = "|".join(sorted((re.escape(s) for s in pkg.renames), key=len, reverse=True))
        dotted = re.compile(r"(?<![\w.])" + re.escape(pkg.dotted) + r"\.(" + olds + r")(?![\w])([.:](\w+))?")

        def dotted_sub(m: re.Match[str], pkg: Package = pkg) -> str:
            stem, tail, name = m.group(1), m.group(2), m.group(3)
            if tail is None and stem in pkg.bound:
                return m.group(0)  # the facade's own name (stats.power the function)
            if tail and name and in_prose(m.start()) and name in pkg.offered and not name.startswith("_"):
                return f"{pkg.dotted}{tail[0]}{name}"
            return f"{pkg.new(stem)}{tail or ''}"

        text = dotted.sub(dotted_sub, text)
        folder = pkg.dotted.replace(".", "/")
        short = folder.partition("/")[2]
        files = re.compile(
            r"(?<![\w./-])(hrbench/"
            + re.escape(short)
            + "|"
            + re.escape(short)
            + r")/("
            + olds
            + r")\.py(?![\w])"
        )
        text = files.sub(lambda m, pkg=pkg: f"{m.group(1)}/{pkg.renames[m.group(2)]}.py", text)
    return text


def _rewrite_markdown_imports(text: str, pkgs: list[Package]) -> str:
    """``from hrbench.pkg.x import a, b`` lines of examples: the facade's when it offers every name.

    In Markdown, and in Python once its import statements are rewritten (what is left is in
    docstrings and strings: doctests, code run in a subprocess).
    """
    for pkg in pkgs:
        if not pkg.renames:
            continue
        olds = "|".join(sorted((re.escape(s) for s in pkg.renames), key=len, reverse=True))
        line = re.compile(
            r"^(\s*(?:>>> )?)from " + re.escape(pkg.dotted) + r"\.(" + olds + r") import ([\w, ]+)$", re.M
        )

        def sub(m: re.Match[str], pkg: Package = pkg) -> str:
            names = [n.strip().split(" as ")[0] for n in m.group(3).split(",")]
            if all(n in pkg.offered and not n.startswith("_") for n in names):
                return f"{m.group(1)}from {pkg.dotted} import {m.group(3)}"
            return m.group(0)

        text = line.sub(sub, text)
    return text


# -- the facade ----------------------------------------------------------------------------------


def _facade(pkg: Package, text: str) -> str | None:
    """The facade's new text (``None``: unchanged): its ``__all__`` and lazy block brought up to date.

    ``__all__`` keeps what it lists (or, when there is none, the public names the facade binds)
    and gains every name code outside the package imports from it.
    """
    init = pkg.folder / "__init__.py"
    tree = ast.parse(text)
    lazy_before = _lazy_table(tree)
    exported = _all_of(tree)
    public = {n for n in pkg.bound if not n.startswith("_")} - {"annotations", "importlib", "sys", "typing"}
    listed = set(exported) if exported is not None else public
    lazy = {**lazy_before, **pkg.added}
    names = sorted(listed | set(lazy) | {n for n in pkg.used if not n.startswith("_")})
    if not pkg.added and not lazy_before and exported is not None and names == sorted(exported):
        return None
    own_getattr = any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body)
    if own_getattr and BLOCK_START not in text and pkg.added:
        print(
            f"privatize: {init}: has its own __getattr__; add these by hand: "
            + ", ".join(f"{n} ({m})" for n, m in sorted(pkg.added.items()))
        )
        return None
    if not lazy:
        return _set_all(text, names)
    if BLOCK_START in text:
        text = text[: text.index(BLOCK_START)].rstrip("\n") + "\n"
    text = _set_all(text, names)
    text = _ensure_imports(text, ("typing",))
    for module in ("importlib", "sys"):  # blocks written by earlier versions of this script used them
        if f"{module}." not in text:
            text = text.replace(f"\nimport {module}\n", "\n", 1)
    by_module: dict[str, list[str]] = {}
    for name, module in sorted(lazy.items()):
        by_module.setdefault(module, []).append(name)
    checking = "".join(
        "    " + _from_text(module, [(n, None) for n in ns], "    ") + "\n"
        for module, ns in sorted(by_module.items())
    )
    table = "".join(f"    {name!r}: {module!r},\n" for name, module in sorted(lazy.items())).replace("'", '"')
    block = (
        f"\n\n{BLOCK_START}\n"
        f"if typing.TYPE_CHECKING:\n{checking}\n"
        f"_LAZY = {{\n{table}}}\n\n"
        "if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error\n"
        "    from hrbench._util.lazy import lazy_names\n\n"
        "    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)\n\n"
        f"{BLOCK_END}\n"
    )
    return text.rstrip("\n") + "\n" + block


def _lazy_table(tree: ast.Module) -> dict[str, str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets
        ):
            if isinstance(node.value, ast.Dict):
                return {
                    k.value: v.value
                    for k, v in zip(node.value.keys, node.value.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                }
    return {}


def _is_all(node: ast.stmt) -> bool:
    """``__all__ = [...]`` or ``__all__: list[str] = [...]``."""
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    return (
        isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__"
    )


def _all_of(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and _is_all(node):
            if isinstance(node.value, ast.List | ast.Tuple):
                return [
                    e.value
                    for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
    return None


def _set_all(text: str, names: list[str]) -> str:
    new = (
        "__all__ = [\n" + "".join(f'    "{n}",\n' for n in names) + "]"
        if names
        else "__all__: list[str] = []"
    )
    tree = ast.parse(text)
    for node in tree.body:
        if _is_all(node):
            lines = text.splitlines(keepends=True)
            head = "".join(lines[: node.lineno - 1])
            tail = "".join(lines[node.end_lineno or node.lineno :])
            return head + new + "\n" + tail
    # no __all__ yet: after the last module-level import (or the docstring)
    last = 0
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom) or (
            node is tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ):
            last = node.end_lineno or node.lineno
        elif isinstance(node, ast.If) and last:
            last = node.end_lineno or node.lineno
        else:
            break
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines[:last]) + "\n" + new + "\n" + "".join(lines[last:])


def _ensure_imports(text: str, modules: tuple[str, ...]) -> str:
    tree = ast.parse(text)
    have = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    missing = [m for m in modules if m not in have]
    if not missing:
        return text
    lines = text.splitlines(keepends=True)
    at = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            at = node.end_lineno or node.lineno
            break
        if node is tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            at = node.end_lineno or node.lineno
    new = "".join(f"import {m}\n" for m in missing)
    return "".join(lines[:at]) + "\n" + new + "".join(lines[at:])


# -- the run -------------------------------------------------------------------------------------


def run(args: list[str], root: Path = ROOT, check: bool = False, format_: bool = True) -> int:
    """Make the packages private; return 1 when ``check`` and something would change, else 0."""
    pkgs = [_package(a, root) for a in args]
    files = _files(root)
    trees: dict[Path, ast.AST] = {}
    for path in files:
        if path.suffix == ".py":
            try:
                trees[path] = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError) as exc:
                print(f"privatize: {path}: not read ({exc})")
    for pkg in pkgs:
        _collect_needs(pkg, files, trees, root)
    changed: dict[Path, str] = {}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = text
        if path in trees:
            new = _rewrite_python_imports(
                new, trees[path], pkgs, _package_of(path, root), _module_of(path, root) == "hrbench"
            )
            new = _rewrite_markdown_imports(new, pkgs)  # what is left: examples in docstrings
            new = _rewrite_paths(new, pkgs, _prose_spans(new))
        elif path.suffix == ".md":
            new = _rewrite_paths(_rewrite_markdown_imports(new, pkgs), pkgs, None)
        else:
            new = _rewrite_paths(new, pkgs, [])
        if new != text:
            changed[path] = new
    facades = {}
    for pkg in pkgs:
        init = pkg.folder / "__init__.py"
        original = init.read_text(encoding="utf-8")
        new = _facade(pkg, changed.get(init, original))  # built on the facade's rewritten imports
        if new is not None and new != original:
            changed[init] = new
        facades[pkg.dotted] = sorted(pkg.added)
    moves = [(pkg.folder / f"{s}.py", pkg.folder / f"_{s}.py") for pkg in pkgs for s in pkg.moving]
    for pkg in pkgs:
        if pkg.moving:
            print(f"privatize: {pkg.dotted}: " + ", ".join(f"{s} -> _{s}" for s in pkg.moving))
        if pkg.added:
            print(f"privatize: {pkg.dotted} offers {len(pkg.added)} more: {', '.join(sorted(pkg.added))}")
    if format_:  # sorted and formatted as `make format` leaves them, so a second run finds nothing to do
        moved = {old: new for old, new in moves}
        for path in [p for p in changed if p.suffix == ".py"]:
            changed[path] = _formatted(root, moved.get(path, path), changed[path])
            if changed[path] == path.read_text(encoding="utf-8"):
                del changed[path]
    if check:
        for path in sorted(changed):
            print(f"privatize: would change {path.relative_to(root)}")
        return 1 if changed or moves else 0
    for path, text in changed.items():
        path.write_text(text, encoding="utf-8")
    for old, new in moves:
        tracked = (
            subprocess.run(
                ["git", "ls-files", "--error-unmatch", str(old)], cwd=root, capture_output=True
            ).returncode
            == 0
        )
        if tracked:
            subprocess.run(["git", "mv", str(old), str(new)], cwd=root, check=True)
        else:
            old.rename(new)
    print(f"privatize: {len(moves)} module(s) moved, {len(changed)} file(s) rewritten")
    return 0


def _formatted(root: Path, path: Path, text: str) -> str:
    """``text`` with its imports sorted and formatted by ruff under the repository's settings."""
    name = str(path.relative_to(root))
    for args in (["check", "--select", "I", "--fix", "--quiet", "--exit-zero"], ["format", "--quiet"]):
        try:
            done = subprocess.run(
                [sys.executable, "-m", "ruff", *args, "--stdin-filename", name, "-"],
                cwd=root,
                input=text,
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError:
            done = None
        if done is None or done.returncode != 0:
            print(f"privatize: {name}: ruff did not run ({done and done.stderr.strip()}); left as written")
            return text
        text = done.stdout
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="+", help="packages of hrbench/: scoring, evaluation/modules, ...")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this one)")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 when something would change"
    )
    parser.add_argument("--no-format", action="store_true", help="do not run ruff on the files changed")
    ns = parser.parse_args(argv)
    return run(ns.packages, ns.root.resolve(), check=ns.check, format_=not ns.no_format)


if __name__ == "__main__":
    sys.exit(main())
