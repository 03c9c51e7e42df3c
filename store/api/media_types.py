"""Which JSON media type a GraphQL answer is sent as, and its HTTP status (GraphQL over HTTP,
https://github.com/graphql/graphql-over-http, spec/GraphQLOverHTTP.md, "Body" and "Status
Codes"; docs/graphql.md#errors says it for users).

`application/graphql-response+json` when the client's Accept asks for it (at a quality no
lower than application/json's); `application/json` for a legacy client: one whose Accept
names only application/json, only wildcards (`*/*`, curl's and httpx's default), or which
sends none. None: Accept names neither (406).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.api.error_codes import ErrorCode

GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"
PARTIAL_SUCCESS = 294  # the spec's "294 Partial Success": data with errors


def _qualities(accept: str) -> dict[str, float]:
    """Each media range of an Accept header and its quality (1 unless q= says otherwise)."""
    ranges: dict[str, float] = {}
    for item in accept.split(","):
        media_range, *parameters = (part.strip() for part in item.split(";"))
        if not media_range:
            continue
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = min(max(float(value.strip()), 0.0), 1.0)
                except ValueError:
                    quality = 0.0  # a quality that is not a number accepts nothing
        media_range = media_range.lower()
        ranges[media_range] = max(quality, ranges.get(media_range, 0.0))
    return ranges


def _quality(ranges: Mapping[str, float], media_type: str) -> tuple[float, bool]:
    """The quality `ranges` give `media_type` by its most specific match, and whether that
    match named the type itself (not a wildcard)."""
    if media_type in ranges:
        return ranges[media_type], True
    main = media_type.split("/")[0]
    for wildcard in (f"{main}/*", "*/*"):
        if wildcard in ranges:
            return ranges[wildcard], False
    return 0.0, False


def response_media_type(accept: str | None) -> str | None:
    """The media type to answer an Accept header with; None when it accepts neither."""
    if accept is None or not accept.strip():
        return JSON
    ranges = _qualities(accept)
    graphql_quality, graphql_named = _quality(ranges, GRAPHQL_RESPONSE)
    json_quality, _ = _quality(ranges, JSON)
    if graphql_quality > 0 and graphql_named and graphql_quality >= json_quality:
        return GRAPHQL_RESPONSE
    if json_quality > 0:
        return JSON
    return GRAPHQL_RESPONSE if graphql_quality > 0 else None


def response_status(body: Mapping[str, Any], media_type: str) -> int:
    """The status of a GraphQL response `body` sent as `media_type`: a request error's (no
    `data`) by its first error's code; with `data`, 200, or 294 for data with errors sent as
    application/graphql-response+json (as application/json, 200: the spec gives 294 only
    "alongside the application/graphql-response+json media type")."""
    if "data" not in body:
        errors = body.get("errors") or [{}]
        code = str((errors[0].get("extensions") or {}).get("code"))
        return ErrorCode[code].status if code in ErrorCode.__members__ else 400
    if body.get("errors") and media_type == GRAPHQL_RESPONSE:
        return PARTIAL_SUCCESS
    return 200
