"""The page shell: data embedded in a saved page cannot end its script, assets are inline."""

from __future__ import annotations

import re

import msgspec
import pytest

from hrbench_client.view import ASSETS, asset, page_html

NASTY = ["</script><script>alert(1)</script>", "<!--", "]]>", "\u2028\u2029", "a & b < c > d", "é\x00"]


@pytest.mark.parametrize("text", NASTY)
def test_embedded_data_survives_and_never_closes_the_script(text: str) -> None:
    page = page_html({"static": True, "data": {"item": text, "nested": [{"k": text}]}}, inline=True)
    config = re.search(r"<script>window\.HRB = (.*?);</script>", page)
    assert config is not None
    assert "</script" not in config.group(1).lower() and "<!--" not in config.group(1)
    assert msgspec.json.decode(config.group(1)) == {
        "static": True,
        "data": {"item": text, "nested": [{"k": text}]},
    }


def test_inline_page_holds_every_asset_and_links_none() -> None:
    page = page_html({}, inline=True)
    assert not re.search(r'<(?:script|link)[^>]+(?:src|href)="(?!data:)', page)
    for name in ASSETS:
        body = asset(name).decode()
        assert body.replace("</script", "<\\/script")[:2000] in page
    with pytest.raises(KeyError):
        asset("../__init__.py")
