"""The import limits: every read of another tool's file is bounded, refused by name, and streamed.

The bombs (``hrbench.testing._bombs``) are 32-56 KB ``.eval`` logs that inflate to 1 GiB; each is
refused here through the library, and by a real daemon in
``tests/clients/test_cli_import_bombs.py`` (with its memory measured).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from hrbench.errors import ConfigError
from hrbench.interop import read_imported
from hrbench.interop._foreign import Imported
from hrbench.testing import write_bombs
from hrbench.testing._bombs import BOMBS, Member, eval_zip

DATA = Path(__file__).parent / "data"
EVAL, JSON = DATA / "inspect_capitals.eval", DATA / "inspect_capitals.json"
LMEVAL = DATA / "samples_arith_2026-12-02T05-00-00.jsonl"
PROMPTFOO = DATA / "promptfoo_capitals.json"

# what refuses each bomb under the default limits
REFUSED_BY = {
    "zstd-one-member": "HRBENCH_IMPORT_MAX_MEMBER_BYTES",  # its directory declares 1 GiB
    "zstd-size-lies": "inflates past the 2,000 bytes the zip declares for it",
    "zstd-many-members": "HRBENCH_IMPORT_MAX_RATIO",
    "deflate-member": "HRBENCH_IMPORT_MAX_RATIO",
    "deflate-overlap": "holds member samples/1_epoch_1.json twice",
    "nested-1gib": "HRBENCH_IMPORT_MAX_MEMBER_BYTES",
    "nested-100k": "HRBENCH_IMPORT_MAX_DEPTH",  # past the parser's own recursion limit
    "nested-150": "HRBENCH_IMPORT_MAX_DEPTH",  # within it: the walk after the parse
}


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_bombs(tmp_path_factory.mktemp("bombs"))


def test_every_bomb_is_small_and_named_here(bombs: dict[str, Path]) -> None:
    assert sorted(REFUSED_BY) == sorted(BOMBS)
    assert all(p.stat().st_size < 64_000 for p in bombs.values())


@pytest.mark.parametrize("name", sorted(REFUSED_BY))
def test_a_bomb_is_refused_naming_the_limit_and_how_to_raise_it(name: str, bombs: dict[str, Path]) -> None:
    with pytest.raises(ConfigError) as caught:
        read_imported(bombs[name], "inspect")
    msg = str(caught.value)
    assert REFUSED_BY[name] in msg and str(bombs[name]) in msg
    if REFUSED_BY[name].startswith("HRBENCH_"):
        var = REFUSED_BY[name]
        assert f"over the import limit {var}=" in msg and f"raise it (e.g. {var}=" in msg


@pytest.mark.parametrize(
    ("env", "name", "refused_by"),
    [
        # with the ratio and the member size raised, the total bytes read stop the 1 GiB member
        ({"HRBENCH_IMPORT_MAX_RATIO": "100000", "HRBENCH_IMPORT_MAX_MEMBER_BYTES": "2GiB"}, "zstd-one-member", "HRBENCH_IMPORT_MAX_BYTES=256MiB"),
        ({"HRBENCH_IMPORT_MAX_RATIO": "100000", "HRBENCH_IMPORT_MAX_MEMBER_BYTES": "2GiB"}, "nested-1gib", "HRBENCH_IMPORT_MAX_BYTES=256MiB"),
        # the ratio raised: 31 members of 8 MiB are read, one at a time, and the 32nd (in name order) is past 256 MiB
        ({"HRBENCH_IMPORT_MAX_RATIO": "100000"}, "zstd-many-members", "member samples/12_epoch_1.json declares 8,388,608 bytes, 268,435,534 with the members read before it"),
        ({"HRBENCH_IMPORT_MAX_DEPTH": "200"}, "nested-150", None),  # raised: read (no samples)
    ],
)  # fmt: skip
def test_each_limit_stands_behind_the_others(
    env: dict[str, str],
    name: str,
    refused_by: str | None,
    bombs: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ConfigError) as caught:
        read_imported(bombs[name], "inspect")
    assert (refused_by or "holds no samples") in str(caught.value)


def _limited(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> str:
    var = "HRBENCH_IMPORT_" + name.upper()
    monkeypatch.setenv(var, value)
    return var


def _declared(path: Path, member: str) -> int:
    """The inflated size a zip's central directory declares for ``member`` (bytes)."""
    import zipfile

    with zipfile.ZipFile(path) as zf:
        return zf.getinfo(member).file_size


