"""One error boundary for other tools' files: a malformed file is a ``ConfigError`` naming the place.

The readers (:mod:`._inspect_read`, :mod:`._lmeval`, :mod:`._promptfoo`) map whatever JSON a
file holds with plain ``.get``, indexing and loops. Rather than a check at every ``.get``, each
reader runs inside one boundary, :func:`reading` (the decorator :func:`foreign_reader` puts a
reader there), as httpx's ``map_exceptions`` turns a transport's exceptions into its own:

- the loaders (:mod:`._bounded`) give each JSON document as a tracked tree: its objects and
  lists are ``dict`` and ``list`` subclasses that know their place in the file
  (``samples[3].output``) and note the last place read;
- an exception a malformed value causes in a reader (``AttributeError`` from ``.get`` on a list,
  ``TypeError`` from looping over a number, ``KeyError``, a broken zip member, ...) leaves as a
  :class:`~hrbench.errors.ConfigError` naming the file, the place and what was expected:
  ``path: samples[3].output: expected an object, found a list [1, 2] (got 'log.json')``;
  the reader's own refusals (:class:`~hrbench.errors.HrbenchError`) and ``OSError`` (a file
  that cannot be opened) pass through unchanged;
- what the reader returns comes out with plain ``dict`` and ``list`` again.

A :class:`Reading` is the state of one file read: its limits (:mod:`._limits`), the bytes and
JSON values read so far, and what to close when it ends.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import functools
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

from hrbench.errors import ConfigError, HrbenchError
from hrbench.interop._limits import ImportLimits, import_limits, over_limit

__all__ = ["MISSING", "Reading", "current", "foreign_reader", "naming", "place", "reading", "track"]

P = ParamSpec("P")
T = TypeVar("T")

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
"""What a place read last holds when it was absent (a missing key, an index past the end)."""

RECENT = 8
"""How many of the places read last a :class:`Reading` keeps, to find the one a failure was about."""

Place = tuple[Any, ...]
"""A place: the document's label (``""`` for the file's one document, ``"line 4"``, ``"member
header.json"``), then the keys and indexes into it."""


class Reading:
    """The state of one file read inside :func:`reading`.

    Attributes:
        source: the file.
        fmt: its format (``"inspect"``, ``"lm-eval"``, ``"promptfoo"``).
        limits: the :class:`~hrbench.interop._limits.ImportLimits` in force.
        read: bytes read so far (inflated).
        values: JSON values read so far (counted before each document is parsed).
        recent: the last :data:`RECENT` places read and what each held (:data:`MISSING` when
            absent), the latest last.
        closing: what to close when the read ends (an open zip).
    """

    __slots__ = ("closing", "fmt", "limits", "read", "recent", "source", "values")

    def __init__(self, source: str, fmt: str, limits: ImportLimits) -> None:
        self.source, self.fmt, self.limits = source, fmt, limits
        self.read = self.values = 0
        self.recent: collections.deque[tuple[Place, Any]] = collections.deque(maxlen=RECENT)
        self.closing = contextlib.ExitStack()

    @property
    def last(self) -> tuple[Place, Any] | None:
        """The place read last and what it held, or ``None``."""
        return self.recent[-1] if self.recent else None

    def charge_bytes(self, n: int, where: str, found: str | None = None) -> None:
        """Count ``n`` more bytes read (inflated); refuse past ``max_bytes``, saying ``found``."""
        self.read += n
        if self.read > self.limits.max_bytes:
            found = found or f"{where}: more than {self.read:,} bytes read"
            raise over_limit(self.source, self.limits, "max_bytes", found)

    def charge_values(self, n: int, where: str, found: str | None = None) -> None:
        """Count ``n`` more JSON values (or run slots); refuse past ``max_values``, saying ``found``."""
        self.values += n
        if self.values > self.limits.max_values:
            found = found or f"{where}: {self.values:,} JSON values or more"
            raise over_limit(self.source, self.limits, "max_values", found)


_CURRENT: contextvars.ContextVar[Reading | None] = contextvars.ContextVar("hrbench_reading", default=None)


def current() -> Reading | None:
    """The :class:`Reading` of the file being read in this thread or task, if any."""
    return _CURRENT.get()


def _noted(at: tuple[Reading, Place], step: Any, value: Any) -> Any:
    """``value``, read at ``step`` under place ``at``: tracked, and noted as the place read last."""
    reading, path = at
    here = (*path, step)
    out = track(value, reading, here)
    reading.recent.append((here, out))
    return out


class _Obj(dict[str, Any]):
    """A JSON object that knows its place; what is read from it is tracked too."""

    __slots__ = ("_at",)
    _at: tuple[Reading, Place]

    def _read(self, key: Any, value: Any) -> Any:
        return _noted(self._at, key, value)

    def get(self, key: Any, default: Any = None) -> Any:  # type: ignore[override]
        value = dict.get(self, key, MISSING)
        got = self._read(key, value)
        return default if value is MISSING else got

    def __getitem__(self, key: Any) -> Any:
        if key not in self:
            self._read(key, MISSING)
        return self._read(key, dict.__getitem__(self, key))

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(k, self._read(k, v)) for k, v in dict.items(self)]

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self._read(k, v) for k, v in dict.items(self)]


