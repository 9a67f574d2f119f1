"""A key is scrubbed in any echo: plain, base64, URL-encoded, spaced, ..."""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hrbench._util.redact import redact
from hrbench.testing._loopback_faults import ECHO_ENCODINGS, echo
from tests._examples import examples

KEYS = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.", min_size=12, max_size=64
)
AROUND = "Incorrect API key provided: {} -- check your settings."


def recoverable(out: str, key: str) -> list[str]:
    """The decodings of ``out`` in which the key can still be read."""
    raw = key.encode()
    found = []
    if key in out:
        found.append("plain")
    if key in urllib.parse.unquote_plus(out):
        found.append("url")
    if key in re.sub(r"\s+", "", out):
        found.append("spaced")
    if key in re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), out):
        found.append("json")
    for run in re.findall(r"[A-Za-z0-9+/_\-]{8,}", out):
        for shift in range(4):  # any start inside the run
            part = run[shift:]
            part = part[: len(part) - len(part) % 4]
            for alt in (part, part.replace("-", "+").replace("_", "/")):
                try:
                    if raw in base64.b64decode(alt, validate=False):
                        found.append("base64")
                except binascii.Error:
                    pass
        for shift in range(2):
            part = run[shift:]
            part = part[: len(part) - len(part) % 2]
            try:
                if raw in bytes.fromhex(part):
                    found.append("hex")
            except ValueError:
                pass
    return found


@pytest.mark.parametrize("encoding", ECHO_ENCODINGS)
def test_each_echo_of_the_key_is_scrubbed(encoding: str) -> None:
    key = "sk-proj-T3st/Key+0123456789=abcdefXYZ"
    out = redact(AROUND.format(echo(key, encoding)), key)
    assert "***" in out and recoverable(out, key) == [], out


@settings(max_examples=examples(150), deadline=None)
@given(KEYS, st.sampled_from(ECHO_ENCODINGS))
def test_no_echo_of_any_key_survives(key: str, encoding: str) -> None:
    out = redact(AROUND.format(echo(key, encoding)), key)
    assert recoverable(out, key) == [], out


@settings(max_examples=examples(150), deadline=None)
@given(KEYS, st.binary(max_size=7), st.binary(max_size=7), st.booleans())
def test_a_key_inside_a_longer_base64_blob_is_scrubbed_at_every_alignment(
    key: str, before: bytes, after: bytes, urlsafe: bool
) -> None:
    enc = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = enc(before + key.encode() + after).decode()
    out = redact(f"token={blob}", key)
    assert recoverable(out, key) == [], out


@settings(max_examples=examples(100), deadline=None)
@given(KEYS)
def test_text_without_the_key_is_left_alone(key: str) -> None:
    text = "HTTP 401: the request was not authorised; retry later (request id 42)."
    assume(not any(key[i : i + 8] in text for i in range(len(key) - 7)))
    assert redact(text, key) == text


def test_short_or_missing_secrets_only_mask_key_shapes() -> None:
    assert redact("a b c", "abc", None) == "a b c"
    assert redact("use Bearer abcdefghij please", None) == "use *** please"
