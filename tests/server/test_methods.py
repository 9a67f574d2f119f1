"""evaluate, references, recordings, cache stats and reports through a real daemon."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hrbench_client as hc
from tests.server._daemon import Daemon, spec


def test_evaluate_from_a_spec(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        out = c.evaluate(
            {
                "module": {"signature": "text -> sentiment: enum('positive', 'negative')"},
                "client": {"kind": "mock", "reply": '{"sentiment": "positive"}'},
                "data": [
                    {"text": "I love it!", "sentiment": "positive"},
                    {"text": "Awful.", "sentiment": "negative"},
                ],
                "metric": {"name": "exact_match", "field": "sentiment"},
            }
        )
        assert out["mean_score"] == 0.5 and out["n_evaluated"] == 2
        with pytest.raises(hc.InvalidParams, match="missing required field `module`"):
            c.evaluate({"data": []})
        with pytest.raises(hc.InvalidParams, match=r"\$\.module\.signature"):
            c.evaluate({"module": {"signature": 3}, "data": []})


def test_references_put_get_list(shared_daemon: Daemon, tmp_path: Path) -> None:
    with shared_daemon.client() as c:
        info = c.references.put(
            {"items": {"a": "France", "b": "Peru"}, "labels": ["Paris", "Lima"]}, name="caps"
        )
        assert info.n_items == 2 and len(info.hash) == 64
        again = c.references.get("caps")
        assert again.items == {"a": "France", "b": "Peru"} and again.labels == {"a": "Paris", "b": "Lima"}
        assert c.references.get(info.hash[:10]).items == again.items
        assert any(r.name == "caps" and r.hash == info.hash for r in c.references.list())
        rows = tmp_path / "ref.jsonl"
        rows.write_text('{"id": "x", "item": "Chad", "label": "N\'Djamena", "split": "dev"}\n')
        assert c.references.put({"path": str(rows)}, name="from-file").n_items == 1
        with pytest.raises(hc.ConfigError):  # a reference needs items or a path
            c.references.put({}, name="empty")
        stream = c.benchmark(spec(reference="caps", runs=1))
        assert len(list(stream)) == 2


def test_reference_names_through_the_daemon(shared_daemon: Daemon) -> None:
    a = {"items": {"a": "France"}, "labels": ["Paris"]}
    b = {"items": {"a": "France"}, "labels": ["Lyon"]}
    with shared_daemon.client() as c:
        first = c.references.put(a, name="names-x")
        c.references.put(b, name="names-x")
        c.references.put(a, name="names-x")
        assert c.references.get("names-x").labels == {"a": "Paris"}  # the last put, not B
        c.references.put(a, name="names-y")  # a second name for the same content
        listed = {r.name: r.hash for r in c.references.list() if r.name in ("names-x", "names-y")}
        assert listed == {"names-x": first.hash, "names-y": first.hash}


def test_recordings_export_import_and_replay(shared_daemon: Daemon, tmp_path: Path) -> None:
    with shared_daemon.client() as c:
        first = c.benchmark(spec(n=3, runs=2, record="rec-a", cache=False))
        assert len(list(first)) == 6
        out = c.recording_export("rec-a", tmp_path / "rec.jsonl")
        assert out.n == 6 and len((tmp_path / "rec.jsonl").read_text().splitlines()) == 6
        assert c.recording_import(tmp_path / "rec.jsonl", name="rec-b").n == 6
        replay = spec(n=3, runs=2, client={"kind": "replay", "recording": "rec-b"})
        stream = c.benchmark(replay)
        assert all(r.correct for r in stream)
        names = {r["recording"] for r in c.cache_stats()["recordings"]}
        assert {"rec-a", "rec-b"} <= names
        with pytest.raises(hc.NotFound):
            c.recording_export("no-such-recording", tmp_path / "x.jsonl")
        with pytest.raises(hc.ConfigError, match="absolute"):
            c.call("recording/export", {"name": "rec-a", "path": "relative.jsonl"})
        strict = spec(n=4, runs=2, client={"kind": "replay", "recording": "rec-b"})
        rows = list(c.benchmark(strict))  # item q3 was never recorded: a strict miss is an error row
        assert sum(r.failure_kind == "error" for r in rows) == 2


def test_report_of_stored_benchmark(shared_daemon: Daemon) -> None:
    with shared_daemon.client() as c:
        stream = c.benchmark(
            spec(
                n=4,
                arms=[
                    {"kind": "prompt", "name": "a", "template": "{item}"},
                    {
                        "kind": "outputs",
                        "name": "b",
                        "outputs": {"q0": "answer item0", "q1": "no", "q2": "x", "q3": "y"},
                    },
                ],
            )
        )
        list(stream)
        rep = c.report(stream.id, compare_pair=["a", "b"])  # type: ignore[arg-type]
        assert [a["arm"] for a in rep["arms"]] == ["a", "b"]
        assert len(rep["comparisons"]) == 1
        json.dumps(rep)
        with pytest.raises(hc.ConfigError):
            c.report(stream.id, no_such_setting=1)  # type: ignore[arg-type]


def test_report_plot_is_written_by_the_daemon(shared_daemon: Daemon, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "report.png"
    with shared_daemon.client() as c:
        stream = c.benchmark(spec(n=3))
        list(stream)
        assert stream.id is not None
        rep = c.report(stream.id, plot=str(png))
        assert rep["plot"] == str(png) and str(png) in rep["text"]
        assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        with pytest.raises(hc.ConfigError, match="plot"):
            c.report(stream.id, plot=str(tmp_path / "missing" / "x.png"))


def test_reading_recipe_on_a_squad_reference(shared_daemon: Daemon, data: Path) -> None:
    squad = data / "squad2-dev-500" / "squad2_dev_500.jsonl"
    assert squad.exists(), f"shared data missing: {squad} (set HRBENCH_DATA to the shared data folder)"
    with shared_daemon.client() as c:
        stream = c.benchmark(
            {
                "arms": [
                    {"kind": "reading", "recipe": "direct", "name": "direct"},
                    {"kind": "reading", "recipe": "retrieve", "settings": {"k": 2}},
                ],
                "reference": {"path": str(squad), "format": "squad", "limit": 4},
                "client": {"kind": "mock", "reply": "NOT_IN_DOCUMENT"},
                "scorer": "answer_contains",
                "runs": 1,
                "governor": {},
            }
        )
        rows = list(stream)
        assert len(rows) == 8 and {r.arm for r in rows} == {"direct", "retrieve"}
        assert all(r.failure_kind in (None, "not_in_document") for r in rows)
        with pytest.raises(hc.ConfigError, match="recipe"):
            list(c.benchmark(spec(arms=[{"kind": "reading", "recipe": "__class__"}])))
