"""Reference pages generated from the code: the spec format, the ``hrb`` command line, the wire methods.

``hooks.py`` adds them to the site at build time; ``tests/docs`` reads the same functions to
check that every spec field and every command-line option has an entry. Nothing here is
written to ``docs/``: the pages exist only in the built site.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schema"


def _load(name: str) -> dict[str, Any]:
    return json.loads((SCHEMA / name).read_text(encoding="utf-8"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(name: str) -> str:
    return name.lower()


def type_of(prop: dict[str, Any]) -> str:
    """A JSON Schema property as a short type: ``integer``, ``string | null``, ``list of string``."""
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{_anchor(name)})"
    if "anyOf" in prop:
        return " | ".join(dict.fromkeys(type_of(p) for p in prop["anyOf"]))
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    kind = prop.get("type")
    if kind == "array":
        return f"list of {type_of(prop.get('items', {}))}" if prop.get("items") else "list"
    if kind == "object":
        extra = prop.get("additionalProperties")
        return f"table of {type_of(extra)}" if isinstance(extra, dict) and extra else "table"
    if kind is None:
        return "any"
    bounds = [
        f"{k} {prop[key]}"
        for key, k in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="))
        if key in prop and abs(prop[key]) < 1e300
    ]
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _default(prop: dict[str, Any]) -> str:
    if "default" not in prop:
        return "required"
    return f"`{json.dumps(prop['default'])}`"


def _fields_table() -> Any:
    """``spec_fields.py`` beside this file, loaded by path (MkDocs loads hooks off ``sys.path``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "hrbench_docs_spec_fields", Path(__file__).with_name("spec_fields.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _first_paragraph(text: str | None) -> str:
    return (text or "").split("\n\n")[0].replace("\n", " ").strip()


# ---------------------------------------------------------------- the spec format

SPEC_ROOTS = ("benchmark.params.schema.json", "evaluate.params.schema.json")


def spec_structs() -> dict[str, dict[str, Any]]:
    """Every Struct of the benchmark and evaluate specs, by name, in schema order."""
    out: dict[str, dict[str, Any]] = {}
    for name in SPEC_ROOTS:
        for key, value in _load(name)["$defs"].items():
            out.setdefault(key, value)
    return out


def spec_fields() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(struct, field, schema property)`` of every spec field."""
    for struct, schema in spec_structs().items():
        for field, prop in schema.get("properties", {}).items():
            yield struct, field, prop


def field_entry(struct: str, field: str, prop: dict[str, Any]) -> tuple[str, str]:
    """``(description, example)`` of a field: this folder's table first, else the Struct's own."""
    FIELDS = _fields_table().FIELDS
    entry = FIELDS.get(f"{struct}.{field}")
    if entry is None:
        text = prop.get("description", "")
        examples = prop.get("examples")
        return text, f"{field} = {json.dumps(examples[0])}" if examples else ""
    return (entry, "") if isinstance(entry, str) else entry


def spec_page() -> str:
    """The spec reference, one table per Struct."""
    STRUCTS = _fields_table().STRUCTS
    lines = [
        "# Spec format",
        "",
        "Generated from the wire Structs (`hrbench_client.protocol`) and their JSON Schema in",
        "`schema/`. A TOML spec (`hrb bench FILE.toml`, `hrb eval FILE.toml`) and a wire request carry",
        "the same fields; TOML has no null, so write `false` where a field takes `null` to mean none",
        "(`api_key_env = false`). An unknown field is refused, naming the closest known one.",
        "",
    ]
    for struct, schema in spec_structs().items():
        lines += [f"## {struct}", "", STRUCTS.get(struct, _first_paragraph(schema.get("description"))), ""]
        lines += ["| field | type | default | meaning | example |", "|---|---|---|---|---|"]
        for field, prop in schema.get("properties", {}).items():
            text, example = field_entry(struct, field, prop)
            ex = f"`{_cell(example)}`" if example else ""
            lines.append(
                f"| `{field}` | {_cell(type_of(prop))} | {_cell(_default(prop))} | {_cell(text)} | {ex} |"
            )
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------- the command line


def _hrb_parser() -> argparse.ArgumentParser:
    from hrbench_client.cli.parser import _parser

    return _parser()


def commands(
    parser: argparse.ArgumentParser | None = None, prefix: str = "hrb"
) -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
    """``(command line, parser, help)`` of ``hrb`` and each of its commands, nested ones included."""
    parser = parser or _hrb_parser()
    if prefix == "hrb":
        yield prefix, parser, parser.description or ""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub, helps.get(name, "")
                yield from commands(sub, f"{prefix} {name}")


def options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """The options and positional arguments of one command, ``--help`` left out."""
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        yield action


GLOBAL = {"home", "no_autostart"}
"""Options every command takes (listed once, under ``hrb``)."""


def option_name(action: argparse.Action) -> str:
    if action.option_strings:
        return ", ".join(action.option_strings)
    meta = action.metavar or (f"{{{','.join(map(str, action.choices))}}}" if action.choices else action.dest)
    return " ".join(meta) if isinstance(meta, tuple) else meta


def cli_page() -> str:
    """The ``hrb`` reference: each command's usage and every option with its help and default."""
    lines = [
        "# Command line: `hrb`",
        "",
        "Generated from `hrb`'s parser (`hrbench_client.cli.parser`). Every command prints JSON lines on",
        "stdout unless it says otherwise; `hrb COMMAND --help` prints the same text. Exit codes are in",
        "[Shell one-liners and exit codes](../guides/shell.md). The global options `--home` and",
        "`--no-autostart` go before or after the command.",
        "",
    ]
    for line, parser, help_text in commands():
        lines += [f"## `{line}`", ""]
        if help_text:
            lines += [help_text[0].upper() + help_text[1:].rstrip(".") + ".", ""]
        usage = parser.format_usage().replace("usage: ", "", 1).strip()
        lines += ["```text", usage, "```", ""]
        rows = [a for a in options(parser) if line == "hrb" or a.dest not in GLOBAL]
        if rows:
            lines += ["| option | value | default | meaning |", "|---|---|---|---|"]
            for action in rows:
                meta = action.metavar or action.dest.upper()
                value = (
                    "" if action.nargs == 0 else f"`{' '.join(meta) if isinstance(meta, tuple) else meta}`"
                )
                if not action.option_strings:
                    value = ""  # a positional argument: its name is its value
                elif action.choices and not action.metavar:
                    value = f"`{{{','.join(map(str, action.choices))}}}`"
                default = action.default
                shown = (
                    "" if default in (None, False, argparse.SUPPRESS) or action.nargs == 0 else f"`{default}`"
                )
                help_ = (action.help or "").replace("%(default)s", str(default))
                lines.append(
                    f"| `{option_name(action)}` | {_cell(value)} | {_cell(shown)} | {_cell(help_)} |"
                )
            lines.append("")
        if line == "hrb" and parser.epilog:
            lines += ["```text", parser.epilog.strip(), "```", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- the wire


def wire_page() -> str:
    """The wire methods and notifications from ``schema/hrbench.schema.json``."""
    bundle = _load("hrbench.schema.json")
    defs = bundle["$defs"]
    lines = [
        "# Wire methods",
        "",
        f"Generated from `schema/hrbench.schema.json` ({bundle.get('description', '')}). Messages are",
        "JSON-RPC 2.0 framed as in the Language Server Protocol: a `Content-Length: N` header, a blank",
        "line, then N bytes of JSON. [The daemon and editors](../guides/editors.md) shows a session.",
        "",
    ]

    in_spec = set(spec_structs())
    shown: list[str] = []

    def link(text: str) -> str:
        for name in defs:
            if f"(#{_anchor(name)})" in text and name in in_spec:
                text = text.replace(f"(#{_anchor(name)})", f"(spec.md#{_anchor(name)})")
            elif f"(#{_anchor(name)})" in text and name not in shown:
                shown.append(name)
        return text

    def fields(ref: dict[str, Any], title: bool = True) -> list[str]:
        if "$ref" not in ref:
            return [f"Type: {_cell(link(type_of(ref)))}", ""]
        name = ref["$ref"].rsplit("/", 1)[1]
        if name in in_spec:
            return [f"[{name}](spec.md#{_anchor(name)}): the fields of the spec format.", ""]
        schema = defs[name]
        out = [_first_paragraph(schema.get("description")) or name, ""]
        props = schema.get("properties", {})
        if props:
            out += ["| field | type | default | meaning |", "|---|---|---|---|"]
            out += [
                f"| `{f}` | {_cell(link(type_of(p)))} | {_cell(_default(p))} | {_cell(_first_paragraph(p.get('description')))} |"
                for f, p in props.items()
            ]
            out.append("")
        return out

    for method, pair in bundle["methods"].items():
        lines += [f"## `{method}`", "", "**Params.**", ""] + fields(pair["params"])
        lines += ["**Result.**", ""] + fields(pair["result"])
    for name, ref in bundle.get("notifications", {}).items():
        lines += [f"## `{name}` (notification)", ""] + fields(ref)
    errors = bundle.get("errors", {})
    if errors.get("codes"):
        lines += ["## Errors", "", "An error's `data` names its kind (`ErrorData` below).", ""]
        lines += ["| name | code |", "|---|---|"] + [f"| `{n}` | `{c}` |" for n, c in errors["codes"].items()]
        lines.append("")
        if "data" in errors:
            lines += fields(errors["data"])
    lines += ["## Types", "", "The Structs the methods above name, in the order they are first named.", ""]
    done: set[str] = set()
    while len(done) < len(shown):
        name = next(n for n in shown if n not in done)
        done.add(name)
        lines += [f"### {name}", ""] + fields({"$ref": f"#/$defs/{name}"})
    return "\n".join(lines)


PAGES = {"reference/spec.md": spec_page, "reference/cli.md": cli_page, "reference/wire.md": wire_page}


# ---------------------------------------------------------------- the Python API

_GROUPS = (
    (
        "Benchmarks",
        (
            "benchmark",
            "benchmark_async",
            "benchmark_stream",
            "Bench",
            "Row",
            "Trace",
            "Step",
            "Usage",
            "Request",
            "Result",
            "trace_cost",
            "options",
            "Options",
        ),
    ),
    (
        "Arms, references and contexts",
        (
            "Arm",
            "Context",
            "Answer",
            "Reference",
            "NOT_IN_DOCUMENT",
            "qa_reference",
            "tatqa_reference",
            "read_reference",
            "example_document",
            "outputs_arm",
            "reading",
        ),
    ),
    (
        "Model clients, budgets and the store",
        (
            "OpenAIClient",
            "AnthropicClient",
            "MockClient",
            "ReplayClient",
            "Governor",
            "Pricing",
            "Cache",
            "Store",
            "cache_key",
            "request_hash",
        ),
    ),
    (
        "Scoring",
        (
            "Score",
            "Scorer",
            "scorer",
            "exact_scorer",
            "answer_scorer",
            "numeric_scorer",
            "choice_scorer",
            "pattern_scorer",
            "judge_scorer",
            "squad_scorer",
            "tatqa_scorer",
        ),
    ),
    (
        "Statistics",
        ("report", "compare", "compare_all", "power", "Report", "ArmReport", "Comparison", "PowerPlan"),
    ),
)


def python_page() -> str:
    """The Python API: every name of ``hrbench.__all__`` and the daemon client, from their docstrings."""
    import hrbench
    import hrbench_client

    names = list(hrbench.__all__)
    placed = {n for _, group in _GROUPS for n in group}
    errors = [
        n
        for n in names
        if n not in placed and n.endswith(("Error", "Warning", "Refused", "Miss", "Locked", "NotFound"))
    ]
    rest = [n for n in names if n not in placed and n not in errors]
    lines = [
        "# Python API",
        "",
        "Generated from the docstrings. `import hrbench as hb` offers every name below; the daemon's",
        "client is `hrbench_client` (standard library and msgspec only).",
        "",
    ]
    for title, group in (
        *_GROUPS,
        ("Evaluation and other names", tuple(rest)),
        ("Errors and warnings", tuple(errors)),
    ):
        lines += [f"## {title}", ""]
        for name in group:
            if name in names:
                lines += [f"::: hrbench.{name}", ""]
    lines += ["## The daemon's client: `hrbench_client`", ""]
    for name in ("connect", "Client", "BenchmarkStream", "daemon_status", "start_daemon", "stop_daemon"):
        if name in hrbench_client.__all__:
            lines += [f"::: hrbench_client.{name}", ""]
    return "\n".join(lines)


PAGES["reference/python.md"] = python_page
