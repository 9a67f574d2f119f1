"""read_rows(): a rows file gives its rows or a ConfigError naming the file and the place, whatever it holds.

Bad CI baselines (random bytes, a text file named ``.parquet``, an empty file, a JSON array of
non-rows, a CSV missing columns) are bad input, never an internal error; a property test feeds
it arbitrary bytes and mutations of a real rows file under each ending.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrbench.errors import ConfigError
from hrbench.records import Row
from hrbench.rowfile import ROW_FILE_SUFFIXES, read_rows
from tests._examples import examples

BASELINE = Path(__file__).resolve().parents[2] / "examples" / "ci" / "baseline.jsonl"

BAD: dict[str, tuple[str, Callable[[Path], object], str]] = {
    "random bytes (jsonl)": ("jsonl", lambda p: p.write_bytes(random.Random(7).randbytes(4096)), r"is not UTF-8 text: byte \d+ \(line 1\) is 0x[0-9A-F]{2}"),
    "random bytes (csv)": ("csv", lambda p: p.write_bytes(random.Random(8).randbytes(4096)), r"is not UTF-8 text: byte \d+ \(line \d+\) is 0x[0-9A-F]{2}"),
    "random bytes (parquet)": ("parquet", lambda p: p.write_bytes(random.Random(9).randbytes(4096)), r"is not a Parquet file pyarrow can read"),
    "text named .parquet": ("parquet", lambda p: p.write_text("cluster,item,arm\n"), r"is not a Parquet file pyarrow can read"),
    "empty (jsonl)": ("jsonl", lambda p: p.write_bytes(b""), r"is empty \(0 bytes\)"),
    "empty (csv)": ("csv", lambda p: p.write_bytes(b""), r"is empty \(0 bytes\)"),
    "empty (parquet)": ("parquet", lambda p: p.write_bytes(b""), r"is empty \(0 bytes\)"),
    "blank lines only": ("jsonl", lambda p: p.write_text("\n  \n"), r"holds no rows"),
    "a JSON array of non-rows": ("jsonl", lambda p: p.write_text('[1, "two", null]\n'), r"line 1 is not a row of `hrb rows` \(a JSON array, not an object\)"),
    "a JSON number": ("jsonl", lambda p: p.write_text("{}\n42\n"), r"line 1 is not a row of `hrb rows`: it has no item, arm, run, correct"),
    "JSON nested too deeply": ("jsonl", lambda p: p.write_text("[" * 200_000 + "\n"), r"line 1 is JSON nested too deeply"),
    "a line that is not JSON": ("jsonl", lambda p: p.write_text(BASELINE.read_text().splitlines()[0] + "\n{oops\n"), r"line 2 is not JSON"),
    "a CSV missing columns": ("csv", lambda p: p.write_text("item,arm\nq1,ask\n"), r"line 1 \(the header\) has no column run, correct \(a row needs item, arm, run, correct; its columns: 'item', 'arm'\)"),
    "a CSV of other columns": ("csv", lambda p: p.write_text("foo,bar\n1,2\n"), r"has no column item, arm, run, correct"),
    "a CSV field over the csv limit": ("csv", lambda p: p.write_text("item,arm,run,correct\n" + "q" * 200_000 + ",a,1,True\n"), r"line \d+ is not CSV: field larger than field limit"),
    "a CSV cell of the wrong type": ("csv", lambda p: p.write_text("item,arm,run,correct\nq1,a,first,True\n"), r"line 2 is not a row of `hrb rows`: Expected `int`"),
    "Parquet missing columns": ("parquet", lambda p: pq.write_table(pa.table({"item": ["q1"], "arm": ["a"]}), p), r"has no column run, correct"),
    "a folder named .jsonl": ("jsonl", lambda p: p.mkdir(), r"cannot be read: Is a directory"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_rows_file_is_a_config_error_naming_the_file_and_the_place(tmp_path: Path, case: str) -> None:
    suffix, write, why = BAD[case]
    path = tmp_path / f"base.{suffix}"
    write(path)
    with pytest.raises(ConfigError) as got:
        read_rows(path, "baseline")
    message = str(got.value)
    assert message.startswith("baseline: ") and message.endswith(f"(got {str(path)!r})"), message
    assert got.value.field == "baseline"
    assert re.search(why, message), message


def test_the_ci_baseline_reads_back_in_every_format(tmp_path: Path) -> None:
    rows = read_rows(BASELINE)
    assert len(rows) == 60 and {r.item for r in rows} >= {"fr", "td"}
    records = [json.loads(line) for line in BASELINE.read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(records), tmp_path / "b.parquet")
    head = ",".join(Row.__struct_fields__)
    body = "".join(
        ",".join("" if r[c] is None else str(r[c]) for c in Row.__struct_fields__) + "\n" for r in records
    )
    (tmp_path / "b.csv").write_bytes(
        b"\xef\xbb\xbf" + f"{head}\n{body}".encode()
    )  # a byte-order mark, as Excel writes
    assert read_rows(tmp_path / "b.parquet") == rows
    assert [(r.item, r.run, r.correct) for r in read_rows(tmp_path / "b.csv")] == [
        (r.item, r.run, r.correct) for r in rows
    ]


def _mutated(data: bytes, seed: int) -> bytes:
    """``data`` truncated, with bytes flipped or a slice repeated (seeded)."""
    rng = random.Random(seed)
    out = bytearray(data[: rng.randrange(len(data) + 1)] if rng.random() < 0.5 else data)
    for _ in range(rng.randrange(4)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    if out and rng.random() < 0.3:
        i = rng.randrange(len(out))
        out[i:i] = out[i : i + rng.randrange(64)]
    return bytes(out)


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The CI baseline in each format, as bytes to mutate."""
    d = tmp_path_factory.mktemp("sources")
    records = [json.loads(line) for line in BASELINE.read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(records), d / "b.parquet")
    csv = (
        ",".join(Row.__struct_fields__)
        + "\n"
        + "".join(
            ",".join("" if r[c] is None else str(r[c]) for c in Row.__struct_fields__) + "\n" for r in records
        )
    )
    return {".jsonl": BASELINE.read_bytes(), ".csv": csv.encode(), ".parquet": (d / "b.parquet").read_bytes()}


@given(
    suffix=st.sampled_from(ROW_FILE_SUFFIXES),
    raw=st.one_of(st.binary(max_size=2048), st.integers(min_value=0, max_value=2**32)),
)
@settings(
    max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_bytes_under_any_ending_give_rows_or_a_config_error(
    tmp_path: Path, sources: dict[str, bytes], suffix: str, raw: bytes | int
) -> None:
    data = _mutated(sources[suffix], raw) if isinstance(raw, int) else raw
    path = tmp_path / f"f{suffix}"
    path.write_bytes(data)
    try:
        rows = read_rows(path, "baseline")
    except ConfigError as exc:
        assert str(exc).startswith("baseline: ") and str(path) in str(exc), (raw, str(exc))
    else:
        assert rows and all(isinstance(r, Row) for r in rows)
