"""`hrb prices MODEL`: the daemon's price of a model, with its source and date (no network)."""

from __future__ import annotations

import pytest

from tests.clients.test_cli import _stop_daemon, hrb, lines  # noqa: F401


@pytest.mark.usefixtures("shared_home")  # reads the daemon's price table only
def test_hrb_prices_shows_the_price_its_source_and_date() -> None:
    proc = hrb("prices", "claude-sonnet-4-5", "mock")
    claude, mock = lines(proc.stdout)
    assert (claude["input"], claude["cached_input"], claude["output"]) == (3.0, 0.3, 15.0)
    assert (claude["cache_write_5m"], claude["cache_write_1h"], claude["provider"]) == (
        3.75,
        6.0,
        "anthropic",
    )
    assert claude["source"].startswith("genai-prices ") and "anthropic.com" in claude["source"]
    assert "tier" in claude["note"] and [t["above"] for t in claude["tiers"]] == [200000]
    assert mock["source"].startswith("hrbench's shipped table") and mock["date"] == "2025-08-01"
    text = hrb("prices", "gpt-4o-mini", "--text").stdout
    assert text.startswith("gpt-4o-mini: input 0.15, cache read 0.075, cache write 0.15 (5 min)")


@pytest.mark.usefixtures("shared_home")  # reads the daemon's price table only
def test_a_model_with_no_price_is_named_and_exit_2() -> None:
    proc = hrb("prices", "gpt-4o", "my-local-model", check_rc=2)
    assert [r["model"] for r in lines(proc.stdout)] == ["gpt-4o"]
    assert "no price for 'my-local-model'" in proc.stderr and "[client.price]" in proc.stderr


@pytest.mark.usefixtures("shared_home")  # reads the daemon's price table only
def test_a_misspelt_model_has_no_price_and_the_name_it_may_mean_is_said() -> None:
    proc = hrb("prices", "gpt-4o-mni", "gpt-4o-miniature", "gpt-4o-2024-08-06", "my-local-model", check_rc=2)
    assert [(r["model"], r["priced_as"]) for r in lines(proc.stdout)] == [("gpt-4o-2024-08-06", "gpt-4o")]
    said = proc.stderr.splitlines()
    assert "no price for 'gpt-4o-mni' in the daemon's table (did you mean gpt-4o-mini?)" in said[0]
    assert "no price for 'gpt-4o-miniature' in the daemon's table (did you mean gpt-4o-mini?)" in said[1]
    assert "no price for 'my-local-model' in the daemon's table:" in said[2]  # nothing close: no guess
