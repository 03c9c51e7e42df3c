"""Ports for tests: a free one, asked of the kernel, never a fixed number (a developer's own
server on 8000 must not fail a test; tests/test_layout.py forbids literal ports)."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on at `host` now (the kernel's pick for port 0)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
