"""The log as C2SP tlog-tiles, under /log/: `checkpoint` (the newest kept signed checkpoint,
with its cosignatures), `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]`. Every tile,
partial ones too (a path names its width: its bytes never change), is cached for a year,
immutable, as tlog-tiles says ("This endpoint is immutable, so its caching headers SHOULD be
long-lived"); entry bundles are gzip-compressed for a client that accepts gzip; the
checkpoint is not cached."""

from __future__ import annotations

import gzip
import logging

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route

from store.db.audit_store import AuditStore
from store.db.damage import DAMAGE, damage_said
from store.db.log.tiles import served_checkpoint, tile_bytes
from store.errors import QueryError
from store.model.tiles.layout import (
    CHECKPOINT_CACHE,
    CHECKPOINT_CONTENT_TYPE,
    CONTENT_TYPE,
    IMMUTABLE,
    TilePathError,
    parse_tile_path,
)

LOG_PREFIX = "/log"
logger = logging.getLogger(__name__)


def _not_found(reason: str) -> Response:
    return PlainTextResponse(reason + "\n", status_code=404,
                             headers={"Cache-Control": CHECKPOINT_CACHE})


def accepts_gzip(header: str) -> bool:
    """Whether an Accept-Encoding header accepts gzip (RFC 9110: `gzip` or `*`, q above 0)."""
    accepted = {}
    for item in header.split(","):
        coding, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        accepted[coding.strip().lower()] = quality
    return accepted.get("gzip", accepted.get("x-gzip", accepted.get("*", 0.0))) > 0


def log_routes(db: AuditStore) -> Mount:
    async def checkpoint(_: Request) -> Response:
        try:
            note = await db.run(db.deadline(), served_checkpoint)
        except DAMAGE as exc:
            said = damage_said(exc)
            logger.warning("log checkpoint: %s", said)
            return PlainTextResponse(f"{said}\n", status_code=503)
        if note is None:
            return _not_found("no signed checkpoint yet (core-audit checkpoint --key K)")
        return Response(note, media_type=CHECKPOINT_CONTENT_TYPE,
                        headers={"Cache-Control": CHECKPOINT_CACHE})

    async def tile(request: Request) -> Response:
        try:
            wanted = parse_tile_path("tile/" + request.path_params["path"])
        except TilePathError as exc:
            return _not_found(str(exc))
        try:
            data = await db.run(db.deadline(), tile_bytes, wanted)
        except QueryError as exc:  # the time limit
            return PlainTextResponse(f"{exc}\n", status_code=503)
        except DAMAGE as exc:  # the store's fault: one line in the log, no traceback
            said = damage_said(exc)
            logger.warning("log tile %s: %s", wanted.path(), said)
            return PlainTextResponse(f"{said}\n", status_code=503)
        if data is None:
            return _not_found(f"{wanted.path()}: not in the log's tree yet")
        headers = {"Cache-Control": IMMUTABLE}
        if wanted.level is None:  # "Entry bundles SHOULD be compressed at the HTTP layer"
            headers["Vary"] = "Accept-Encoding"
            if accepts_gzip(request.headers.get("accept-encoding", "")):
                data = gzip.compress(data, compresslevel=6, mtime=0)  # mtime 0: same bytes
                headers["Content-Encoding"] = "gzip"
        return Response(data, media_type=CONTENT_TYPE, headers=headers)

    return Mount(LOG_PREFIX, routes=[
        Route("/checkpoint", checkpoint, methods=["GET", "HEAD"]),
        Route("/tile/{path:path}", tile, methods=["GET", "HEAD"]),
    ])
