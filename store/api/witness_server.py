"""A C2SP tlog-witness: `POST /add-checkpoint` cosigns a log's checkpoint once it is shown to
extend the tree the witness cosigned last (store.model.witness decides), and keeps that tree
per log origin in a state directory, crash-safe: the check and the update run under an
exclusive file lock, the new state is written to a temporary file, fsynced and renamed over
the old one before the cosignature is returned. `GET /<sha256 of the origin, hex>/checkpoint`
serves the newest checkpoint it cosigned for that log, with the log's signatures it verified
and its own cosignature (the spec's monitoring prefix; here the same as the submission one)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from store.errors import StoreError
from store.model.checkpoint import SignerKey, VerifierKey, parse_checkpoint
from store.model.cosignature import check_note, cosign, witness_lines
from store.model.witness import (
    MAX_REQUEST_BYTES,
    SIZE_CONTENT_TYPE,
    WitnessedHead,
    WitnessRefusal,
    decide,
    parse_request,
)

LOCK_FILE = ".lock"


class WitnessState:
    """What the witness cosigned last, per origin: DIR/<sha256(origin)>.json."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / LOCK_FILE).touch(exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{directory}: cannot use as the witness's state: "
                             f"{exc.strerror}") from exc

    def _path(self, origin: str) -> Path:
        return self.directory / (hashlib.sha256(origin.encode()).hexdigest() + ".json")

    @contextmanager
    def locked(self) -> Iterator[None]:
        with open(self.directory / LOCK_FILE, "rb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # other threads and processes wait here
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def held(self, origin: str) -> WitnessedHead | None:
        path = self._path(origin)
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:  # never cosign over state it cannot read
            raise StoreError(f"{path}: unreadable witness state: {exc}") from exc
        if stored.get("origin") != origin:
            raise StoreError(f"{path}: holds the state of {stored.get('origin')!r}")
        return WitnessedHead(int(stored["size"]), bytes.fromhex(stored["root"]))

    def cosigned_note(self, origin_hash: str) -> str | None:
        """The newest checkpoint cosigned for the log whose origin hashes to `origin_hash`
        (lowercase hex), with the log's verified signatures and the witness's cosignature;
        None if none (or a state kept before notes were)."""
        if len(origin_hash) != 64 or any(c not in "0123456789abcdef" for c in origin_hash):
            return None
        try:
            stored = json.loads((self.directory / f"{origin_hash}.json").read_text("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreError(f"{origin_hash}.json: unreadable witness state: {exc}") from exc
        note = stored.get("note")
        return note if isinstance(note, str) else None

    def keep(self, origin: str, head: WitnessedHead, timestamp: int, note: str = "") -> None:
        path = self._path(origin)
        temporary = path.with_name(path.name + ".tmp")
        data = json.dumps({"origin": origin, "size": head.size, "root": head.root.hex(),
                           "cosigned_at": timestamp, "note": note}, sort_keys=True).encode()
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself survives a crash
        finally:
            os.close(directory)


class Witness:
    def __init__(self, key: SignerKey, logs: Mapping[str, Sequence[VerifierKey]],
                 state: WitnessState, clock: Callable[[], float] = time.time) -> None:
        self.key = key
        self.logs = logs
        self.state = state
        self.clock = clock

    def add_checkpoint(self, body: bytes) -> str:
        """The cosignature line for the request's checkpoint; WitnessRefusal otherwise."""
        request = parse_request(body)
        with self.state.locked():
            # the origin is read again inside decide; held state is read under the lock
            origin = request.note.split("\n", 1)[0]
            checkpoint = decide(request, self.logs, self.state.held(origin)
                                if origin in self.logs else None)
            # tlog-witness: "the timestamp MUST NOT be zero"
            timestamp = max(1, int(self.clock()))
            line = cosign(checkpoint.body(), self.key, timestamp).line()
            self.state.keep(checkpoint.origin, WitnessedHead(checkpoint.size, checkpoint.root),
                            timestamp, self._monitored_note(request.note, line))
        return line

    def _monitored_note(self, note: str, line: str) -> str:
        """The checkpoint with the log signatures the witness verified and its cosignature:
        what the monitoring endpoint serves (tlog-witness: "it MUST include the
        cosignature(s) from the witness's key(s) ... and the cosignature from the log key(s)
        that the witness verified")."""
        parsed = parse_checkpoint(note)
        signers = check_note(note, self.logs[parsed.checkpoint.origin]).log_signers
        kept = [s for s in parsed.signatures
                if any(s.name == k.name and s.key_hash == k.key_hash for k in signers)]
        own = witness_lines(kept, self.key.verifier)
        return parsed.text + "\n" + "".join(s.line() for s in kept if s not in own) + line


def create_witness_app(witness: Witness) -> Starlette:
    async def add_checkpoint(request: Request) -> Response:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_REQUEST_BYTES:
                return PlainTextResponse("request too large\n", status_code=413)
        try:
            line = await anyio.to_thread.run_sync(witness.add_checkpoint, bytes(body))
        except WitnessRefusal as refusal:
            if refusal.status == 409 and refusal.size is not None:
                # tlog-witness: "The response MUST have a Content-Type of text/x.tlog.size":
                # exactly that (PlainTextResponse would append "; charset=utf-8")
                return Response(f"{refusal.size}\n".encode("ascii"), status_code=409,
                                headers={"Content-Type": SIZE_CONTENT_TYPE})
            return PlainTextResponse(f"{refusal}\n", status_code=refusal.status)
        return PlainTextResponse(line)

    async def checkpoint(request: Request) -> Response:
        note = await anyio.to_thread.run_sync(witness.state.cosigned_note,
                                              request.path_params["origin_hash"])
        if note is None:
            return PlainTextResponse("this witness has cosigned no checkpoint of that log\n",
                                     status_code=404)
        return PlainTextResponse(note, headers={"Cache-Control": "no-cache"})

    return Starlette(routes=[
        Route("/add-checkpoint", add_checkpoint, methods=["POST"]),
        Route("/{origin_hash}/checkpoint", checkpoint, methods=["GET", "HEAD"]),
    ])
