"""The query layer over surface records: filters, keyset pages, counts against SQL, facets."""

from __future__ import annotations

import pytest
from backends import raw_query
from spec_surfaces import (
    LIGHT_ID,
    LIGHT_TURNS,
    SURFACE_FACETS_ALL,
    SURFACES,
    TEACHING_FACETS,
    TOTAL_SURFACE_TURNS,
    TOTAL_SURFACES,
    UNRESOLVABLE_ID,
    Expected,
)
from teaching_data import ADR_DOMAINS, LIGHT_SURFACE

from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import SurfaceFilter
from store.model.surface_records import SurfaceVerification
from store.model.teaching_surface import GroundingSource


def found(page: queries.Page[queries.StoredSurface]) -> list[Expected]:
    return [Expected(s.grounding_source.name, s.subject or "", s.intent or "",
                     s.verification.name, -1) for s in page.items]


def expected(*picked: Expected) -> list[Expected]:
    return [e._replace(turns=-1) for e in picked]


S = GroundingSource
V = SurfaceVerification


@pytest.mark.parametrize("source", list(GroundingSource), ids=[s.value for s in GroundingSource])
def test_each_grounding_source_returns_exactly_its_records(example_db: AuditStore,
                                                           source: GroundingSource) -> None:
    wanted = [e for e in SURFACES if e.grounding_source == source.name]
    assert len(wanted) == (5 if source is S.TEACHING else 1)
    where = SurfaceFilter(grounding_source=[source])
    assert found(example_db.execute(queries.list_surfaces, where)) == expected(*wanted)
    assert example_db.execute(queries.count_surfaces, where) == len(wanted)


@pytest.mark.parametrize(
    ("where", "wanted"),
    [
        (SurfaceFilter(), SURFACES),
        (SurfaceFilter(grounding_source=[], intent=[]), SURFACES),  # [] = no constraint
        # Any-of within a field.
        (SurfaceFilter(grounding_source=[S.PACK, S.VAULT, S.OOV]),
         [SURFACES[4], SURFACES[5], SURFACES[9]]),
        (SurfaceFilter(verification=[V.VERIFIED]), SURFACES[:3]),
        (SurfaceFilter(verification=[V.MISMATCH, V.UNRESOLVABLE]), SURFACES[6:8]),
        (SurfaceFilter(verification=[V.NOT_CHECKED]),
         [e for e in SURFACES if e.grounding_source != "TEACHING"]),
        (SurfaceFilter(corpus_id=["cognition_chains_v2"]), [SURFACES[7]]),
        (SurfaceFilter(chain_id=["cause_knowledge_requires_evidence"]),
         [SURFACES[1], SURFACES[6]]),
        (SurfaceFilter(subject=["knowledge"]),
         [SURFACES[1], SURFACES[4], SURFACES[6], SURFACES[10]]),
        (SurfaceFilter(intent=["definition", "recall"]),
         [SURFACES[4], SURFACES[5], SURFACES[9], SURFACES[11]]),
        # ANDed across fields.
        (SurfaceFilter(grounding_source=[S.TEACHING], subject=["knowledge"]),
         [SURFACES[1], SURFACES[6]]),
        (SurfaceFilter(grounding_source=[S.TEACHING, S.PACK], subject=["knowledge"],
                       verification=[V.VERIFIED, V.NOT_CHECKED]),
         [SURFACES[1], SURFACES[4]]),
        (SurfaceFilter(grounding_source=[S.TEACHING], corpus_id=["cognition_chains_v1"],
                       intent=["verification"]), [SURFACES[2]]),
        (SurfaceFilter(subject=["light"], intent=["recall"]), [SURFACES[11]]),
        (SurfaceFilter(grounding_source=[S.PACK], verification=[V.VERIFIED]), []),
        (SurfaceFilter(chain_id=["cause_light_reveals_truth"], subject=["memory"]), []),
    ],
)
def test_surface_filters(example_db: AuditStore, where: SurfaceFilter,
                         wanted: list[Expected]) -> None:
    assert found(example_db.execute(queries.list_surfaces, where)) == expected(*wanted)
    assert example_db.execute(queries.count_surfaces, where) == len(wanted)


