"""Reading a TOML spec file: ``api_key_env = false``, and paths taken from the file's folder."""

from __future__ import annotations

import os
import re

from hrbench_client.cli._common import _fail_usage
from hrbench_client.errors import InvalidParams
from hrbench_client.utf8 import not_utf8

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["no_key_in_toml"]


def _user_text(file: Path, name: str, refused: str) -> str:
    """The UTF-8 text of a file the user named, a leading byte-order mark (Notepad, Excel) dropped.

    Args:
        file: the file.
        name: the file as the message names it (``data FILE``).
        refused: what the message says before the words of :func:`hrbench_client.utf8.not_utf8`.

    Raises:
        _Usage: the file cannot be read (``cannot read NAME: ...``) or is not UTF-8 (exit 2).
    """
    try:
        raw = file.read_bytes()
    except OSError as exc:
        _fail_usage(f"cannot read {name}: {exc.strerror}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        _fail_usage(f"{refused}{not_utf8(raw, exc)}")


def _load_toml(path: str) -> tuple[dict[str, Any], Path]:
    import tomllib
    from pathlib import Path

    file = Path(path)
    text = _user_text(file, path, f"{path} is not valid TOML: ")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        _fail_usage(f"{path} is not valid TOML: {exc}")
    try:
        no_key_in_toml(data)
    except InvalidParams as exc:
        raise InvalidParams(f"{path}: {exc}") from None
    return data, file.resolve().parent


_HEAD_VAR = re.compile(r"^\$(?:\{(\w+)\}|(\w+))")
"""An environment variable at the head of a path: ``${HRBENCH_DATA}/...`` or ``$HRBENCH_DATA/...``."""


def no_key_in_toml(data: Any, where: str = "") -> Any:
    """``api_key_env = false`` in a TOML spec sends no key, as ``null`` does on the wire.

    TOML has no null, so a client for a local server that needs no key (vLLM, Ollama) writes
    ``api_key_env = false`` (``api_key_env = null`` cannot be written in TOML). Every ``api_key_env`` of the spec is read so, at any depth (the client,
    its fallback, a judge's client).

    Raises:
        InvalidParams: ``api_key_env = true``, naming the field.

    Example:
        >>> no_key_in_toml({"client": {"kind": "openai", "api_key_env": False}})
        {'client': {'kind': 'openai', 'api_key_env': None}}
    """
    if isinstance(data, dict):
        for key, value in data.items():
            at = f"{where}.{key}" if where else key
            if key == "api_key_env" and isinstance(value, bool):
                if value:
                    raise InvalidParams(
                        f"{at}: true is not a variable name; give the name of the variable that holds "
                        "the key, or false to send no key"
                    )
                data[key] = None
            else:
                no_key_in_toml(value, at)
    elif isinstance(data, list):
        for n, value in enumerate(data):
            no_key_in_toml(value, f"{where}[{n}]")
    return data


def _resolve(base: Path, value: Any) -> Any:
    """A path of a spec file, made absolute.

    Environment variables are expanded (``${HRBENCH_DATA}/...``), then ``~``; a relative path
    written in the spec is taken from the spec file's folder, but a relative path that a
    variable at the head of the path holds is taken from the shell's working directory, as
    the shell would (``cd hrbench && HRBENCH_DATA=../shared/data hrb bench
    examples/squad2-shared-50.toml``, the command in that spec's own header, looks in
    ``../shared/data``, not ``examples/../shared/data``). The client resolves both before it sends the spec, so the
    daemon's working directory never matters.

    Raises:
        InvalidParams: a variable the environment does not set (named, so the user can set it).
    """
    if not isinstance(value, str) or not value:
        return value
    head = _HEAD_VAR.match(value)
    if head is not None and os.environ.get(head.group(1) or head.group(2)):
        # a variable's relative path is the shell's, not the spec's
        here = os.path.abspath(os.path.expanduser(os.environ[head.group(1) or head.group(2)]))
        value = here + value[head.end() :]
    expanded = os.path.expandvars(value)
    if "$" in expanded:
        name = expanded[expanded.index("$") :].split("/")[0]
        raise InvalidParams(f"path {value!r}: the environment variable {name} is not set")
    expanded = os.path.expanduser(expanded)
    return expanded if os.path.isabs(expanded) else str(base / expanded)