@pytest.mark.parametrize(
    ("name", "value", "path", "fmt", "found"),
    [
        ("max_bytes", "60000", JSON, "inspect", f"the file is {JSON.stat().st_size:,} bytes"),
        ("max_bytes", "20000", EVAL, "inspect", r"member samples/\S+ declares [\d,]+ bytes, [\d,]+ with the members read before it"),
        ("max_bytes", "3000", LMEVAL, "lm-eval", "line 5: more than 3,"),
        ("max_bytes", "8000", PROMPTFOO, "promptfoo", "the file is 8,255 bytes"),
        ("max_member_bytes", "5000", EVAL, "inspect", f"member samples/3_epoch_1.json declares {_declared(EVAL, 'samples/3_epoch_1.json'):,} bytes"),
        ("max_member_bytes", "500", LMEVAL, "lm-eval", "line 1 is longer than 500 bytes"),
        ("max_members", "12", EVAL, "inspect", "the zip has 13 members"),
        ("max_values", "1000", JSON, "inspect", r"the file: [\d,]+ JSON values or more"),
        ("max_values", "300", EVAL, "inspect", r"member samples/3_epoch_1.json: [\d,]+ JSON values or more"),
        ("max_values", "100", LMEVAL, "lm-eval", "line 4: 117 JSON values or more"),
        ("max_depth", "6", JSON, "inspect", "the file nests deeper than 6"),
        ("max_depth", "6", EVAL, "inspect", "member header.json nests deeper than 6"),
        ("max_depth", "3", PROMPTFOO, "promptfoo", "the file nests deeper than 3"),
    ],
)  # fmt: skip
def test_each_limit_refuses_a_real_file_when_lowered(
    name: str, value: str, path: Path, fmt: str, found: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The peers' own files pass the defaults and are refused by each limit set below them."""
    read_imported(path, fmt)  # within the defaults
    var = _limited(monkeypatch, name, value)
    with pytest.raises(ConfigError, match=rf"^path: .*{found}.*: over the import limit {var}=") as caught:
        read_imported(path, fmt)
    assert "in the environment of the process that reads it" in str(caught.value)


def test_the_ratio_is_of_inflated_to_compressed_bytes_past_the_first_mib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = json.dumps({"id": 1, "epoch": 1, "input": " " * (3 << 20), "target": "a"}).encode()
    header = json.dumps({"version": 2, "eval": {"model": "m"}}).encode()
    path = tmp_path / "spaces.eval"
    path.write_bytes(
        eval_zip([Member.of("header.json", header, 8), Member.of("samples/1_epoch_1.json", sample)])
    )
    with pytest.raises(
        ConfigError,
        match=r"member samples/1_epoch_1.json declares 3,145,7\d\d bytes, [\d,]+ times its [\d,]+ compressed bytes: over the import limit HRBENCH_IMPORT_MAX_RATIO=100;",
    ):
        read_imported(path, "inspect")
    monkeypatch.setenv("HRBENCH_IMPORT_MAX_RATIO", "1000000")
    assert read_imported(path, "inspect").items == {"1": " " * (3 << 20)}
    small = tmp_path / "small.eval"  # 200 KB of spaces: past 100 to 1, but under a MiB
    small_sample = json.dumps({"id": 1, "epoch": 1, "input": " " * 200_000}).encode()
    small.write_bytes(
        eval_zip([Member.of("header.json", header, 8), Member.of("samples/1_epoch_1.json", small_sample)])
    )
    monkeypatch.delenv("HRBENCH_IMPORT_MAX_RATIO")
    assert len(read_imported(small, "inspect").items["1"]) == 200_000


@pytest.mark.parametrize(
    ("var", "raw", "want"),
    [
        ("HRBENCH_IMPORT_MAX_BYTES", "lots", "expected a size, e.g. 512MiB or 2GiB"),
        ("HRBENCH_IMPORT_MAX_BYTES", "0", "expected a size"),
        ("HRBENCH_IMPORT_MAX_BYTES", "3 parsecs", "expected a size"),
        ("HRBENCH_IMPORT_MAX_DEPTH", "10MiB", "expected a whole number of 1 or more"),
        ("HRBENCH_IMPORT_MAX_MEMBERS", "-5", "expected a whole number of 1 or more"),
    ],
)
def test_a_limit_variable_that_is_not_a_number_is_refused_by_name(
    var: str, raw: str, want: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(var, raw)
    with pytest.raises(ConfigError, match=rf"^{var}: {want}"):
        read_imported(JSON, "inspect")


def test_a_bad_limit_variable_is_named_as_itself_under_a_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spec's fields are named by their place (``arms[0].path``); an environment variable is not one."""
    from hrbench.specs import build_arm

    monkeypatch.setenv("HRBENCH_IMPORT_MAX_DEPTH", "deep")
    with pytest.raises(ConfigError, match=r"^HRBENCH_IMPORT_MAX_DEPTH: expected a whole number of 1 or more"):
        build_arm({"kind": "outputs", "name": "a", "path": str(JSON), "format": "inspect"})


def test_limit_variables_take_units() -> None:
    from hrbench.interop._limits import LIMIT_VARIABLES, ImportLimits, import_limits

    assert all(var == "HRBENCH_IMPORT_" + name.upper() for name, var in LIMIT_VARIABLES.items())
    assert import_limits() == ImportLimits()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HRBENCH_IMPORT_MAX_BYTES", "2GiB")
        mp.setenv("HRBENCH_IMPORT_MAX_MEMBER_BYTES", "500MB")
        mp.setenv("HRBENCH_IMPORT_MAX_VALUES", "123")
        got = import_limits()
    assert (got.max_bytes, got.max_member_bytes, got.max_values) == (2 << 30, 500_000_000, 123)


def test_eval_samples_are_read_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each sample member is inflated and parsed when the reader's loop reaches it, not all first."""
    from hrbench.interop import _bounded

    events: list[str] = []
    document, add_run = _bounded.ZipDocuments.document, Imported.add_run

    def logged_document(self: _bounded.ZipDocuments, name: str) -> object:
        events.append(f"read {name}")
        return document(self, name)

    def logged_add_run(self: Imported, arm: str, item: str, run: int | None, *rest: object) -> None:
        events.append(f"run {item} {run}")
        add_run(self, arm, item, run, *rest)

    monkeypatch.setattr(_bounded.ZipDocuments, "document", logged_document)
    monkeypatch.setattr(Imported, "add_run", logged_add_run)
    read_imported(EVAL, "inspect")
    assert events[:5] == [
        "read header.json",
        "read samples/3_epoch_1.json",
        "run 3 1",
        "read samples/3_epoch_2.json",
        "run 3 2",
    ]
    assert len(events) == 1 + 2 * 6


def test_lm_eval_lines_are_read_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from hrbench.interop import _bounded

    events: list[str] = []
    decode, add_run = _bounded.decode, Imported.add_run
    monkeypatch.setattr(
        _bounded,
        "decode",
        lambda data, label, what, offset=0: events.append(label) or decode(data, label, what, offset),
    )
    monkeypatch.setattr(Imported, "add_run", lambda self, *a: events.append("run") or add_run(self, *a))
    read_imported(LMEVAL, "lm-eval")
    assert events[:4] == ["line 1", "run", "run", "line 2"]


def _zip_of(tmp_path: Path, name: str, members: list[Member], **kw: int) -> Path:
    path = tmp_path / name
    path.write_bytes(eval_zip(members, **kw))
    return path


def test_broken_zips_are_refused_naming_the_member(tmp_path: Path) -> None:
    good = EVAL.read_bytes()
    cases = {
        "truncated.eval": (good[: len(good) // 2], "not a zip file"),
        "empty.eval": (b"", "not a zip file"),
    }
    for name, (data, want) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ConfigError, match=want):
            read_imported(tmp_path / name, "inspect")
    h = json.dumps({"version": 2, "eval": {"model": "m"}}).encode()
    s = json.dumps({"id": 1, "epoch": 1, "input": "q", "target": "a"}).encode()
    bad_crc = Member.of("samples/1_epoch_1.json", s)
    bad_crc.crc ^= 1
    unknown = Member.of("samples/1_epoch_1.json", s, 0)
    unknown.method = 99
    garbage = Member("samples/1_epoch_1.json", 93, b"\x28\xb5\x2f\xfd" + b"\xff" * 40, len(s), 0)
    zcases = [
        (
            [Member.of("header.json", h), bad_crc],
            "member samples/1_epoch_1.json cannot be read: it fails its CRC-32",
        ),
        ([Member.of("header.json", h), Member.of("samples/1_epoch_1.json", s, 8)], None),
        ([Member.of("header.json", h), Member.of("samples/1_epoch_1.json", s, 0)], None),
        (
            [Member.of("header.json", h), unknown],
            "member samples/1_epoch_1.json cannot be read: .*compression",
        ),
        (
            [Member.of("header.json", h), garbage],
            "member samples/1_epoch_1.json cannot be read: corrupt zstd data",
        ),
        (
            [Member.of("header.json", b"{not json")],
            "member header.json: not JSON .*: is it an Inspect .eval log",
        ),
        (
            [Member.of("header.json", b"\xff\xfe{}")],
            r"member header.json: not UTF-8 text: byte 0 \(line 1\) is 0xFF, .*; it is UTF-16, little-endian .*; is it an Inspect .eval log",
        ),
        ([Member.of("samples/1_epoch_1.json", s)], r"is not an Inspect .eval log \(no header.json\)"),
    ]
    for n, (members, want) in enumerate(zcases):
        path = _zip_of(tmp_path, f"z{n}.eval", members)
        if want is None:
            assert read_imported(path, "inspect").labels == {"1": "a"}
            continue
        with pytest.raises(ConfigError, match=want):
            read_imported(path, "inspect")


def test_a_zip64_member_count_is_read_before_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over ``max_members`` the zip is refused from its end record, before zipfile reads its directory."""
    from hrbench.interop import _bounded

    h = json.dumps({"version": 2, "eval": {"model": "m"}}).encode()
    path = _zip_of(tmp_path, "many.eval", [Member.of(f"samples/{n}_epoch_1.json", h, 0) for n in range(30)])
    monkeypatch.setenv("HRBENCH_IMPORT_MAX_MEMBERS", "20")
    monkeypatch.setattr(zipfile, "ZipFile", None)  # reaching it would fail with a TypeError
    with pytest.raises(
        ConfigError, match="the zip has 30 members: over the import limit HRBENCH_IMPORT_MAX_MEMBERS=20"
    ):
        read_imported(path, "inspect")
    with open(path, "rb") as f:
        assert _bounded._zip_entries(f) == 30


def test_a_lone_surrogate_is_refused_where_it_is(tmp_path: Path) -> None:
    data = json.loads(JSON.read_text())
    data["samples"][2]["metadata"]["note"] = "\ud800"  # json.dumps writes it escaped, as JSON allows
    (tmp_path / "s.json").write_text(json.dumps(data))
    with pytest.raises(
        ConfigError, match=r"samples\[2\].metadata.note: a string holds a lone UTF-16 surrogate"
    ):
        read_imported(tmp_path / "s.json", "inspect")
    data["samples"][2]["metadata"]["note"] = "fine"
    for s in data["samples"]:
        s["target"] = "\U0001f600"  # a pair, escaped: one character, kept
    (tmp_path / "ok.json").write_text(json.dumps(data))
    assert "\U0001f600" in read_imported(tmp_path / "ok.json", "inspect").labels.values()


def test_a_huge_run_number_is_refused_not_held(tmp_path: Path) -> None:
    data = json.loads(JSON.read_text())
    data["samples"][1]["epoch"] = 10**30
    (tmp_path / "e.json").write_text(json.dumps(data))
    with pytest.raises(
        ConfigError, match=r"has run 1000000000000000000000000000000 .*HRBENCH_IMPORT_MAX_VALUES"
    ):
        read_imported(tmp_path / "e.json", "inspect")


@pytest.mark.parametrize(("path", "fmt"), [(LMEVAL, "lm-eval"), (PROMPTFOO, "promptfoo")])
def test_a_file_saved_with_a_byte_order_mark_reads_as_the_one_without(
    tmp_path: Path, path: Path, fmt: str
) -> None:
    """Windows tools write ``EF BB BF`` first; the bounded readers skip it (JSON lines and whole JSON)."""
    marked = tmp_path / path.name
    marked.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    got, want = read_imported(marked, fmt), read_imported(path, fmt)
    assert (got.items, got.labels, got.arms) == (want.items, want.labels, want.arms)
    assert got.items