class _Arr(list[Any]):
    """A JSON list that knows its place; what is read from it is tracked too."""

    __slots__ = ("_at",)
    _at: tuple[Reading, Place]

    def _read(self, index: Any, value: Any) -> Any:
        return _noted(self._at, index, value)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return track(list.__getitem__(self, index), self._at[0], self._at[1])
        try:
            value = list.__getitem__(self, index)
        except (IndexError, TypeError):
            self._read(index, MISSING)
            raise
        return self._read(index if index >= 0 else index + len(self), value)

    def __iter__(self) -> Iterator[Any]:
        for n, value in enumerate(list.__iter__(self)):
            yield self._read(n, value)


def track(value: Any, reading: Reading, path: Place) -> Any:
    """``value`` tracked at ``path`` when it is a plain JSON object or list (a shallow copy); else itself."""
    kind = type(value)
    if kind is dict:
        obj = _Obj(value)
        obj._at = (reading, path)
        return obj
    if kind is list:
        arr = _Arr(value)
        arr._at = (reading, path)
        return arr
    return value


def _plain(value: Any) -> Any:
    """``value`` with every tracked object and list inside made a plain ``dict`` and ``list`` again."""
    kind = type(value)
    if kind is _Obj or kind is _Arr:
        value = dict(dict.items(value)) if kind is _Obj else list(list.__iter__(value))
        kind = type(value)
    if kind is dict:
        for k, v in value.items():
            if type(v) in _CONTAINERS:
                value[k] = _plain(v)
    elif kind is list:
        for n, v in enumerate(value):
            if type(v) in _CONTAINERS:
                value[n] = _plain(v)
    return value


_CONTAINERS = (dict, list, _Obj, _Arr)
_NAME = re.compile(r"[A-Za-z_][\w-]*")


def place(path: Place) -> str:
    """A place said as a reader looks it up: ``samples[3].output.choices[0]``.

    Example:
        >>> place(("", "samples", 3, "output")), place(("line 4", "filtered_resps", 0)), place(("",))
        ('samples[3].output', 'line 4, filtered_resps[0]', 'the top level')
    """
    label, steps = path[0], ""
    for step in path[1:]:
        if isinstance(step, int):
            steps += f"[{step}]"
        elif isinstance(step, str) and _NAME.fullmatch(step):
            steps += f".{step}" if steps else step
        else:
            steps += f"[{step!r}]"
    if label and steps:
        return f"{label}, {steps}"
    return label or steps or "the top level"


_KINDS = {
    dict: "an object",
    list: "a list",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
}


def _found(value: Any) -> str:
    if value is MISSING:
        return "none"
    if value is None:
        return "null"
    shown = repr(value if type(value) not in (_Obj, _Arr) else _plain(value))
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    kind = next((k for t, k in _KINDS.items() if isinstance(value, t)), type(value).__name__)
    return f"{kind} {shown}"


_TYPE_HINTS = (
    ("not iterable", "a list or an object"),
    ("not subscriptable", "a list or an object"),
    ("indices must be integers", "an object"),
    ("unhashable", "a string or a number"),
    ("not supported between", "values of one kind that order (numbers, or strings)"),
    ("must be a string or a", "a number"),
    ("must be real number", "a number"),
    ("has no len()", "a list, an object or a string"),
    ("unsupported operand", "a number"),
    ("could not convert", "a number"),
)


def _expected(exc: BaseException) -> str:
    if isinstance(exc, AttributeError):
        name = exc.name or ""
        if name in ("get", "items", "keys", "values"):
            return "an object"
        return (
            "a string" if hasattr(str, name) else "a list" if hasattr(list, name) else f"a value with .{name}"
        )
    if isinstance(exc, KeyError):
        return f"a field {exc.args[0]!r}" if exc.args else "a field"
    if isinstance(exc, IndexError):
        return "a longer list"
    if isinstance(exc, UnicodeError):
        return "UTF-8 text"
    if isinstance(exc, RecursionError):
        return "less deeply nested values"
    if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError, struct.error)):
        return "a whole, readable zip"
    if isinstance(exc, ArithmeticError):
        return "a number in range"
    text = str(exc)
    return next((want for hint, want in _TYPE_HINTS if hint in text), "another kind of value")


