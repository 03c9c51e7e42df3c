"""The GraphiQL page and its vendored assets, served by the app itself: no CDN, works offline."""

from __future__ import annotations

import os
from pathlib import Path

from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

ASSETS_DIR = Path(__file__).with_name("graphiql_assets")
ASSETS_PATH = "/graphql/static"

# Relative to /graphql, so the page also works under a proxy's root path.
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>core-audit GraphiQL</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="graphql/static/graphiql.min.css">
<link rel="stylesheet" href="graphql/static/graphiql-page.css">
</head>
<body>
{console_link}<div id="graphiql">Loading GraphiQL…</div>
<noscript>GraphiQL needs JavaScript; POST queries to this URL instead.</noscript>
<script src="graphql/static/react.production.min.js"></script>
<script src="graphql/static/react-dom.production.min.js"></script>
<script src="graphql/static/graphiql.min.js"></script>
<script src="graphql/static/graphiql-boot.js"></script>
</body>
</html>
"""

# Only this app's own scripts, styles and API; fonts and icons come as data: URLs in the CSS.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
    "font-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'none'",
    "frame-ancestors 'none'",
])

CONTENT_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


# Relative as the assets are: "./" from /graphql is the console's overview, under any root path.
CONSOLE_LINK = ('<nav class="console-link" aria-label="core-audit"><a href="./">← core-audit '
                'console</a> · GraphQL</nav>\n')


def graphiql_page(*, console: bool = False) -> Response:
    """GraphiQL; with the console served beside it, a link back to the console first."""
    page = PAGE.replace("{console_link}", CONSOLE_LINK if console else "")
    return HTMLResponse(page, headers={"content-security-policy": CONTENT_SECURITY_POLICY,
                                       "cache-control": "no-cache"})


class GraphiQLAssets(StaticFiles):
    """The vendored files, typed by suffix (not by the host's mime table) and revalidated."""

    def file_response(self, full_path: str | os.PathLike[str], stat_result: os.stat_result,
                      scope: Scope, status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        content_type = CONTENT_TYPES.get(Path(full_path).suffix)
        if content_type and response.status_code == 200:
            response.headers["content-type"] = content_type
        # Names carry no version: a browser asks again (a 304 by ETag) after an upgrade.
        response.headers["cache-control"] = "no-cache"
        return response


def graphiql_assets() -> Mount:
    return Mount(ASSETS_PATH, app=GraphiQLAssets(directory=ASSETS_DIR), name="graphiql-assets")
