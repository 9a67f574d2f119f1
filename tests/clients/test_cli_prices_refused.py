"""Prices through `hrb` and a real daemon: a price table that lies is refused before the first request.

The daemon runs with a copy of the installed genai-prices package whose data file was edited
(``gpt-4o-mini`` at $0, at a negative price, at NaN), with ``HRBENCH_PRICES`` pricing a model at
0, or with a spec pricing it at 0: ``hrb bench`` exits 2 naming the model, the rate and the
value, and the loopback provider receives no request. A model declared free runs. A 250,000-token
prompt is billed in the rows at the long-context tier, as genai-prices bills it.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import genai_prices
import pytest
from genai_prices import Usage as GenaiUsage
from genai_prices import calc_price

from hrbench.testing import LoopbackServer
from tests.clients.test_cli import _stop_daemon  # noqa: F401 - the autouse fixture that stops each test's daemon
from tests.clients.test_cli_budget import hrb

TAMPER = """

# the test's tampering: gpt-4o-mini's input price replaced by TAMPERED_PRICE
for _provider in providers:
    if _provider.id == "openai":
        for _model in _provider.models:
            if _model.id == "gpt-4o-mini":
                _model.prices = ModelPrice(
                    input_mtok=Decimal(__import__("os").environ["TAMPERED_PRICE"]), output_mtok=Decimal("0.6")
                )
"""


@pytest.fixture(scope="module")
def tampered_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a copy of genai-prices whose data file prices gpt-4o-mini as ``TAMPERED_PRICE`` says."""
    site = tmp_path_factory.mktemp("tampered-site")
    copy = site / "genai_prices"
    shutil.copytree(Path(genai_prices.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "data.py").open("a", encoding="utf-8") as f:
        f.write(TAMPER)
    return site


@pytest.fixture
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def _spec(
    tmp_path: Path, srv: LoopbackServer, client: str = "", tail: str = "", model: str = "gpt-4o-mini"
) -> str:
    spec = tmp_path / "s.toml"
    spec.write_text(
        textwrap.dedent(f"""\
        runs = 2
        [reference]
        items = {{q1 = "France", q2 = "Peru"}}
        labels = {{q1 = "Paris", q2 = "Lima"}}
        [client]
        kind = "openai"
        model = "{model}"
        base_url = "{srv.base_url}"
        api_key_env = false
        max_tokens = 20
        """)
        + client
        + '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "Capital of {item}?"\n'
        + tail
    )
    return str(spec)


@pytest.mark.parametrize(("price", "shown"), [("0", "0.0"), ("-0.15", "-0.15"), ("NaN", "nan")])
def test_a_tampered_package_price_is_refused_by_hrb_bench_before_the_first_request(
    tmp_path: Path, srv: LoopbackServer, tampered_site: Path, price: str, shown: str
) -> None:
    env = {"PYTHONPATH": str(tampered_site), "TAMPERED_PRICE": price}
    proc = hrb("bench", _spec(tmp_path, srv, tail="[governor]\nmax_usd = 0.01\n"), env=env)
    assert proc.returncode == 2, proc.stderr
    assert "prices.gpt-4o-mini.input: " in proc.stderr and f"(got {shown})" in proc.stderr, proc.stderr
    assert "genai-prices" in proc.stderr, proc.stderr
    assert srv.requests == []  # refused before the first request
    assert hrb("ls", env=env).stdout.strip() == ""  # nothing stored
    prices = hrb("prices", "gpt-4o-mini", env=env)
    assert prices.returncode == 2 and "prices.gpt-4o-mini.input: " in prices.stderr, prices.stderr


def test_a_price_of_0_in_hrbench_prices_is_refused_by_hrb_bench(tmp_path: Path, srv: LoopbackServer) -> None:
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"models": {"gpt-4o-mini": {"input": 0, "output": 0}}}))
    proc = hrb("bench", _spec(tmp_path, srv), env={"HRBENCH_PRICES": str(table)})
    assert proc.returncode == 2, proc.stderr
    assert f"HRBENCH_PRICES={table}: prices.gpt-4o-mini.input: a rate of 0 in HRBENCH_PRICES" in proc.stderr
    assert srv.requests == []