@pytest.mark.parametrize("first", [1, 2, 5, 11, 12, 13])
def test_paging_returns_every_surface_exactly_once(example_db: AuditStore, first: int) -> None:
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        page = example_db.execute(queries.list_surfaces, None, first, after)
        pages += 1
        assert len(page.items) <= first
        seen.extend(s.surface_id for s in page.items)
        if not page.has_next_page:
            break
        after = page.end_cursor
    assert len(seen) == len(set(seen)) == TOTAL_SURFACES
    assert pages == max(1, -(-TOTAL_SURFACES // first))


def test_paging_a_filter_returns_its_records_once(example_db: AuditStore) -> None:
    where = SurfaceFilter(grounding_source=[S.TEACHING])
    pages: list[list[Expected]] = []
    after = None
    while True:
        page = example_db.execute(queries.list_surfaces, where, 2, after)
        pages.append(found(page))
        if not page.has_next_page:
            break
        after = page.end_cursor
    assert [len(p) for p in pages] == [2, 2, 1]
    teaching = [e for e in SURFACES if e.grounding_source == "TEACHING"]
    assert [e for page in pages for e in page] == expected(*teaching)


def test_surface_by_id(example_db: AuditStore) -> None:
    light = example_db.execute(queries.surface_by_id, LIGHT_ID)
    assert light is not None
    assert (light.grounding_source, light.surface, light.verification) == (
        S.TEACHING, LIGHT_SURFACE, V.VERIFIED)
    assert (light.corpus_id, light.chain_id, light.pack_id, light.pack_version) == (
        "cognition_chains_v1", "cause_light_reveals_truth", "sample_en_cognition_v1",
        "1.0.0-sample")
    assert (light.connective, light.object, light.chain_provenance) == (
        "reveals", "truth", "adr-0052:reviewed:2026-05-18")
    assert light.subject_domains == tuple(ADR_DOMAINS["light"])
    assert light.object_domains == tuple(ADR_DOMAINS["truth"])
    unresolvable = example_db.execute(queries.surface_by_id, UNRESOLVABLE_ID)
    assert unresolvable is not None
    assert (unresolvable.pack_id, unresolvable.subject_domains, unresolvable.verification) == (
        None, None, V.UNRESOLVABLE)
    assert example_db.execute(queries.surface_by_id, "0" * 64) is None


def test_surface_occurrences_in_append_order(example_db: AuditStore) -> None:
    first = example_db.execute(queries.list_surface_occurrences, LIGHT_ID, 1)
    assert first.has_next_page
    rest = example_db.execute(queries.list_surface_occurrences, LIGHT_ID, 1, first.end_cursor)
    assert not rest.has_next_page
    turns = first.items + rest.items
    assert [(o.session_id, o.turn_id, o.prompt) for o in turns] == LIGHT_TURNS
    assert {(o.batch.batch_id, o.batch.source) for o in turns} == {
        (3, "adr_0052_surfaces.jsonl")}
    light = example_db.execute(queries.surface_by_id, LIGHT_ID)
    assert light is not None and light.occurrence_count == 2


def _direct(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    return raw_query(url, sql, *params)


def test_counts_equal_direct_sql(example_db: AuditStore, example_store_url: str) -> None:
    url = example_store_url
    assert example_db.execute(queries.count_surfaces) == _direct(
        url, "SELECT count(*) FROM surface_records")[0][0] == TOTAL_SURFACES
    where = SurfaceFilter(grounding_source=[S.TEACHING], verification=[V.VERIFIED])
    assert example_db.execute(queries.count_surfaces, where) == _direct(
        url, "SELECT count(*) FROM surface_records WHERE grounding_source = ?"
             " AND verification = ?", "teaching", "verified")[0][0] == 3
    facets = example_db.execute(queries.surface_facets)
    assert facets.occurrences == _direct(
        url, "SELECT count(*) FROM surface_occurrences")[0][0] == TOTAL_SURFACE_TURNS
    by_source = dict(_direct(url, "SELECT grounding_source, count(*) FROM surface_records"
                                  " GROUP BY grounding_source"))
    assert {f.value: f.count for f in facets.by_grounding_source} == by_source
    turns = dict(_direct(url, "SELECT surface_id, count(*) FROM surface_occurrences"
                              " GROUP BY surface_id"))
    page = example_db.execute(queries.list_surfaces)
    ids = [s.surface_id for s in page.items]
    assert {s.surface_id: s.occurrence_count for s in page.items} == turns
    assert [turns[i] for i in ids] == [e.turns for e in SURFACES]


def _rows(items: list[queries.FacetCount]) -> list[dict[str, object]]:
    return [{"value": f.value, "count": f.count, "occurrences": f.occurrences} for f in items]


def _as_dict(facets: queries.SurfaceFacets) -> dict[str, object]:
    return {
        "total": facets.total,
        "occurrences": facets.occurrences,
        "byGroundingSource": _rows(facets.by_grounding_source),
        "byCorpus": _rows(facets.by_corpus),
        "byIntent": _rows(facets.by_intent),
        "byVerification": _rows(facets.by_verification),
    }


def test_surface_facets(example_db: AuditStore) -> None:
    assert _as_dict(example_db.execute(queries.surface_facets)) == SURFACE_FACETS_ALL
    teaching = example_db.execute(queries.surface_facets,
                                  SurfaceFilter(grounding_source=[S.TEACHING]))
    assert _as_dict(teaching) == TEACHING_FACETS
    empty = example_db.execute(queries.surface_facets,
                               SurfaceFilter(grounding_source=[S.PACK], intent=["cause"]))
    assert _as_dict(empty) == {"total": 0, "occurrences": 0, "byGroundingSource": [],
                               "byCorpus": [], "byIntent": [], "byVerification": []}
