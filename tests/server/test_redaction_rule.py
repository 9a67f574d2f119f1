"""Which environment variables are secrets: keys are masked in errors, folders (tiktoken's) are not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import hrbench_client as hc
from hrbench._util.redact import is_secret_name, secret_values
from hrbench.testing import LoopbackServer
from tests.server._daemon import Daemon, spec

KEY = "hrbk-0123456789abcdefXYZ"


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "HF_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "PGPASSWORD",
        "APIKEY",
        "MY_SECRET",
        "GOOGLE_CREDENTIALS",
        "api_key",
    ],
)
def test_credential_names_are_secrets(name: str) -> None:
    assert is_secret_name(name)
    assert secret_values({name: KEY}) == [KEY]


@pytest.mark.parametrize(
    "name",
    [
        "TIKTOKEN_CACHE_DIR",
        "TIKTOKEN_ENCODINGS_BASE",
        "SSH_KEY_PATH",
        "GOOGLE_APPLICATION_CREDENTIALS_FILE",
        "HF_TOKEN_PATH",
        "KEYBOARD_LAYOUT",
        "TOKENIZERS_PARALLELISM",
        "OPENAI_KEY_ENV",
        "HRBENCH_HOME",
        "PATH",
        "SECRETS_DIR",
    ],
)
def test_names_of_places_and_settings_are_not(name: str) -> None:
    assert not is_secret_name(name)
    assert secret_values({name: "/tmp/some/long/path"}) == []


def _tiktoken_bench(c: hc.Client, base_url: str, key_env: str) -> None:
    client = {
        "kind": "openai",
        "model": "gpt-4o-mini",
        "base_url": base_url,
        "api_key_env": key_env,
        "max_attempts": 1,
    }
    rows = list(c.benchmark(spec(n=2, runs=5, client=client)))
    assert len(rows) == 10 and all(r.failure_kind != "error" for r in rows)


@pytest.mark.parametrize(
    "extra",
    [{}, {"TIKTOKEN_CACHE_DIR": "HOME/tiktoken"}, {"XDG_CACHE_HOME": "HOME"}],
    ids=["none", "tiktoken", "xdg"],
)
def test_a_path_error_after_a_tiktoken_benchmark_shows_the_full_path(
    home: Path, extra: dict[str, str]
) -> None:
    env = {k: v.replace("HOME", str(home)) for k, v in extra.items()}
    with LoopbackServer() as srv:
        srv.set(omit_usage=True)  # tokens are counted with the model's own tokenizer
        d = Daemon(home, env={"SOME_KEY_VAR": KEY, **env}).start()
        try:
            with d.client() as c:
                _tiktoken_bench(c, srv.base_url, "SOME_KEY_VAR")
                missing = home / "tiktoken" / "no" / "such" / "file.jsonl"
                with pytest.raises(hc.ConfigError) as info:
                    c.references.put({"path": str(missing)}, "x")
                # the path as given (ConfigError shows a value's first 77 characters), nothing masked
                assert str(missing)[:70] in str(info.value) and "***" not in str(info.value)
        finally:
            d.stop()


KEYS = {
    "OPENAI_API_KEY": "hrbk-1bd0074c9fd82ff86b8",
    "GITHUB_TOKEN": "hrbk-d29e33c33d871a2c730",
    "DB_PASSWORD": "hrbk-90a80c5dd31cb995ef8",
    "MY_LLM": "hrbk-bf7c59ce8a16e2b9c95",
}
"""One key per variable, all in the module's one daemon's environment. No two share 8
characters in a row (the masked window), so a test's key is masked as its own variable's
value, never as a piece of another's."""


@pytest.fixture(scope="module")
def keyed_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon with every key of :data:`KEYS` (its tokenizer loaded once, by the first test)."""
    with Daemon(tmp_path_factory.mktemp("redaction") / "home", env=KEYS) as d:
        yield d


@pytest.mark.parametrize("key_env", list(KEYS))
def test_a_real_key_in_an_error_is_still_masked(keyed_daemon: Daemon, key_env: str) -> None:
    key = KEYS[key_env]
    with LoopbackServer() as srv:
        srv.set(omit_usage=True)
        with keyed_daemon.client() as c:
            _tiktoken_bench(c, srv.base_url, key_env)  # MY_LLM: a secret because the spec names it
            with pytest.raises(hc.ConfigError) as info:
                c.references.put({"path": f"/nonexistent/{key}/r.jsonl"}, "x")
            assert key not in str(info.value) and key[:8] not in str(info.value)
            assert "/nonexistent/***/r.jsonl" in str(info.value)
