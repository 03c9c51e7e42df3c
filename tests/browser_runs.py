"""Serving an app to a real browser in tests: uvicorn in a thread, and the URLs a page asked for."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.types import Message, Receive, Scope, Send

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

WAIT = 60  # seconds a server or page may take on a loaded 2-core CI machine; not a measured limit


def skip_without_chromium() -> Any:
    """Skip the calling test module unless Debian's chromium and chromium-driver and selenium
    are installed; selenium.webdriver when they are."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("needs Debian's chromium and chromium-driver (.ci/run installs them)",
                    allow_module_level=True)
    return pytest.importorskip("selenium.webdriver")


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """`app` under uvicorn in a thread, on a free 127.0.0.1 port; yields its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    # A page left open keeps its /events stream: closed after a second, as `serve` does.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off",
                                           timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        while not server.started and thread.is_alive():
            time.sleep(0.05)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(WAIT)
        listener.close()


def requested_urls(browser: Any) -> list[str]:
    """Every URL the page asked for, from Chromium's network log."""
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium at 1400x900, offline but for 127.0.0.1, its console and
    network logged (the caller skips when selenium or Chromium is missing)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900",
        "--no-first-run", "--disable-extensions",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        # Offline: every name fails to resolve, except the test server's address.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # An explicit driver path: selenium-manager never looks for (or downloads) one.
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


class RewritingProxy:
    """Between the browser and an app, as a hostile network or server would be: `rewrite`
    changes each HTML page's body (its ETag dropped); `app` can be swapped, so that one web
    origin serves two stores."""

    def __init__(self, app: Any, rewrite: Callable[[bytes], bytes] | None = None) -> None:
        self.app = app
        self.rewrite: Callable[[bytes], bytes] = rewrite or (lambda body: body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message = {}
        chunks: list[bytes] = []

        async def keep(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            if dict(start["headers"]).get(b"content-type", b"").startswith(b"text/html"):
                body = self.rewrite(body)
            headers = [(k, v) for k, v in start["headers"]
                       if k.lower() not in (b"content-length", b"etag")]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, keep)
