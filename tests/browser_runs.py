"""Serving an app to a real browser in tests: uvicorn in a thread, and the URLs a page asked for."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

WAIT = 60  # seconds a server may take to start or stop on a loaded 2-core CI machine


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """`app` under uvicorn in a thread, on a free 127.0.0.1 port; yields its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
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
