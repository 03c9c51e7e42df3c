"""Residual tallies: however frames are split into batches and repeated, facets and filtered
counts (summed from tallies) equal the same counts taken directly over the stored rows."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_support import raw_connect

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import ResidualFilter
from store.model.taxonomy import ResidualKind

REPO = Path(__file__).resolve().parents[2]
FRAMES = [
    line
    for name in ("adr_0225_frames.jsonl", "core_frames_families.jsonl")
    for line in (REPO / "examples" / name).read_bytes().splitlines(keepends=True)
]

DIRECT_BY_KIND = """
SELECT r.residual_kind, COUNT(DISTINCT r.residual_id), COUNT(o.residual_id)
FROM contract_residuals r LEFT JOIN residual_occurrences o ON o.residual_id = r.residual_id
GROUP BY r.residual_kind ORDER BY r.residual_kind"""


def _direct(path: Path, sql: str) -> list[tuple[object, ...]]:
    connection = raw_connect(path)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(range(len(FRAMES))), min_size=1, max_size=6),
                min_size=1, max_size=4))
def test_facets_and_counts_equal_direct_counts_for_any_batching(batches: list[list[int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "audit.db"
        with AuditStore.open(str(path)) as store:
            for number, batch in enumerate(batches):
                store.ingest([FRAMES[i] for i in batch], source=f"batch-{number}")
            assert store.verify().intact
        # A count's test, not the time limit's (tests/api/test_query_layer.py): in CI, once, a
        # query of this tiny store ran past the 5 s default while the machine stalled.
        database = AuditStore.open(str(path), read_only=True, time_limit=60)
        try:
            facets = database.execute(queries.residual_facets)
            missing_role = database.execute(
                queries.count_residuals, ResidualFilter(kind=[ResidualKind.MISSING_ROLE]))
        finally:
            database.close()
        by_kind = _direct(path, DIRECT_BY_KIND)
        assert sorted((f.value, f.count, f.occurrences) for f in facets.by_kind) == by_kind
        [(residuals, occurrences)] = _direct(path, (
            "SELECT (SELECT COUNT(*) FROM contract_residuals),"
            " (SELECT COUNT(*) FROM residual_occurrences)"))
        assert (facets.total, facets.occurrences) == (residuals, occurrences)
        assert missing_role == dict((k, n) for k, n, _ in by_kind).get("missing_role", 0)
