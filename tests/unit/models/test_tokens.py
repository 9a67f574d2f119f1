"""Offline token counting: shipped vocabularies, counted vs estimated provenance."""

from __future__ import annotations

import subprocess
import sys

import hrbench as hb
from hrbench.models import count_messages
from hrbench.models._tokens import count_tokens, encoding_name, usage_of
from tests._slow import slow


def test_counts_offline_from_the_shipped_vocabularies(tmp_path) -> None:
    # a fresh process with an empty cache dir and no network: tiktoken must not download
    code = (
        "from hrbench.models._tokens import count_tokens;"
        "print(count_tokens('The quick brown fox jumps over the lazy dog.', 'gpt-4o'),"
        " count_tokens('The quick brown fox jumps over the lazy dog.', 'gpt-4'))"
    )
    env = {
        "PATH": "",
        "HRBENCH_HOME": str(tmp_path),
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tk"),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=slow(60)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["10", "10"]


def test_encodings_by_model() -> None:
    assert encoding_name("openai/gpt-4.1-mini") == "o200k_base"
    assert encoding_name("gpt-3.5-turbo") == "cl100k_base"
    assert encoding_name("claude-sonnet-4") is None
    assert count_tokens("hello", None) is None


def test_message_counting_rule() -> None:
    msgs = [{"role": "user", "content": "hello world"}]
    # 3 priming + 3 per message + role ("user": 1) + content (2)
    assert count_messages(msgs, "gpt-4o") == 3 + 3 + 1 + 2


def test_usage_provenance() -> None:
    counted = usage_of([{"role": "user", "content": "hi"}], "hello world", "gpt-4o")
    assert counted.provenance == "counted" and counted.tokens_out == 2
    est = usage_of([{"role": "user", "content": "x" * 40}], "y" * 9, "local-llama")
    # one token per UTF-8 byte (README's worst-case rule): 40 bytes + 8 per message + 3 priming + "user"
    assert (est.tokens_in, est.tokens_out, est.provenance) == (40 + 8 + 3 + 4, 9, "estimated")


def test_row_provenance_counted_when_a_request_was_counted() -> None:
    def fn(messages, params):
        return hb.Result(text="Paris", usage=usage_of(messages, "Paris", "gpt-4o"), model="gpt-4o")

    arm = hb.Arm("a", lambda item, ctx: ctx.call(item).text)
    bench = hb.benchmark(
        arm, hb.Reference({"q": "x"}, labels="Paris"), runs=5, client=hb.MockClient(fn, model="gpt-4o")
    )
    assert bench.rows[0].usd_provenance == "counted"
    assert bench.rows[0].usd is not None and bench.rows[0].usd > 0


def test_shipped_encodings_match_tiktokens_own_definitions(monkeypatch) -> None:
    import pytest
    import tiktoken_ext.openai_public as openai_public

    from hrbench.models import _tokens as tokens

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})  # no download
    for name in ("cl100k_base", "o200k_base"):
        ref = getattr(openai_public, name)()
        sha256, pat_str, special = tokens._ENCODINGS[name]
        assert (pat_str, special) == (ref["pat_str"], ref["special_tokens"]), name
    with pytest.raises(KeyError):
        tokens._encoding("p50k_base")  # only the shipped ones


def test_counting_sets_no_environment_variable(tmp_path) -> None:
    # counting sets no TIKTOKEN_CACHE_DIR in the daemon's environment: it would make paths look secret
    code = (
        "import os; from hrbench.models._tokens import count_tokens;"
        "n = count_tokens('hello world', 'gpt-4o'), count_tokens('hello world', 'gpt-4');"
        "print(n, sorted(k for k in os.environ if 'TIKTOKEN' in k))"
    )
    env = {"PATH": "", "HRBENCH_HOME": str(tmp_path), "HTTPS_PROXY": "http://127.0.0.1:9"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=slow(60)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(")")[1].strip() == "[]"
    assert list(tmp_path.iterdir()) == []  # nothing written to the state folder
