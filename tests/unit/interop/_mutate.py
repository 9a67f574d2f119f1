"""Hypothesis strategies that break the files the real Inspect, lm-eval and promptfoo wrote.

A drawn case is one of the files under ``data/`` with one to three mutations: a value's type
swapped (for null, a number, a huge number, a string, a long string, a list, an object, a deep
nest), a key or entry removed, a value wrapped in a list, the bytes truncated, flipped or
padded; lm-eval lines dropped, repeated or joined; an ``.eval`` member rewritten (its JSON
mutated, its compression changed), dropped, renamed, repeated or replaced by garbage.
"""

from __future__ import annotations

import copy
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import zstandard
from hypothesis import strategies as st

from hrbench.testing._bombs import Member, eval_zip

DATA = Path(__file__).parent / "data"
FILES = {
    "inspect_capitals.json": "inspect",
    "inspect_capitals.eval": "inspect",
    "promptfoo_capitals.json": "promptfoo",
    "samples_arith_2026-12-02T05-00-00.jsonl": "lm-eval",
    "samples_choice_2026-12-02T05-00-00.jsonl": "lm-eval",
    "lmeval_real_samples_arith.jsonl": "lm-eval",
}
"""The peers' files (the Inspect logs and the real lm-eval samples written by the tools) and their format."""

READ = {
    "version", "eval", "model", "samples", "id", "epoch", "input", "target", "output", "completion",
    "choices", "message", "content", "role", "type", "text", "error", "metadata", "cluster", "split",
    "results", "vars", "testCase", "assert", "value", "provider", "label", "prompt", "raw", "response",
    "failureReason", "testIdx", "doc_id", "doc", "filtered_resps", "filter",
}  # fmt: skip
"""The keys the readers look up: a walk to a place to break prefers them."""


def _eval_members(path: Path) -> list[tuple[str, bytes]]:
    """The members of a real ``.eval`` (zstd) as ``(name, content)``, read as Inspect wrote them."""
    out = []
    with open(path, "rb") as f, zipfile.ZipFile(f) as zf:
        for info in zf.infolist():
            f.seek(info.header_offset)
            head = f.read(30)
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            f.seek(info.header_offset + 30 + name_len + extra_len)
            raw = f.read(info.compress_size)
            out.append((info.filename, zstandard.ZstdDecompressor().decompressobj().decompress(raw)))
    return out


ORIGINALS = {name: (DATA / name).read_bytes() for name in FILES}
MEMBERS = _eval_members(DATA / "inspect_capitals.eval")


def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, -1, 10**18, 10**30, 2**63])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", "x" * 200_000, "\u2028", "C"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(sorted(READ)) | st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
) | st.sampled_from([_deep(99), _deep(101), _deep(500), [0] * 50_000, [[]] * 1000])


@st.composite
def _place(draw: st.DrawFn, doc: Any) -> tuple[Any, Any] | None:
    """A container of ``doc`` and a key or index in it, walking down from the top."""
    node, at = doc, None
    while isinstance(node, (dict, list)) and node:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        read = [k for k in keys if k in READ]
        key = draw(st.sampled_from(read if read and draw(st.booleans()) else keys))
        at = (node, key)
        if not isinstance(node[key], (dict, list)) or draw(st.integers(0, 3)) == 0:
            break
        node = node[key]
    return at


@st.composite
def mutated_json(draw: st.DrawFn, doc: Any) -> Any:
    """``doc`` with one to three of its values swapped, removed or wrapped."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(_place(doc))
        if at is None:
            return copy.deepcopy(draw(VALUES))
        node, key = at
        op = draw(st.sampled_from(["swap", "swap", "swap", "delete", "wrap"]))
        if op == "delete":
            del node[key]
        elif op == "wrap":
            node[key] = [node[key]]
        else:
            node[key] = copy.deepcopy(draw(VALUES))  # a drawn list is shared between cases: never changed
    return doc


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` truncated, with a byte flipped, or with bytes inserted."""
    op = draw(st.sampled_from(["truncate", "flip", "insert"]))
    at = draw(st.integers(0, max(len(data) - 1, 0)))
    if op == "truncate":
        return data[:at]
    if op == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :] if data else data
    return data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]


def _dumps(doc: Any) -> bytes:
    return json.dumps(doc).encode()


@st.composite
def _lines(draw: st.DrawFn, data: bytes) -> bytes:
    lines = data.decode().splitlines()
    n = draw(st.integers(0, len(lines) - 1))
    op = draw(st.sampled_from(["json", "json", "json", "drop", "repeat", "join"]))
    if op == "json":
        lines[n] = json.dumps(draw(mutated_json(json.loads(lines[n]))))
    elif op == "drop":
        del lines[n]
    elif op == "repeat":
        lines.insert(n, lines[n])
    else:
        lines[n : n + 2] = [" ".join(lines[n : n + 2])]
    return "\n".join(lines).encode()


@st.composite
def _eval(draw: st.DrawFn) -> bytes:
    members = list(MEMBERS)
    n = draw(st.integers(0, len(members) - 1))
    name, content = members[n]
    op = draw(st.sampled_from(["json", "json", "json", "drop", "rename", "repeat", "garbage", "bytes"]))
    if op == "json":
        members[n] = (name, _dumps(draw(mutated_json(json.loads(content)))))
    elif op == "drop":
        del members[n]
    elif op == "rename":
        members[n] = (
            draw(st.sampled_from(["header.txt", "samples/x.json", "samples/", name.upper()])),
            content,
        )
    elif op == "repeat":
        members.insert(n, members[n])
    elif op == "bytes":
        members[n] = (name, draw(mutated_bytes(content)))
    methods = draw(st.lists(st.sampled_from([93, 8, 0]), min_size=len(members), max_size=len(members)))
    written = [Member.of(m, c, method) for (m, c), method in zip(members, methods, strict=True)]
    if op == "garbage":
        written[min(n, len(written) - 1)].data = draw(st.binary(max_size=64))
    return eval_zip(written)


@st.composite
def broken_file(draw: st.DrawFn, names: tuple[str, ...] = tuple(FILES)) -> tuple[str, str, bytes]:
    """``(file name, format, bytes)``: one of the peer's files ``names``, broken (see the module)."""
    name = draw(st.sampled_from(sorted(names)))
    data, fmt = ORIGINALS[name], FILES[name]
    if draw(st.integers(0, 4)) == 0:
        return name, fmt, draw(mutated_bytes(data))
    if name.endswith(".eval"):
        return name, fmt, draw(_eval())
    if name.endswith(".jsonl"):
        return name, fmt, draw(_lines(data))
    return name, fmt, _dumps(draw(mutated_json(json.loads(data))))
