"""GraphiQL offline: our page, its vendored assets from the app itself, their licences."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore

ASSETS = Path(__file__).resolve().parents[2] / "store" / "api" / "graphiql_assets"
HTML = {"accept": "text/html"}
JS = "text/javascript; charset=utf-8"
CSS = "text/css; charset=utf-8"
# What the page loads, in order, relative to its own URL.
PAGE_ASSETS = [
    ("graphql/static/graphiql.min.css", CSS),
    ("graphql/static/graphiql-page.css", CSS),
    ("graphql/static/react.production.min.js", JS),
    ("graphql/static/react-dom.production.min.js", JS),
    ("graphql/static/graphiql.min.js", JS),
    ("graphql/static/graphiql-boot.js", JS),
]
VENDORED = {  # served file: (npm package, version) — pinned
    "react.production.min.js": ("react", "18.3.1"),
    "react-dom.production.min.js": ("react-dom", "18.3.1"),
    "graphiql.min.js": ("graphiql", "4.1.2"),
    "graphiql.min.css": ("graphiql", "4.1.2"),
}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")



@pytest.fixture
def backend_url(tmp_path: Path) -> str:
    """Only SQLite: the page and its assets never touch the store."""
    return f"sqlite:///{tmp_path / 'audit.db'}"


class _AssetLinks(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script" and found.get("src"):
            self.links.append(found["src"] or "")
        if tag == "link" and found.get("rel") == "stylesheet":
            self.links.append(found.get("href") or "")


def asset_links(page: str) -> list[str]:
    parser = _AssetLinks()
    parser.feed(page)
    return parser.links


@pytest.fixture
def prefixed_client(example_db: AuditStore) -> Iterator[TestClient]:
    """The app behind a proxy's root path: mounted under /audit."""
    app = Starlette(routes=[Mount("/audit", app=create_app(example_db,
                                                           close_db_on_shutdown=False))])
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        yield test_client


def test_the_page_loads_its_assets_from_the_app_and_nothing_else(client: TestClient) -> None:
    page = client.get("/graphql", headers=HTML)
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"] == CSP
    assert asset_links(page.text) == [path for path, _ in PAGE_ASSETS]
    assert "<script>" not in page.text and " style=" not in page.text  # nothing inline
    boot = client.get("/graphql/static/graphiql-boot.js").text
    for text in (page.text, boot):
        assert re.findall(r"https?:|//[\w.-]+\.\w", text) == []
    for path, content_type in PAGE_ASSETS:
        response = client.get(f"/{path}")
        assert response.status_code == 200, path
        assert response.headers["content-type"] == content_type
        assert response.headers["cache-control"] == "no-cache"
        again = client.get(f"/{path}", headers={"if-none-match": response.headers["etag"]})
        assert again.status_code == 304 and again.content == b""


def test_the_vendored_files_are_served_as_packed(client: TestClient) -> None:
    for name in VENDORED:
        assert client.get(f"/graphql/static/{name}").content == (ASSETS / name).read_bytes()


def test_the_page_works_under_a_root_path(prefixed_client: TestClient) -> None:
    page = prefixed_client.get("/audit/graphql", headers=HTML)
    assert page.status_code == 200
    for link in asset_links(page.text):
        url = urljoin("http://127.0.0.1/audit/graphql", link)
        assert url.startswith("http://127.0.0.1/audit/graphql/static/")
        assert prefixed_client.get(url).status_code == 200, url
    body = prefixed_client.post("/audit/graphql", json={"query": "{ ledger { treeSize } }"})
    assert "treeSize" in body.json()["data"]["ledger"]


def test_no_graphiql_serves_neither_page_nor_assets(example_db: AuditStore) -> None:
    app = create_app(example_db, graphiql=False, close_db_on_shutdown=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/graphql", headers=HTML).status_code == 404
        for path, _ in PAGE_ASSETS:
            assert client.get(f"/{path}").status_code == 404, path


def test_a_missing_asset_is_a_404(client: TestClient) -> None:
    assert client.get("/graphql/static/nope.js").status_code == 404
    assert client.get("/graphql/static/../app.py").status_code == 404


def _manifest() -> dict[str, tuple[str, str, str, str]]:
    """The table in graphiql_assets/README.md: file -> (package, version, licence, sha256)."""
    readme = (ASSETS / "README.md").read_text(encoding="utf-8")
    table = readme.split("<!-- manifest -->", 1)[1].split("<!-- /manifest -->", 1)[0]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        file, package, version, _, licence, digest = (
            cell.strip().strip("`") for cell in line.strip("|").split("|"))
        rows[file] = (package, version, licence.split("`")[1], digest)
    return rows


def test_each_vendored_file_is_pinned_hashed_and_licensed() -> None:
    manifest = _manifest()
    assert {file: row[:2] for file, row in manifest.items()} == VENDORED
    for file, (package, _, licence, digest) in manifest.items():
        assert hashlib.sha256((ASSETS / file).read_bytes()).hexdigest() == digest, file
        assert licence == f"licenses/{package}.LICENSE"
        text = (ASSETS / licence).read_text(encoding="utf-8")
        assert text.startswith("MIT License") and "Permission is hereby granted" in text
    bundled = (ASSETS / "licenses" / "graphiql-bundled.LICENSES").read_text(encoding="utf-8")
    for package in ("graphql", "codemirror", "@graphiql/react", "markdown-it"):
        assert re.search(rf"^{re.escape(package)} \d+\.\d+\.\d+ \(", bundled, flags=re.M), package


def test_no_asset_names_a_cdn() -> None:
    # The same pattern the project's before-stop check greps store/ for.
    for path in sorted(ASSETS.rglob("*")):
        if path.is_file():
            assert re.search(rb"unpkg\.com|cdn\.jsdelivr|cdnjs\.", path.read_bytes()) is None, path
