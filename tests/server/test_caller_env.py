"""The caller's environment (SPEC §4): keys come from the calling shell, for that request only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hrbench_client as hc
from hrbench.testing import LoopbackServer
from tests.server._daemon import Daemon, spec

KEY = "sk-hrbench-caller-0123456789abcdefSECRET"


def _client(srv: LoopbackServer, **kw: object) -> dict[str, object]:
    return {"kind": "openai", "model": "loopback-1", "base_url": srv.base_url, "max_attempts": 1, **kw}


def _assert_key_kept_nowhere(d: Daemon, home: Path) -> None:
    """The caller's key is in neither the daemon's log nor any file of its state folder."""
    assert KEY not in d.read_log()
    for f in home.rglob("*"):
        if f.is_file():
            assert KEY.encode() not in f.read_bytes(), f  # not in the stored spec, rows or traces


def test_a_key_from_the_callers_shell_is_used_for_that_request_only(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HRB_CALLER_KEY", raising=False)
    with LoopbackServer() as srv:
        d = Daemon(home).start()  # started without the key
        try:
            client = _client(srv, api_key_env="HRB_CALLER_KEY")
            monkeypatch.setenv("HRB_CALLER_KEY", KEY)  # the caller's shell has it
            with d.client() as c:
                stream = c.benchmark(spec(n=2, runs=1, client=client))
                rows = list(stream)
                assert len(rows) == 2 and all(r.failure_kind != "error" for r in rows)  # answered
                stored = c.rows(stream.id or "")
                assert stored.benchmark.n_rows == 2
            assert [r.headers.get("authorization") for r in srv.requests] == [f"Bearer {KEY}"] * 2
            monkeypatch.delenv("HRB_CALLER_KEY")  # another caller without it: refused before any call
            with d.client() as c, pytest.raises(hc.ConfigError, match="HRB_CALLER_KEY") as err:
                list(c.benchmark(spec(n=2, runs=1, client=client, name="second")))
            assert err.value.field == "client.api_key_env" and "export HRB_CALLER_KEY" in str(err.value)
            assert len(srv.requests) == 2
        finally:
            d.stop()
    _assert_key_kept_nowhere(d, home)


def test_the_callers_value_wins_over_the_daemons(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackServer() as srv:
        d = Daemon(home, env={"HRB_CALLER_KEY": "sk-daemon-old-key-000000"}).start()
        try:
            monkeypatch.setenv("HRB_CALLER_KEY", KEY)
            with d.client() as c:
                list(c.benchmark(spec(n=1, runs=1, client=_client(srv, api_key_env="HRB_CALLER_KEY"))))
            monkeypatch.delenv("HRB_CALLER_KEY")
            with d.client() as c:  # no caller value: the daemon's own
                list(
                    c.benchmark(
                        spec(n=1, runs=1, client=_client(srv, api_key_env="HRB_CALLER_KEY"), cache=False)
                    )
                )
        finally:
            d.stop()
        assert [r.headers.get("authorization") for r in srv.requests] == [
            f"Bearer {KEY}",
            "Bearer sk-daemon-old-key-000000",
        ]


@pytest.mark.parametrize(
    ("client", "variable"),
    [
        ({"kind": "openai", "model": "gpt-4o-mini"}, "OPENAI_API_KEY"),  # the hosted API
        ({"kind": "anthropic", "model": "claude-haiku-4-5"}, "ANTHROPIC_API_KEY"),
        (
            {
                "kind": "replay",
                "recording": "r",
                "strict": False,
                "fallback": {"kind": "openai", "model": "m"},
            },
            "OPENAI_API_KEY",
        ),
    ],
)
def test_a_key_missing_everywhere_is_an_error_before_the_first_call(
    shared_daemon: Daemon, monkeypatch: pytest.MonkeyPatch, client: dict[str, object], variable: str
) -> None:
    monkeypatch.delenv(variable, raising=False)
    with shared_daemon.client() as c, pytest.raises(hc.ConfigError, match=variable) as err:
        list(c.benchmark(spec(n=1, runs=1, client=client)))
    assert err.value.field.endswith("api_key_env")


def test_a_local_server_with_the_default_variable_unset_still_runs(
    shared_daemon: Daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with LoopbackServer() as srv, shared_daemon.client() as c:
        rows = list(c.benchmark(spec(n=1, runs=1, client=_client(srv))))
        assert rows[0].failure_kind != "error"
        assert srv.requests[0].headers.get("authorization") is None


def test_evaluate_gets_the_callers_key_too(shared_daemon: Daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HRB_EVAL_KEY", raising=False)
    evaluate = {
        "module": {"signature": "text -> label", "instructions": "Answer."},
        "data": [{"text": "a", "label": "b"}],
        "client": {"kind": "openai", "model": "m", "api_key_env": "HRB_EVAL_KEY"},
    }
    with shared_daemon.client() as c, pytest.raises(hc.ConfigError, match="HRB_EVAL_KEY"):
        c.evaluate(evaluate)


def test_the_env_a_request_carries_is_what_the_client_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from hrbench_client.client import with_caller_env

    monkeypatch.setenv("OPENAI_API_KEY", "a-key")
    monkeypatch.setenv("UNRELATED_SECRET", "nope")
    sent = with_caller_env({"client": {"kind": "openai", "model": "m"}})
    assert sent["env"] == {"OPENAI_API_KEY": "a-key"}
    assert "env" not in with_caller_env({"client": {"kind": "openai", "model": "m", "api_key_env": None}})
    assert "env" not in with_caller_env({"client": {"kind": "mock"}})
    assert json.dumps(with_caller_env({"arms": []})) == '{"arms": []}'


def test_a_judge_clients_key_comes_from_the_callers_shell(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # for the scorer too: the client sends the values of the variables a spec
    # names, the judge's client in scorer_settings too; the daemon was started without them
    monkeypatch.delenv("HRB_JUDGE_KEY", raising=False)
    with LoopbackServer() as srv:
        srv.set(reply_fn=lambda prompt, seed, call: "CORRECT")
        d = Daemon(home).start()
        try:
            judged = spec(
                n=2, runs=1, scorer="judge",
                scorer_settings={"client": _client(srv, api_key_env="HRB_JUDGE_KEY")},
            )  # fmt: skip
            monkeypatch.setenv("HRB_JUDGE_KEY", KEY)
            with d.client() as c:
                rows = list(c.benchmark(judged))
            assert [r.correct for r in rows] == [True, True]  # the judge's verdict
            assert [r.headers.get("authorization") for r in srv.requests] == [f"Bearer {KEY}"] * 2
            assert all("You are grading" in r.prompt for r in srv.requests)  # judge calls only
            monkeypatch.delenv("HRB_JUDGE_KEY")  # set nowhere: refused before any call
            with d.client() as c, pytest.raises(hc.ConfigError, match="HRB_JUDGE_KEY") as err:
                list(c.benchmark({**judged, "name": "no-key"}))
            assert err.value.field == "scorer_settings.client.api_key_env"
            assert len(srv.requests) == 2
        finally:
            d.stop()
    _assert_key_kept_nowhere(d, home)
