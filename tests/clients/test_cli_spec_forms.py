"""``hrb bench`` refuses a TOML spec's malformed field before the first request (exit 2).

``base_url = "${VAR}"`` (``hrb`` expands variables only in path fields) is refused, not
accepted to fail 200 runs after 5 attempts each (2:46, exit 3). The rule (hrbench._forms):
the client is built, and its fields checked, before the benchmark is stored or any request is
sent; the error names the field, the value and where variables are expanded. A loopback server
that the variable points at counts the requests: none may arrive.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hrbench.testing import LoopbackServer
from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401  (the fixture stops the daemon)


def _spec(tmp_path: Path, client: str) -> Path:
    spec = tmp_path / "forms.toml"
    spec.write_text(
        textwrap.dedent("""
        runs = 5
        [reference]
        items = {q1 = "France", q2 = "Peru"}
        labels = {q1 = "Paris", q2 = "Lima"}
        [[arms]]
        kind = "prompt"
        name = "ask"
        template = "Capital of {item}?"
        [client]
        kind = "openai"
        model = "loopback-1"
        max_attempts = 1
        """)
        + textwrap.dedent(client)
    )
    return spec


@pytest.mark.usefixtures("shared_home")  # refusals only: its store stays empty
def test_a_variable_in_base_url_is_refused_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LoopbackServer() as srv:
        monkeypatch.setenv("LLM_URL", srv.base_url)  # set in the shell, and still not expanded there
        proc = hrb("bench", str(_spec(tmp_path, 'base_url = "${LLM_URL}"\n')), check_rc=2)
        assert srv.requests == []
    assert proc.stderr.startswith("hrb: ConfigError: client.base_url: ${LLM_URL} is a variable reference")
    assert "only in the path fields of a TOML spec" in proc.stderr and "reference.path" in proc.stderr
    assert proc.stdout == ""
    assert lines(hrb("ls").stdout) == []  # nothing stored: there is nothing to resume


@pytest.mark.usefixtures("shared_home")  # refusals only: its store stays empty
@pytest.mark.parametrize(
    ("client", "field", "said"),
    [
        ('base_url = "localhost:8000/v1"\n', "client.base_url", "add http:// or https:// in front"),
        ('base_url = "ftp://127.0.0.1/v1"\n', "client.base_url", "not ftp://"),
        ('base_url = "http://127.0.0.1:8000/v1?x=1"\n', "client.base_url", "no query or fragment"),
        ('model = "${MODEL}"\nbase_url = "http://127.0.0.1:9/v1"\n', "client.model", "variable reference"),
    ],
)
def test_malformed_client_fields_exit_2_naming_the_field(
    tmp_path: Path, client: str, field: str, said: str
) -> None:
    spec = _spec(tmp_path, client).read_text()
    if client.startswith("model"):
        spec = spec.replace('model = "loopback-1"\n', "")
    path = tmp_path / "bad.toml"
    path.write_text(spec)
    err = hrb("bench", str(path), check_rc=2).stderr
    assert err.startswith(f"hrb: ConfigError: {field}: ") and said in err


def test_a_misspelt_field_is_refused_with_the_close_name(tmp_path: Path) -> None:
    err = hrb("bench", str(_spec(tmp_path, 'base_ur = "http://127.0.0.1:8000/v1"\n')), check_rc=2).stderr
    assert "unknown field `base_ur` - at `$.client` (did you mean `base_url`?)" in err


def test_api_key_env_false_in_toml_sends_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TOML has no null: ``api_key_env = false`` is how a spec for a local server sends no key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-be-sent")
    with LoopbackServer() as srv:
        spec = _spec(tmp_path, f'base_url = "{srv.base_url}"\napi_key_env = false\n')
        hrb("bench", str(spec), "--no-rows")
        assert srv.requests and all("authorization" not in r.headers for r in srv.requests)
        err = hrb(
            "bench", str(_spec(tmp_path, f'base_url = "{srv.base_url}"\napi_key_env = true\n')), check_rc=2
        ).stderr
    assert "client.api_key_env: true is not a variable name" in err and "or false to send no key" in err
