"""The Ray executor on a real local Ray cluster: same rows, one governor, faults, resume.

Every test runs a real benchmark on the session's 2-CPU cluster; nothing of ours is mocked.
No test depends on how fast anything runs: workers meet at a file barrier, a worker kills
itself at a chosen run, and the daemon is killed once its store holds a known set of rows.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

import hrbench as hb
import hrbench_client as hc
from hrbench import specs
from hrbench.models import Pricing
from hrbench.records import Result, Usage
from hrbench.runner.ray import RayExecutor
from hrbench.store import Store
from tests._slow import slow
from tests.server._daemon import Daemon

# -- arms and models shipped to the workers (by module name: the driver's sys.path goes along) --


def upper_last_word(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    return str(messages[-1]["content"]).split()[-1].upper()


def sampled(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """A deterministic 'sampled' model: the reply depends on the prompt and the draw index."""
    word = str(messages[-1]["content"]).split()[-1].upper()
    h = hashlib.sha256(f"{word}|{params.get('draw_index')}".encode()).digest()[0]
    return word if h % 3 else word.lower() + "?"


def ask_sync(item: Any, ctx: Any) -> str:
    return ctx.call(f"Say {item}").text


async def ask_async(item: Any, ctx: Any) -> str:
    return (await ctx.acall(f"Say {item}")).text


def two_calls_with_rng(item: Any, ctx: Any) -> str:
    first = ctx.call(f"Say {item}").text
    if ctx.rng.random() < 0.5:
        return first
    return ctx.call(f"Say again {item}").text


def lowered(item: Any, output: Any, label: Any) -> float:
    """A graded metric: 1 when the output is the label in lower case, 0.5 otherwise."""
    return 1.0 if str(getattr(output, "text", output)).islower() else 0.5


def _reference(n: int) -> hb.Reference:
    ids = [f"q{i}" for i in range(n)]
    return hb.Reference(
        {i: f"w{i}" for i in ids},
        labels=[None if k % 7 == 3 else f"W{k}" for k in range(n)],
        cluster=[f"c{k // 4}" for k in range(n)],
    )


def _comparable(rows: list[Any], *drop: str) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        d = msgspec.structs.asdict(r)
        for k in ("seconds", *drop):
            d.pop(k)
        out.append(d)
    return out


def test_rows_are_identical_to_a_local_run(cluster: str) -> None:
    arms = [
        hb.Arm("sync", ask_sync),
        hb.Arm("async", ask_async),
        hb.Arm("rng", two_calls_with_rng),
        specs.build_arm({"kind": "prompt", "name": "prompt", "template": "Say {item}"}),
    ]

    def run(executor: Any) -> tuple[hb.Bench, hb.Governor, hb.Cache]:
        gov, cache = hb.Governor(max_calls=10_000), hb.Cache()
        bench = hb.benchmark(
            arms,
            _reference(18),
            runs=5,
            client=hb.MockClient(sampled),
            governor=gov,
            cache=cache,
            benchmark_id="same",
            concurrency=8,
            executor=executor,
            metrics=[lowered],
        )
        return bench, gov, cache

    local, local_gov, local_cache = run("local")
    remote, remote_gov, remote_cache = run(RayExecutor(batch_size=7))
    assert len(remote.rows) == 18 * 4 * 5
    assert _comparable(remote.rows) == _comparable(local.rows)
    assert {k: v for k, v in remote.traces.items()}.keys() == local.traces.keys()
    for lid, steps in local.traces.items():
        assert [(s.key, s.source, s.text, s.draw_index) for s in remote.traces[lid]] == [
            (s.key, s.source, s.text, s.draw_index) for s in steps
        ]
    # metric means are sums of floats taken in completion order: equal up to rounding
    remote_summary, local_summary = remote.summary(), local.summary()
    metrics = [s.pop("metrics") for s in remote_summary]
    local_metrics = [s.pop("metrics") for s in local_summary]
    assert remote_summary == local_summary
    assert [set(m) for m in metrics] == [{"lowered"}] * len(arms)
    assert metrics == [pytest.approx(m, rel=1e-12) for m in local_metrics]
    assert (remote_gov.calls, remote_gov.tokens) == (local_gov.calls, local_gov.tokens)
    # every live reply went into the driver's cache, under the local keys
    assert remote_cache.stats()["entries"] == local_cache.stats()["entries"] == local_gov.calls


def test_the_same_benchmark_again_is_served_from_the_drivers_cache(cluster: str) -> None:
    cache = hb.Cache()
    first = hb.benchmark(
        hb.Arm("sync", ask_sync),
        _reference(6),
        runs=5,
        client=hb.MockClient(sampled),
        cache=cache,
        governor=hb.Governor(),
        executor="ray",
    )
    gov = hb.Governor()
    again = hb.benchmark(
        hb.Arm("sync", ask_sync),
        _reference(6),
        runs=5,
        client=hb.MockClient(sampled),
        cache=cache,
        governor=gov,
        executor="ray",
    )
    assert gov.calls == 0 and cache.hits == len(again.rows) == 30
    assert _comparable(again.rows, "ledger_id", "usd_provenance") == _comparable(
        first.rows, "ledger_id", "usd_provenance"
    )
    # Every call is served from the cache; the only other step is each run's output note.
    assert {(s.kind, s.source) for s in again.trace} == {("request", "cache"), ("note", "output")}


def test_recordings_are_written_by_the_driver_as_locally(cluster: str) -> None:
    def record(executor: Any) -> list[dict[str, Any]]:
        store = Store()
        hb.benchmark(
            hb.Arm("rng", two_calls_with_rng),
            _reference(6),
            runs=5,
            client=hb.MockClient(sampled),
            governor=hb.Governor(),
            record="r1",
            store=store,
            executor=executor,
        )
        entries = store.recording_export("r1")
        for e in entries:
            e["result"].pop("seconds")  # the reply's latency
        return entries

    local, remote = record("local"), record("ray")
    assert remote == local and len(local) >= 30


# -- the cap across workers --------------------------------------------------------------------

PRICE = {"input": 10.0, "cached_input": 5.0, "output": 40.0}  # USD per million tokens


def _meet(directory: str) -> None:
    """Wait until two worker processes have come here (a file barrier; no clock involved)."""
    Path(directory, str(os.getpid())).touch()
    deadline = time.monotonic() + slow(120)  # a safety net only: a hang would fail the test, not pass it
    while len(os.listdir(directory)) < 2:
        if time.monotonic() > deadline:
            raise RuntimeError("the second worker never came")
        time.sleep(0.01)


def priced_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> Result:
    """A reply whose usage is random but within the governor's worst-case estimate."""
    content = str(messages[-1]["content"])
    h = hashlib.sha256(f"{content}|{params.get('draw_index')}".encode()).digest()
    tokens_in = 1 + h[0] % (len(content) + 8)
    tokens_out = 1 + h[1] % int(params["max_tokens"])
    return Result(
        text=f"{os.getpid()} {content.split()[-1].upper()}",
        usage=Usage(tokens_in=tokens_in, tokens_out=tokens_out, provenance="reported"),
        model="priced",
    )


