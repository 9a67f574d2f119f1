"""A benchmark whose end cannot be stored (a full disk) is never reported done: its caller gets
the store's error and advice (`hrb` exits 3), its rows are kept, and a resume finishes it
without calling again. A real daemon on a real tiny tmpfs, filled just before the end is
stored (tests/server/_full_at_finish.py times it; the write meets a real SQLITE_FULL).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hrbench_client as hc
from tests._fs import can_mount, tiny_fs
from tests._slow import slow
from tests.server._daemon import HERE, Daemon, spec

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


class FullAtFinish(Daemon):
    def command(self) -> list[str]:
        cmd = super().command()
        assert cmd[1:4] == ["-P", "-m", "hrbench_server"]
        return [cmd[0], "-P", str(HERE / "_full_at_finish.py"), *cmd[4:]]


def calls(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_benchmark_whose_end_meets_a_full_disk_is_not_done(tmp_path: Path) -> None:
    if not can_mount(tmp_path):
        pytest.skip("no tmpfs here: a full disk at the end cannot be made without mounting one")
    home = tmp_path / "full"
    calls_file = tmp_path / "calls.jsonl"
    filler = home / "filler"
    armed = Path(f"{filler}.armed")
    with tiny_fs(home, 4096):
        d = FullAtFinish(home, env={"HRB_FILLER": str(filler), "HRB_CALLS_FILE": str(calls_file)}).start()
        try:
            armed.touch()
            with d.client() as c:
                stream = c.benchmark(spec(n=3, runs=2))
                seen = []
                with pytest.raises(hc.StoreFull) as err:
                    seen.extend(stream)
                bid = stream.id or ""
                assert err.value.code == -32023
                message = str(err.value)
                assert f"the disk holding the database {home / 'hrbench.sqlite3'} is full" in message
                assert f"Benchmark {bid}: its end could not be stored, so it is not done" in message
                assert "6 of 6 runs are saved and kept" in message and f"hrb bench --resume {bid}" in message
                assert len(seen) == 6
                filler.unlink()  # room again: the store can be read and written
                stored = c.rows(bid)
                assert stored.benchmark.status != "done" and len(stored.rows) == 6
                assert c.status().running == []
            assert calls(calls_file) == 6

            # `hrb bench` on the same daemon: exit 3, the store's advice on stderr, no `done`
            toml = tmp_path / "bench.toml"
            toml.write_text(
                textwrap.dedent(f"""
                runs = 1
                python_path = [{json.dumps(str(HERE))}]
                [reference]
                items = ["a", "b"]
                labels = ["answer a", "answer b"]
                [client]
                kind = "mock"
                function = "_mocks:answer"
                [[arms]]
                kind = "prompt"
                name = "ask"
                template = "{{item}}"
            """)
            )
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "hrbench_client.cli",
                    "bench",
                    str(toml),
                    "--no-rows",
                    "--no-autostart",
                ],
                capture_output=True,
                text=True,
                timeout=slow(120),
                env={**os.environ, "HRBENCH_HOME": str(home)},
            )
            assert out.returncode == 3, (out.stdout, out.stderr)
            assert "StoreFull" in out.stderr and "is full" in out.stderr and "so it is not done" in out.stderr
            assert '"status": "done"' not in out.stdout and '"status":"done"' not in out.stdout
            filler.unlink()
            armed.unlink()

            with d.client() as c:  # a resume stores the end and calls nothing again
                resumed = c.resume(bid)
                assert list(resumed) == []  # every run was saved: nothing runs again
                assert resumed.result is not None and resumed.result.status == "done"
                rows = c.rows(bid)
                assert rows.benchmark.status == "done" and len(rows.rows) == 6
            assert calls(calls_file) == 6 + 2
        finally:
            d.stop()