def _culprit(exc: BaseException, reading: Reading) -> tuple[Place, Any] | None:
    """The place and value that raised ``exc``, when it is certain; else ``None``."""
    last = reading.last
    if isinstance(exc, AttributeError):
        obj = getattr(exc, "obj", None)
        if isinstance(obj, (_Obj, _Arr)):
            return obj._at[1], obj
        for read in reversed(reading.recent):
            if read[1] is obj:
                return read
        for read in reversed(reading.recent):  # a key: an object looped over where a list was wanted
            if type(read[1]) is _Obj and isinstance(obj, str) and obj in read[1]:
                return read
        return None
    if last is None:
        return None
    if isinstance(exc, LookupError):  # the key or index read last, if it was absent
        key = exc.args[0] if isinstance(exc, KeyError) and exc.args else last[0][-1]
        return last if last[1] is MISSING and key == last[0][-1] else None
    if isinstance(exc, (TypeError, ValueError, ArithmeticError)) and last[1] is not MISSING:
        names = set(re.findall(r"'(\w+)'", str(exc)))
        if names == {type(last[1]).__name__} or (
            "could not convert string" in str(exc) and isinstance(last[1], str)
        ):
            return last
        if isinstance(exc, OverflowError) and isinstance(last[1], int):
            return last
    return None


def _why(exc: BaseException, reading: Reading) -> str:
    """What a ``ConfigError`` says of ``exc``: the place, what was expected, what was found."""
    expected = _expected(exc)
    culprit = _culprit(exc, reading)
    if culprit is not None:
        path, value = culprit
        if value is MISSING and len(path) > 1:
            key = path[-1]
            what = f"an entry [{key}]" if isinstance(key, int) else f"a field {key!r}"
            return f"{place(path[:-1])}: expected {what}, found none"
        if isinstance(exc, AttributeError) and type(value) is _Obj and getattr(exc, "obj", None) is not value:
            expected = "a list"  # looping over it gave its keys
        return f"{place(path)}: expected {expected}, found {_found(value)}"
    near = f" near {place(reading.last[0])}" if reading.last is not None else ""
    detail = str(exc) or type(exc).__name__
    return f"malformed{near}: expected {expected} ({type(exc).__name__}: {detail[:200]})"


_MAPPED = (
    AttributeError,
    TypeError,
    ValueError,
    LookupError,
    ArithmeticError,
    RuntimeError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    struct.error,
)
"""What a malformed value or a broken zip raises in a reader (``UnicodeDecodeError`` and
``RecursionError`` among them); mapped by :func:`reading`."""


@contextlib.contextmanager
def reading(source: str, fmt: str) -> Iterator[Reading]:
    """Read another tool's file ``source`` inside the error boundary, with the import limits.

    Args:
        source: the file.
        fmt: its format (``"inspect"``, ``"lm-eval"``, ``"promptfoo"``).

    Yields:
        The :class:`Reading` the loaders of :mod:`._bounded` count bytes and values on.

    Raises:
        ConfigError: a malformed value or a broken file met inside, naming the place, what was
            expected and what was found; a limit variable that is not a number
            (:func:`~hrbench.interop._limits.import_limits`). Our own errors and ``OSError``
            pass through.

    Example:
        >>> try:
        ...     with reading("log.json", "inspect") as r:
        ...         doc = track({"samples": [{"output": [1, 2]}]}, r, ("",))
        ...         doc["samples"][0].get("output").get("completion")
        ... except ConfigError as exc:
        ...     print(exc)
        path: samples[0].output: expected an object, found a list [1, 2] (got 'log.json')
    """
    state = Reading(source, fmt, import_limits())
    token = _CURRENT.set(state)
    try:
        with state.closing:
            yield state
    except (HrbenchError, OSError):
        raise
    except _MAPPED as exc:
        raise ConfigError("path", source, _why(exc, state)) from None
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def naming(source: str) -> Iterator[None]:
    """Name file ``source`` in a :class:`~hrbench.errors.ConfigError` raised inside that does not.

    What is built from a file after it is read (a reference refusing a label the file gave)
    says where in hrbench's terms (``labels['q1']``); this adds which file.

    Example:
        >>> try:
        ...     with naming("samples_x.jsonl"):
        ...         raise ConfigError("labels['0']", [], "expected a string")
        ... except ConfigError as exc:
        ...     print(exc)
        labels['0']: expected a string (got []) (in samples_x.jsonl)
    """
    try:
        yield
    except ConfigError as exc:
        if source not in exc.message:
            exc.message = f"{exc.message} (in {source})"
            exc.args = (exc.message,)
        raise


def foreign_reader(
    fmt: str,
) -> Callable[[Callable[Concatenate[str, P], T]], Callable[Concatenate[str, P], T]]:
    """Run a reader of another tool's file (its first argument) inside :func:`reading`.

    What the reader returns (an :class:`~hrbench.interop._foreign.Imported`, or any
    ``msgspec`` Struct, dict or list) comes back with its tracked objects and lists made plain.

    Args:
        fmt: the format the reader reads.
    """

    def decorate(read: Callable[Concatenate[str, P], T]) -> Callable[Concatenate[str, P], T]:
        @functools.wraps(read)
        def bounded(path: str, /, *args: P.args, **kwargs: P.kwargs) -> T:
            with reading(str(path), fmt):
                found = read(path, *args, **kwargs)
                fields = getattr(found, "__struct_fields__", None)
                if fields is None:
                    return _plain(found)  # type: ignore[no-any-return]
                for name in fields:
                    setattr(found, name, _plain(getattr(found, name)))
                return found

        return bounded

    return decorate