def ask_priced(barrier: str, item: Any, ctx: Any) -> str:
    _meet(barrier)
    return ctx.call(f"Say {item}", max_tokens=int(ctx.rng.choice([5, 20, 60]))).text.split()[-1]


@pytest.mark.parametrize("cap", [0.03, 0.09])
def test_the_cap_holds_across_workers_with_random_costs(cluster: str, tmp_path: Path, cap: float) -> None:
    gov = hb.Governor(max_usd=cap)
    arm = hb.Arm("priced", functools.partial(ask_priced, str(tmp_path)))
    with pytest.warns(hb.BudgetStoppedWarning):
        bench = hb.benchmark(
            arm,
            _reference(40),
            runs=5,
            client=hb.MockClient(priced_reply, model="priced"),
            governor=gov,
            pricing=Pricing(table={"models": {"priced": PRICE}}),
            concurrency=32,
            executor=RayExecutor(worker_concurrency=16),
        )
    assert len(os.listdir(tmp_path)) >= 2  # two worker processes ran cells at the same time
    spent = sum(r.usd or 0.0 for r in bench.rows)
    assert spent <= cap + 1e-9 and gov.usd <= cap + 1e-9  # 0 overshoots
    assert spent == pytest.approx(gov.usd)
    stopped = [r for r in bench.rows if r.failure_kind == "budget_stop"]
    assert stopped and len(stopped) < len(bench.rows) == 200
    assert gov.calls == len(bench.rows) - len(stopped)
    assert bench.governor["refused"] >= len(stopped)


