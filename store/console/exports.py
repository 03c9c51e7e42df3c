"""`/export/{kind}.csv|jsonl`: `core-audit export` output for a list page's filter, streamed in
keyset chunks, each read under a time limit of its own (a whole table at 1M rows takes longer
than one request's limit), all at the tree size the download started at."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from store.console.kinds import LIST_KINDS
from store.console.lists import parsed_filter
from store.console.parameters import PAGE_OPTIONS, ParameterError, as_of_of
from store.db.damage import DAMAGE, damage_said
from store.db.queries import snapshot_at
from store.db.queries.as_of import Snapshot
from store.db.queries.exports import (
    EXPORT_CHUNK_ROWS,
    EXPORT_KINDS,
    encode_rows,
    export_chunk,
)

if TYPE_CHECKING:
    from store.console.pages import Console

logger = logging.getLogger(__name__)
CHUNK_ROWS = EXPORT_CHUNK_ROWS  # rows a chunk reads, under its own time limit
FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


def _pinned(connection: Any, as_of: int | None) -> Snapshot:
    """The snapshot to read: asOf's, or the newest head now (rows appended meanwhile stay out)."""
    from store.db.log.stored_log import latest_head

    snapshot = snapshot_at(connection, as_of)
    if snapshot is not None:
        return snapshot
    head = latest_head(connection)
    return Snapshot(tree_size=head.size, batch_id=0, root_hash=head.root_hex)


def export_endpoint(console: Console) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    from store.console.pages import HEADERS, NotFound

    async def endpoint(request: Request) -> Response:
        async def answer() -> Response:
            name, output_format = request.path_params["kind"], request.path_params["format"]
            kind = LIST_KINDS.get(name)
            if kind is None or kind.export is None or output_format not in FORMATS:
                raise NotFound(f"no export {name[:80]}.{output_format[:16]}: residuals, "
                               "assessments, surfaces and turns, as .csv or .jsonl")
            for option in PAGE_OPTIONS:
                if option not in ("asOf", "search") and option in request.query_params:
                    raise ParameterError(option, "an export has every matching row, in append "
                                         "order: it takes the filter, search and asOf only")
            where = parsed_filter(kind, request.query_params)
            as_of = as_of_of(request.query_params)
            export = kind.export
            seq_at = EXPORT_KINDS[export].columns.index("seq")
            snapshot = await console.db.run(console.db.deadline(), _pinned, as_of)
            size = CHUNK_ROWS
            first = await console.db.run(console.db.deadline(), export_chunk, export, where,
                                         snapshot, 0, size)

            async def body() -> AsyncIterator[bytes]:
                chunk = first
                yield encode_rows(export, chunk, output_format, header=True)
                sent = len(chunk)
                while len(chunk) == size:
                    after = chunk[-1][seq_at]
                    try:
                        chunk = await console.db.run(console.db.deadline(), export_chunk,
                                                     export, where, snapshot, after, size)
                    except DAMAGE as exc:
                        # The status is sent: the download ends with a line saying where it
                        # stopped and why, which no reader takes for a record.
                        said = damage_said(exc)
                        logger.warning("download %s: %s", request.url.path, said)
                        yield (f"core-audit: this download stopped after {sent} records: "
                               f"{said}\n").encode()
                        return
                    sent += len(chunk)
                    yield encode_rows(export, chunk, output_format, header=False)

            suffix = "" if as_of is None else f"-at-{as_of}"
            return StreamingResponse(body(), media_type=FORMATS[output_format], headers={
                **HEADERS, "Content-Disposition":
                    f'attachment; filename="{export}{suffix}.{output_format}"',
                "Cache-Control": "no-store"})

        return await console.guarded(request, answer)

    return endpoint