def test_a_spec_price_of_0_is_refused_unless_the_model_is_declared_free(
    tmp_path: Path, srv: LoopbackServer
) -> None:
    zero = _spec(tmp_path, srv, client="price = {input = 0.0, output = 0.0}\n")
    proc = hrb("bench", zero)
    assert proc.returncode == 2, proc.stderr
    assert "client.price.input: a rate of 0 in an override" in proc.stderr, proc.stderr
    assert 'price = "free"' in proc.stderr, proc.stderr  # the error says how to declare it free
    assert srv.requests == []
    free = _spec(tmp_path, srv, client='price = "free"\n', tail="[governor]\nmax_usd = 0.000001\n")
    proc = hrb("bench", free)
    assert proc.returncode == 0, proc.stderr
    rows = [r for r in map(json.loads, proc.stdout.splitlines()) if "usd" in r and "arm" in r]
    assert len(rows) == 4 and {r["usd"] for r in rows} == {0.0}
    assert len(srv.requests) == 4


def test_a_long_prompt_is_billed_in_the_rows_at_the_long_context_tier(
    tmp_path: Path, srv: LoopbackServer
) -> None:
    srv.set(prompt_tokens="bytes", reply_words=1000)
    long = "a " * 125_000
    spec = tmp_path / "long.toml"
    spec.write_text(
        "runs = 1\n[reference]\n"
        + f'items = {{q1 = "{long}1", q2 = "{long}2"}}\n'
        + f'[client]\nkind = "anthropic"\nmodel = "claude-sonnet-4-5"\nbase_url = "{srv.base_url}"\n'
        + "api_key_env = false\nmax_tokens = 1000\n"
        + '[[arms]]\nkind = "prompt"\nname = "ask"\ntemplate = "{item}"\n[governor]\nmax_usd = 10.0\n'
    )
    proc = hrb("bench", str(spec))
    assert proc.returncode == 0, proc.stderr
    out: list[dict[str, Any]] = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    rows, result = out[:-1], out[-1]
    assert len(rows) == 2 and len(srv.bills) == 2
    for row in rows:
        assert row["tokens_in"] > 250_000 and row["tokens_out"] == 1000
        want = calc_price(
            GenaiUsage(input_tokens=row["tokens_in"], output_tokens=row["tokens_out"]),
            "claude-sonnet-4-5",
            provider_id="anthropic",
        ).total_price
        assert row["usd"] == pytest.approx(float(want), rel=1e-12)  # 1.52 USD; the base rates said 0.77
    stored = [json.loads(line) for line in hrb("rows", result["id"]).stdout.splitlines() if line.strip()]
    assert sorted(r["usd"] for r in stored) == pytest.approx(sorted(r["usd"] for r in rows), rel=1e-12)


def test_hrb_prices_shows_the_tiers() -> None:
    proc = hrb("prices", "claude-sonnet-4-5", "gemini-2.5-pro")
    assert proc.returncode == 0, proc.stderr
    claude, gemini = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert claude["tiers"] == [
        {
            "above": 200000,
            "input": 6.0,
            "cached_input": 0.6,
            "output": 22.5,
            "cache_write_5m": 7.5,
            "cache_write_1h": 12.0,
        }
    ]
    assert [(t["above"], t["input"], t["output"]) for t in gemini["tiers"]] == [(200000, 2.5, 15.0)]
    text = hrb("prices", "claude-sonnet-4-5", "--text").stdout
    assert (
        "  above 200,000 prompt tokens: input 6, cache read 0.6, cache write 7.5 (5 min) / 12 (1 h), output 22.5"
        in text
    )