def ask_raw(item: Any, ctx: Any) -> str:
    return ctx.call(str(item)).raw_text


def test_an_undeclared_dearer_model_is_found_by_one_request_across_the_cluster(cluster: str) -> None:
    """Slow start until the bill is known holds on Ray too: one probe for the whole cluster.

    The endpoint bills gpt-4o for gpt-4o-mini; 32 requests could be in flight across the
    workers, yet only the first is sent, and its reply stops the benchmark naming billed_as.
    """
    from hrbench.testing import LoopbackServer

    with LoopbackServer() as srv:
        srv.set(reply_words=20, serve_model="gpt-4o", latency_s=0.05)
        client = hb.OpenAIClient(
            "gpt-4o-mini",
            base_url=srv.base_url,
            api_key_env=None,
            max_tokens=50,
            timeout_s=slow(5.0),
            trust_env=False,
        )
        gov = hb.Governor(max_usd=0.05)
        with pytest.warns(hb.BudgetStoppedWarning):
            bench = hb.benchmark(
                hb.Arm("ask", ask_raw),
                hb.Reference({f"i{k}": f"q {k}" for k in range(20)}, labels="x"),
                runs=5,
                client=client,
                governor=gov,
                concurrency=32,
                executor=RayExecutor(worker_concurrency=16),
            )
        assert len(srv.requests) == 1 and srv.max_in_flight == 1
        assert [r.failure_kind for r in bench.rows].count("budget_stop") == 99
        assert "billed_as" in (gov.halted or "") and gov.usd <= 0.05


# -- a worker killed mid-batch --------------------------------------------------------------------


def dies_once(marker: str, log: str, item: Any, ctx: Any) -> str:
    """Make one call; at item w3, run 1, the first time, kill this worker process after it."""
    with open(log, "a") as f:
        f.write(json.dumps([ctx.item_id, ctx.run, os.getpid()]) + "\n")
    text = ctx.call(f"Say {item}").text
    if ctx.item_id == "q3" and ctx.run == 1 and not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return text


def test_a_killed_worker_loses_no_row_duplicates_none_and_pays_no_call_twice(
    cluster: str, tmp_path: Path
) -> None:
    marker, log = str(tmp_path / "killed"), str(tmp_path / "invocations.jsonl")
    arm = hb.Arm("dies", functools.partial(dies_once, marker, log))
    ref = _reference(10)
    expected = hb.benchmark(
        hb.Arm("dies", ask_sync), ref, runs=5, client=hb.MockClient(upper_last_word), governor=hb.Governor()
    )
    gov, cache = hb.Governor(), hb.Cache()
    got: list[tuple[str, str, int]] = []
    bench = hb.benchmark(
        arm,
        ref,
        runs=5,
        client=hb.MockClient(upper_last_word),
        governor=gov,
        cache=cache,
        concurrency=2,
        executor=RayExecutor(worker_concurrency=1, batch_size=5),
        on_row=lambda seq, row, trace: got.append((row.arm, row.item, row.run)),
    )
    assert os.path.exists(marker)  # the worker was killed
    assert len(got) == len(set(got)) == len(bench.rows) == 50  # no row lost, none twice
    drop = ("usd", "usd_provenance", "ledger_id")
    assert _comparable(bench.rows, *drop) == _comparable(expected.rows, *drop)
    invocations = [tuple(json.loads(line)) for line in Path(log).read_text().splitlines()]
    pids = {(i, r): set() for i, r, _ in invocations}
    for i, r, pid in invocations:
        pids[(i, r)].add(pid)
    # only the killed run was made again (on another worker); the batch's finished runs were not
    assert sorted(k for k in pids if len([x for x in invocations if x[:2] == k]) > 1) == [("q3", 1)]
    assert len(pids[("q3", 1)]) == 2
    # its call was paid once: the retry was answered from the driver's cache
    assert gov.calls == 50 and cache.hits == 1
    retried = next(r for r in bench.rows if (r.item, r.run) == ("q3", 1))
    assert bench.traces[retried.ledger_id][0].source == "cache"


