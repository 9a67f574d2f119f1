"""What `hrb` says of arguments it cannot take: the option meant, and a value out of range by its option.

Rules (docs/guides/shell.md): an unknown option gets the closest option of its command; the
advice on values starting with '-' comes only when such a value is there; a value the daemon
refuses names the option (or the spec file and field), the value given and the range.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clients.test_cli import _stop_daemon, hrb  # noqa: F401

DASH = "goes after `--`"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["report", "capitals", "--comapre", "ask", "fixed"],
            "unrecognized arguments: --comapre ask fixed (did you mean --compare?)",
        ),
        (["rows", "abc", "--limt", "3"], "(did you mean --limit?)"),
        (["gate", "a", "--baseline", "b", "--alhpa=0.1"], "(did you mean --alpha?)"),
        (["ref", "put", "r", "f.jsonl", "--fromat", "squad"], "(did you mean --format?)"),
    ],
)
def test_a_misspelt_option_gets_the_option_meant_and_no_dash_advice(args: list[str], said: str) -> None:
    err = hrb(*args, "--no-autostart", check_rc=2).stderr
    assert said in err and DASH not in err, err


def test_a_spec_field_given_as_an_option_says_where_it_goes_and_its_range(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text("runs = 5\n")
    err = hrb("bench", str(spec), "--runs", "0", "--no-autostart", check_rc=2).stderr
    assert (
        "runs is set in the spec, not by an option" in err
        and "runs = 0 is out of range: must be at least 1" in err
    )
    assert DASH not in err, err
    err = hrb("bench", str(spec), "--runs", "3", "--no-autostart", check_rc=2).stderr
    assert "runs is set in the spec" in err and "out of range" not in err


def test_the_dash_advice_comes_only_with_a_value_starting_with_dash() -> None:
    assert DASH in hrb("score", "-x", "--no-autostart", check_rc=2).stderr  # an output read as an option
    err = hrb("score", "--label", "-x", "out", "--no-autostart", check_rc=2).stderr
    assert "a value that starts with '-' is given with `=`: --label=-x" in err
    err = hrb("score", "--label", "--no-autostart", check_rc=2).stderr  # no value at all: nothing to advise
    assert "expected one argument" in err and "`=`" not in err and DASH not in err


@pytest.mark.usefixtures("shared_home")
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["gate", "a", "--baseline", "b", "--alpha", "2"], "hrb: invalid: --alpha 2: must be below 0.5"),
        (["gate", "a", "--baseline", "b", "--alpha=0"], "hrb: invalid: --alpha 0: must be above 0"),
        (["rows", "abcd", "--limit", "0"], "hrb: invalid: --limit 0: must be at least 1"),
    ],
)
def test_a_value_out_of_range_names_its_option_the_value_and_the_range(args: list[str], said: str) -> None:
    err = hrb(*args, check_rc=2).stderr
    assert said in err.splitlines(), err


def test_a_spec_field_out_of_range_names_the_file_the_field_the_value_and_the_range(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text("runs = 0\n")
    assert (
        f"hrb: invalid: {spec}: runs = 0: must be at least 1"
        in hrb("bench", str(spec), check_rc=2).stderr.splitlines()
    )
    spec.write_text("runs = 5\nconcurrency = 0\n")
    assert "spec.toml: concurrency = 0: must be at least 1" in hrb("bench", str(spec), check_rc=2).stderr


@pytest.mark.usefixtures("shared_home")  # puts no reference: refused before it is stored
def test_hrb_ref_put_of_a_squad_file_without_format_names_the_format(data: Path) -> None:
    path = data / "squad2-dev-500" / "squad2_dev_500.jsonl"
    err = hrb("ref", "put", "squad500", str(path), check_rc=2).stderr
    assert "are a squad file's: give its format (hrb ref put NAME FILE --format squad;" in err, err
