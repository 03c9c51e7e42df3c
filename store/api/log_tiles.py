"""The log as C2SP tlog-tiles, under /log/: `checkpoint` (the newest kept signed checkpoint,
with its cosignatures), `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]`. Full tiles
never change: cached for a year, immutable; the checkpoint is not cached."""

from __future__ import annotations

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

PARTIAL_CACHE = "public, max-age=60"  # a partial tile is superseded by a wider one soon
LOG_PREFIX = "/log"
logger = logging.getLogger(__name__)


def _not_found(reason: str) -> Response:
    return PlainTextResponse(reason + "\n", status_code=404,
                             headers={"Cache-Control": CHECKPOINT_CACHE})


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
        return Response(data, media_type=CONTENT_TYPE, headers={
            "Cache-Control": IMMUTABLE if wanted.full else PARTIAL_CACHE})

    return Mount(LOG_PREFIX, routes=[
        Route("/checkpoint", checkpoint, methods=["GET", "HEAD"]),
        Route("/tile/{path:path}", tile, methods=["GET", "HEAD"]),
    ])