# -- the driver killed mid-run: the daemon on Ray, SIGKILLed, then resumed -----------------------

GATED = '''
import asyncio, os

GATE = {gate!r}


async def answer(messages, params):
    """Answer 'answer itemN'; items 10 and up wait until the gate file exists."""
    content = messages[-1]["content"]
    while int(content.removeprefix("item")) >= 10 and not os.path.exists(GATE):
        await asyncio.sleep(0.02)
    return "answer " + content
'''


def _spec(tmp_path: Path, executor: Any) -> dict[str, Any]:
    items = {f"q{i}": f"item{i}" for i in range(20)}
    return {
        "arms": [{"kind": "prompt", "name": "ask", "template": "{item}"}],
        "reference": {"items": items, "labels": {k: f"answer {v}" for k, v in items.items()}},
        "client": {"kind": "mock", "function": "gated_model:answer"},
        "runs": 3,
        "governor": {"max_calls": 1000},
        "concurrency": 4,
        "python_path": [str(tmp_path)],
        "executor": executor,
    }


def test_a_ray_run_resumes_after_the_driver_is_killed(cluster: str, tmp_path: Path) -> None:
    gate = tmp_path / "open"
    (tmp_path / "gated_model.py").write_text(GATED.format(gate=str(gate)))
    spec = _spec(tmp_path, {"kind": "ray", "address": cluster})
    daemon = Daemon(tmp_path / "home").start()
    try:
        with daemon.client() as c, daemon.client() as c2:
            stream = c.benchmark(spec)
            first = [row for _, row in zip(range(30), stream, strict=False)]
            bench_id = stream.id
            assert bench_id is not None and len(first) == 30
            assert {r.item for r in first} == {f"q{i}" for i in range(10)}
            deadline = time.monotonic() + slow(120)
            while len(c2.rows(bench_id).rows) < 30:  # wait for the store, not for a clock
                assert time.monotonic() < deadline, "the daemon never stored its rows"
                time.sleep(0.05)
            daemon.kill()  # the driver dies mid-run: items 10-19 are waiting at the gate
    finally:
        daemon.kill()
    gate.touch()
    daemon = Daemon(tmp_path / "home").start()
    try:
        with daemon.client() as c:
            before = c.rows(bench_id)
            assert before.benchmark.status == "running" and len(before.rows) == 30
            resumed = c.resume(bench_id)
            new = list(resumed)
            assert resumed.result is not None and resumed.result.status == "done"
            assert resumed.result.n_resumed == 30 and len(new) == 30
            assert {r.item for r in new} == {f"q{i}" for i in range(10, 20)}
            final = c.rows(bench_id).rows
            local = c.benchmark({**_spec(tmp_path, "local"), "cache": False})
            local_rows = list(local)
            assert local.result is not None
            expected = sorted(_comparable(local_rows, "ledger_id"), key=lambda d: (d["item"], d["run"]))
            assert sorted(_comparable(final, "ledger_id"), key=lambda d: (d["item"], d["run"])) == expected
            assert resumed.result.summary[0].accuracy == 1.0
    finally:
        daemon.stop()
        daemon.kill()


def locked(lock: Any, item: Any, ctx: Any) -> str:
    with lock:
        return str(item)


def test_an_arm_that_cannot_travel_is_a_config_error(cluster: str) -> None:
    arm = hb.Arm("locked", functools.partial(locked, threading.Lock()))
    with pytest.raises(hb.ConfigError, match="picklable"):
        hb.benchmark(arm, _reference(2), runs=5, governor=hb.Governor(), executor="ray")


def test_a_daemon_refuses_a_bad_executor_clearly(tmp_path: Path) -> None:
    mock = {"client": {"kind": "mock", "reply": "x"}}
    daemon = Daemon(tmp_path / "home").start()
    try:
        with daemon.client() as c:
            with pytest.raises(hc.ConfigError, match="executor"):
                list(c.benchmark({**_spec(tmp_path, {"kind": "ray", "address": "nowhere"}), **mock}))
            with pytest.raises(hc.InvalidParams, match=r"executor\.kind"):
                list(c.benchmark({**_spec(tmp_path, {"kind": "spark"}), **mock}))
    finally:
        daemon.stop()
        daemon.kill()
