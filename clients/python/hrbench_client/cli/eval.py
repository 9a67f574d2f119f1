"""``hrb eval``: ``evaluate()`` a module from a TOML spec."""

from __future__ import annotations

from hrbench_client.cli._common import _client, _err, _fail_usage, _measured, _msgspec, _out, explain
from hrbench_client.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_WRONG
from hrbench_client.cli.spec_files import _load_toml, _resolve, _user_text
from hrbench_client.errors import InvalidParams

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["eval_params"]


def eval_params(path: str) -> Any:
    """The :class:`~hrbench_client.protocol.EvaluateParams` of a TOML file.

    ``data`` may be inline rows or a path (JSON lines, or a JSON list) relative to the file.

    Raises:
        InvalidParams: the file does not match the schema.
    """
    import json

    from hrbench_client import protocol as p

    data, base = _load_toml(path)
    rows = data.get("data")
    if isinstance(rows, str):
        file = base / _resolve(base, rows)
        text = _user_text(file, f"data {file}", f"data {file} is ")
        if text.lstrip().startswith("["):
            try:
                data["data"] = json.loads(text)
            except json.JSONDecodeError as exc:
                _fail_usage(f"data {file} is not JSON: {exc}")
        else:  # each line on its own: the error names the file's line
            data["data"] = []
            for n, line in enumerate(text.split("\n"), 1):
                if line.strip():
                    try:
                        data["data"].append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        _fail_usage(f"data {file} line {n} is not JSON ({exc.msg} at column {exc.colno})")
    data["python_path"] = [str(base), *[_resolve(base, x) for x in data.get("python_path", [])]]
    try:
        return _msgspec().convert(data, p.EvaluateParams)
    except _msgspec().ValidationError as exc:
        raise InvalidParams(f"{path}: {explain(exc, p.EvaluateParams, data)}") from None


def cmd_eval(args: argparse.Namespace) -> int:
    spec = eval_params(args.file)
    with _client(args) as hb:
        result = hb.evaluate(spec)
    _out(result)
    fields = result if isinstance(result, dict) else {}
    n_errors = fields.get("n_run_errors") or 0
    if n_errors:
        errors = fields.get("run_errors") or []
        _err(f"{n_errors} run(s) ended in errors" + (f"; first: {errors[0]}" if errors else ""))
        return EXIT_ERROR
    mean = fields.get("mean_score")
    if args.fail_under is None:
        return EXIT_OK
    if not _measured(mean):  # as for `hrb bench`: a gate that measured nothing fails
        _err(f"mean score is NA, nothing was scored, so --fail-under {args.fail_under:g} fails")
        return EXIT_WRONG
    if mean < args.fail_under:
        _err(f"mean score {mean:.3f} is under --fail-under {args.fail_under:g}")
        return EXIT_WRONG
    return EXIT_OK
