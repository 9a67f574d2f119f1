"""Keep API keys out of every message, trace, log and stored error, in any echo of them.

A server that rejects a key often quotes it back: plainly, masked in part, base64-encoded (a
Basic ``Authorization`` header, a token blob), URL-encoded (a query string), or spaced out
(one character at a time). :func:`redact` removes a known secret in each of those forms and
any piece of 8 or more of its characters, then masks whatever is shaped like a key
(``sk-...``, ``Bearer ...``). The daemon's last line of defence
(``hrbench_server.errors.scrub``) applies it with the values of the secret-looking
environment variables.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from functools import lru_cache

__all__ = ["is_secret_name", "note_key_env", "redact", "scrub_reply", "secret_values"]

_CREDENTIAL = re.compile(
    r"(?:KEY|TOKEN|SECRET|CREDENTIALS?|PASSWORD|PASSWD|PASSPHRASE)S?(?:_|$)|PASSWORD|PASSWD"
)
"""A part of a name that says it holds a credential: ``..._API_KEY``, ``GITHUB_TOKEN``, ``APIKEY``."""

_NOT_CREDENTIAL = re.compile(
    r"(?:_|^)(?:DIR|DIRS|PATH|PATHS|FILE|FILES|HOME|URL|SOCK|SOCKET|ENV|NAME)$|^TIKTOKEN_"
)
"""Names that hold where a credential is, or a setting, not a credential (``TIKTOKEN_CACHE_DIR``)."""

_KEY_ENVS: set[str] = set()
"""Variables that a client was told holds its key (``api_key_env``), whatever their names."""


def note_key_env(name: str | None) -> None:
    """Record that ``name`` holds an API key (a client's ``api_key_env``): its value is a secret.

    Example:
        >>> note_key_env("MY_LLM"); is_secret_name("MY_LLM")
        True
    """
    if name:
        _KEY_ENVS.add(name)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable named ``name`` holds a secret, to be masked in messages.

    Rule (``TIKTOKEN_CACHE_DIR``, a folder, is no secret, so paths under it are never masked
    as ``***`` in error messages): a secret is a variable a client names as its key
    (:func:`note_key_env`) or one whose name looks like a credential (``*_API_KEY``,
    ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``, ``*_CREDENTIALS``), but not one that names where
    something is (``*_DIR``, ``*_PATH``, ``*_FILE``, ``*_HOME``, ``*_URL``, ``*_KEY_ENV``) nor
    tiktoken's settings (``TIKTOKEN_*``).

    Example:
        >>> [is_secret_name(n) for n in ("OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "APIKEY")]
        [True, True, True, True]
        >>> [is_secret_name(n) for n in ("TIKTOKEN_CACHE_DIR", "SSH_KEY_PATH", "KEYBOARD", "HOME")]
        [False, False, False, False]
    """
    if name in _KEY_ENVS:
        return True
    upper = name.upper()
    return _CREDENTIAL.search(upper) is not None and _NOT_CREDENTIAL.search(upper) is None


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """The values of the secret variables of ``environ`` (:func:`is_secret_name`), 8+ characters.

    Shorter values are left: masking every ``"1"`` or ``"true"`` would garble messages, and a
    real key is longer.

    Example:
        >>> secret_values({"X_API_KEY": "sk-0123456789", "TIKTOKEN_CACHE_DIR": "/tmp/state/tiktoken"})
        ['sk-0123456789']
    """
    return [v for k, v in environ.items() if len(v) >= 8 and is_secret_name(k)]


_KEYLIKE = re.compile(r"(?:sk|pk|rk)-[A-Za-z0-9_\-*]{6,}|(?i:bearer)\s+[A-Za-z0-9_\-.~+/=*]{6,}")
"""Tokens shaped like API keys (``sk-...``, ``sk-ant-...``, ``Bearer ...``), masked or not."""

_KEY_WINDOW = 8
"""Characters of a key that, found together in a message, are masked."""

_ENCODED_MIN = 8
"""Secrets shorter than this are removed only as written (an encoding of 3 characters is noise)."""

_SEP = r"(?:[\s\u200b\u200c\u200d\u2060\ufeff]|%20|%09|\+|\\[nt]|&nbsp;)*"
"""What may stand between the characters of a spaced-out key: white space, invisible
separators, and their URL or escaped spellings."""


def _char(c: str) -> str:
    """A regex for one character of a secret: itself, percent-encoded, or JSON/HTML-escaped."""
    forms = [re.escape(c)]
    data = c.encode()
    forms.append("".join(f"%{b:02x}" for b in data))
    if len(data) == 1:
        forms.append(f"\\\\u{ord(c):04x}")
        forms.append(f"&#{ord(c)};|&#x{ord(c):x};")
    return "(?:" + "|".join(forms) + ")"


def _base64_cores(secret: bytes) -> set[str]:
    """The base64 text of ``secret`` wherever it starts in a longer encoded blob.

    For each of the 3 alignments, the characters that depend only on the secret's bytes.
    """
    out: set[str] = set()
    n = len(secret)
    for offset in range(3):
        enc = base64.b64encode(b"\0" * offset + secret).decode()
        start = -(-8 * offset // 6)
        end = 8 * (offset + n) // 6
        core = enc[start:end]
        out.add(core)
        out.add(core.replace("+", "-").replace("/", "_"))  # the URL-safe alphabet
    return out


@lru_cache(maxsize=64)
def _pattern(secret: str) -> re.Pattern[str]:
    """One regex for every encoded or spaced-out form of ``secret``."""
    data = secret.encode()
    literal = {binascii.hexlify(data).decode()}
    literal |= _base64_cores(data)
    spaced = _SEP.join(_char(c) for c in secret)
    alts = sorted((re.escape(x) for x in literal if len(x) >= _ENCODED_MIN), key=len, reverse=True)
    return re.compile("|".join([*alts, spaced]), re.IGNORECASE)


def redact(text: str, *secrets: str | None) -> str:
    """Remove API keys from ``text``.

    Each secret is removed whole, in every echo form (a provider's error body may echo the key
    base64-encoded or spaced out, and it must not reach a trace): as
    written, base64 (standard or URL-safe alphabet, at any alignment inside a longer blob),
    hex, URL-encoded (any case of the hex digits), JSON- or HTML-escaped, and spaced out
    (white space, invisible separators or ``%20``/``+`` between its characters). Then any
    stretch of 8 or more of its characters (a server may echo part of a key), then every
    key-shaped token (``sk-...``, ``Bearer ...``).

    Args:
        text: a message that may quote a key (servers echo keys in 401 replies).
        secrets: exact secrets to remove (the key in use); ``None`` and secrets shorter than
            4 characters are skipped; encoded forms are looked for from 8 characters.

    Returns:
        ``text`` with every secret, encoding or piece of one and key-shaped token replaced by
        ``***``.

    Example:
        >>> redact("Incorrect API key provided: sk-abc123456789", None)
        'Incorrect API key provided: ***'
        >>> redact("bad key hrb_0123456789abc", "hrb_0123456789abcdef")
        'bad key ***'
        >>> key = "hrb_0123456789abcdefg"
        >>> redact("got " + base64.b64encode(key.encode()).decode(), key)
        'got ***'
        >>> redact("got h r b _ 0 1 2 3 4 5 6 7 8 9 a b c d e f g!", key)
        'got ***!'
    """
    for secret in secrets:
        if not secret or len(secret) < 4:
            continue
        text = text.replace(secret, "***")
        if len(secret) >= _ENCODED_MIN:
            text = _pattern(secret).sub("***", text)
        window = min(_KEY_WINDOW, len(secret))
        pieces = {secret[i : i + window] for i in range(len(secret) - window + 1)}
        if any(p in text for p in pieces):
            text = _mask_runs(text, secret, window)
    return _KEYLIKE.sub("***", text)


def scrub_reply(text: str, secret: str | None) -> str:
    """Remove the key in use from a model's reply, as written or encoded; leave the rest as it is.

    A provider or a model may echo the caller's key in a reply that succeeded ("your key is
    sk-..."); that text would reach the cache, recordings, traces and rows (README and SPEC
    section 4: keys never reach SQLite or traces). Unlike :func:`redact`,
    key-shaped tokens that are not this key are kept: they may be the answer.

    Args:
        text: the reply's text.
        secret: the key in use (``None`` or shorter than 4 characters: nothing to remove).

    Returns:
        ``text`` with the key and its base64, hex, URL-encoded, escaped and spaced-out forms
        replaced by ``***``.

    Example:
        >>> scrub_reply("your key is hrb_0123456789abcdefg; a token sk-example stays", "hrb_0123456789abcdefg")
        'your key is ***; a token sk-example stays'
    """
    if not secret or len(secret) < 4:
        return text
    text = text.replace(secret, "***")
    if len(secret) >= _ENCODED_MIN:
        text = _pattern(secret).sub("***", text)
    return text


def _mask_runs(text: str, secret: str, window: int) -> str:
    """Mask every stretch of ``text`` of ``window`` or more characters that occurs in ``secret``."""
    out: list[str] = []
    i = 0
    while i < len(text):
        j = i + window
        if j <= len(text) and text[i:j] in secret:
            while j < len(text) and text[i : j + 1] in secret:
                j += 1
            out.append("***")
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
