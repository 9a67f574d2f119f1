"""Budget limits and prices that are not numbers, through `hrb` and a real daemon.

NaN, infinite and negative limits are refused with exit 2 naming the field and the value:
``--max-*`` flags, ``HRBENCH_MAX_*`` at ``hrb daemon start`` and from the caller's shell;
so is a price table (``HRBENCH_PRICES``) with a negative or NaN price.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._slow import slow
from tests.clients.test_cli import _stop_daemon  # noqa: F401 - the autouse fixture that stops each test's daemon

HRB = [sys.executable, "-m", "hrbench_client.cli"]

SPEC = (
    'runs = 2\n[reference]\nitems = {q1 = "France", q2 = "Peru"}\nlabels = {q1 = "Paris", q2 = "Lima"}\n'
    '[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {q1 = "Paris", q2 = "Lima"}\n'
)


def hrb(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HRBENCH_MAX_", "HRBENCH_PRICES"))}
    return subprocess.run(
        [*HRB, *args], capture_output=True, text=True, timeout=slow(180), env={**clean, **(env or {})}
    )


@pytest.mark.parametrize("flag", ["--max-usd", "--max-calls", "--max-tokens"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1"])
def test_a_limit_flag_that_is_not_a_finite_number_is_refused(tmp_path: Path, flag: str, value: str) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    proc = hrb("bench", str(spec), f"{flag}={value}")
    assert proc.returncode == 2, proc.stderr
    assert flag in proc.stderr and repr(value) in proc.stderr
    # the refusal says what was wrong with this value (a negative one is not "NaN or infinity")
    assert ("not NaN or infinity" in proc.stderr) is (value != "-1")
    assert ">= 0" in proc.stderr and "usage:" not in proc.stderr  # a value refused: no 15-line usage


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HRBENCH_MAX_USD", "nan"),
        ("HRBENCH_MAX_USD", "inf"),
        ("HRBENCH_MAX_USD", "-1"),
        ("HRBENCH_MAX_CALLS", "nan"),
        ("HRBENCH_MAX_TOKENS", "inf"),
    ],
)
def test_a_limit_variable_that_is_not_a_finite_number_is_refused_at_start_and_from_the_shell(
    tmp_path: Path, name: str, value: str
) -> None:
    said = f"{name}: "
    proc = hrb("daemon", "start", env={name: value})
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr and repr(value) in proc.stderr, proc.stderr
    assert hrb("daemon", "status").returncode == 1  # nothing left running
    assert hrb("daemon", "start").returncode == 0
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    sent = hrb("bench", str(spec), env={name: value})  # the shell's value, sent with the request
    assert sent.returncode == 2, sent.stderr
    assert said in sent.stderr and repr(value) in sent.stderr, sent.stderr
    assert hrb("ls").stdout.strip() == ""  # nothing ran


@pytest.mark.parametrize("value", ["nan", "inf", "-1.0"])
def test_a_spec_limit_that_is_not_a_finite_number_is_refused(tmp_path: Path, value: str) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC + f"[governor]\nmax_usd = {value}\n")
    proc = hrb("bench", str(spec))
    assert proc.returncode == 2, proc.stderr
    assert "governor.max_usd" in proc.stderr, proc.stderr


@pytest.mark.parametrize(("price", "shown"), [("-0.0004", "-0.0004"), ("NaN", "nan"), ("Infinity", "inf")])
def test_a_price_table_with_a_negative_or_nan_price_is_refused_at_daemon_start(
    tmp_path: Path, price: str, shown: str
) -> None:
    table = tmp_path / "negprices.json"
    table.write_text('{"models": {"gpt-4o-mini": {"input": 0.15, "output": ' + price + "}}}")
    proc = hrb("daemon", "start", env={"HRBENCH_PRICES": str(table)})
    assert proc.returncode == 2, proc.stderr
    assert f"HRBENCH_PRICES={table}: prices.gpt-4o-mini.output:" in proc.stderr, proc.stderr
    assert f"(got {shown})" in proc.stderr, proc.stderr
    assert hrb("daemon", "status").returncode == 1  # nothing left running


@pytest.mark.parametrize("value", ["-0.5", "nan", "inf"])
def test_a_spec_price_that_is_not_a_finite_number_is_refused(tmp_path: Path, value: str) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(
        SPEC.replace(
            "[[arms]]",
            f'[client]\nkind = "openai"\nmodel = "m"\nprice = {{input = {value}, output = 1.0}}\n[[arms]]',
        )
    )
    proc = hrb("bench", str(spec))
    assert proc.returncode == 2, proc.stderr
    assert "client.price.input" in proc.stderr, proc.stderr


def test_a_billed_as_model_with_no_price_is_priced_from_the_spec_as_the_error_advises(tmp_path: Path) -> None:
    """The advice for a ``billed_as`` model with no price is a ``prices`` table for it (``price`` prices only the client's model)."""
    import re

    from hrbench.testing import LoopbackServer

    with LoopbackServer() as srv:
        srv.set(serve_model="mystery-model-v9", reply_words=3)  # every reply billed as the routed model
        client = (
            f'[client]\nkind = "openai"\nmodel = "unkroute-honest2"\nbase_url = "{srv.base_url}"\n'
            'api_key_env = "MY_KEY"\nmax_tokens = 50\nbilled_as = ["mystery-model-v9"]\n'
            "price = {input = 0.01, output = 0.01}\n"
        )
        body = SPEC.replace(
            '[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {q1 = "Paris", q2 = "Lima"}\n', ""
        )
        arms = '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "Capital of {item}?"\n'
        spec = tmp_path / "unkroute2.toml"
        spec.write_text(body + client + arms + "[governor]\nmax_usd = 1.0\n")
        refused = hrb("bench", str(spec), env={"MY_KEY": "k"})
        assert refused.returncode == 2, refused.stderr
        assert "'mystery-model-v9' has no price" in refused.stderr
        (advice,) = re.findall(r'prices = \{"mystery-model-v9" = \{[^}]*\}\}', refused.stderr)
        assert srv.requests == []  # refused before the first call
        spec.write_text(
            body + client + advice.replace("USD_PER_M", "2.0") + "\n" + arms + "[governor]\nmax_usd = 1.0\n"
        )
        done = hrb("bench", str(spec), env={"MY_KEY": "k"})
        assert done.returncode == 0, done.stderr
        assert "reservation_exceeded" not in done.stderr
        (listed,) = [json.loads(line) for line in hrb("ls").stdout.splitlines() if line.strip()]
        assert listed["calls"] == len(srv.requests) == 4 and listed["status"] == "done"
        billed = sum(2.0 * (b.tokens_in + b.tokens_out) / 1e6 for b in srv.bills)  # at the spec's price
        assert listed["usd"] == pytest.approx(billed)
