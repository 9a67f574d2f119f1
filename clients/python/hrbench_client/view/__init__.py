"""``hrb view``: a local web view of stored benchmarks, and ``hrb report --html``.

The view is another thin client of the daemon: every number it shows comes from the daemon's
read methods (``benchmark/list``, ``benchmark/view``, ``benchmark/matrix``, ``benchmark/cell``,
``benchmark/compare``) through :class:`hrbench_client.client.Client`; it never opens the SQLite
file. The pages are rendered in the browser by ``static/app.js`` with Chart.js 4.6.1 (vendored
in ``static/``, see ``static/VENDORED.md``): nothing is fetched from the network.

:func:`page_html` builds the HTML shell both the server (:mod:`hrbench_client.view.server`,
which needs the ``view`` extra: Starlette and uvicorn) and :func:`benchmark_html` use;
:func:`benchmark_html` inlines the assets and the data of one benchmark page into one file.
"""

from __future__ import annotations

import html
from importlib import resources
from typing import Any

import msgspec

__all__ = ["ASSETS", "asset", "benchmark_html", "page_html"]

ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "chart.umd.min.js": "text/javascript; charset=utf-8",
}
"""The files served under ``/static/``, with their media types."""


def asset(name: str) -> bytes:
    """The bytes of a shipped asset (``KeyError`` for a name not in :data:`ASSETS`)."""
    if name not in ASSETS:
        raise KeyError(name)
    return resources.files(__package__).joinpath("static", name).read_bytes()


def _script_json(obj: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = msgspec.json.encode(obj).decode()  # NaN and infinities become null
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_html(config: dict[str, Any], *, inline: bool = False, title: str = "hrb view") -> str:
    """The HTML shell of every page: ``window.HRB = config``, then ``app.js`` renders ``#app``.

    Args:
        config: what the page script reads (``{"static": True, "data": ...}`` for a saved
            page; ``{}`` for the server, where the script reads the path and fetches JSON).
        inline: put the stylesheet and scripts in the page (a self-contained file) instead of
            linking ``/static/...``.
        title: the document title until the script sets its own.

    Returns:
        The HTML text.

    Example:
        >>> text = page_html({})
        >>> '<script src="/static/app.js"></script>' in text, "window.HRB = {}" in text
        (True, True)
    """
    if inline:
        css = f"<style>\n{asset('app.css').decode()}\n</style>"
        scripts = "".join(
            "<script>\n" + asset(n).decode().replace("</script", "<\\/script") + "\n</script>\n"
            for n in ("chart.umd.min.js", "app.js")
        )
    else:
        css = '<link rel="stylesheet" href="/static/app.css">'
        scripts = '<script src="/static/chart.umd.min.js"></script>\n<script src="/static/app.js"></script>\n'
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n<link rel="icon" href="data:,">\n'
        f"<title>{html.escape(title)}</title>\n{css}\n</head>\n<body>\n"
        '<div id="app"><p style="padding:1em">Loading…</p></div>\n'
        f"<script>window.HRB = {_script_json(config)};</script>\n{scripts}</body>\n</html>\n"
    )


def benchmark_html(client: Any, benchmark_id: str, **settings: Any) -> str:
    """One benchmark's page as a self-contained HTML file (``hrb report ID --html FILE``).

    The arm table, the paired differences against every arm (the page's selector switches
    between them), the accuracy-cost chart and the item x arm matrix with its filters, with the
    scripts, stylesheet and data inline: it opens with no server and no network. A cell shows
    the ``hrb rows`` command that prints its runs instead of linking to them.

    Args:
        client: a connected :class:`hrbench_client.client.Client`.
        benchmark_id: the benchmark.
        **settings: ``level`` and ``method`` for the intervals.

    Returns:
        The HTML text.

    Raises:
        NotFound: no benchmark has that id (from the daemon).
    """
    first = client.view(benchmark_id, **settings)
    views = {first.against: first}
    for arm in first.arms:
        if arm.arm not in views:
            views[arm.arm] = client.view(benchmark_id, arm.arm, **settings)
    matrix = client.matrix(benchmark_id)
    data = {
        "id": benchmark_id,
        "against": first.against,
        "views": {k: msgspec.to_builtins(v) for k, v in views.items() if k is not None},
        "matrix": msgspec.to_builtins(matrix),
    }
    if first.against is None:  # no rows yet
        data["views"] = {"": msgspec.to_builtins(first)}
        data["against"] = ""
    title = f"{first.benchmark.name or benchmark_id} · hrbench"
    return page_html({"static": True, "data": data}, inline=True, title=title)
