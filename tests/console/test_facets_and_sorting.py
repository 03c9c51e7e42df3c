"""The console's facets for every filter field ("show all", "(none)") and its column sorting,
on the example store + Workbench journal; expected values from spec_values, written out."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from pages_html import links, problem, text
from spec_values import CODES_IN_APPEND_ORDER
from starlette.testclient import TestClient

from store.api.app import create_app
from store.console import kinds, list_facets
from store.db.audit_store import AuditStore

CODES_SORTED = sorted(CODES_IN_APPEND_ORDER)
# The ten assessments' problem texts (examples/adr_0225_frames.jsonl and
# core_frames_families.jsonl) in byte order: " " before "." before digits before upper case.
PROBLEM_TEXTS = ["3 apples were gained by Tom.", "40% of the students walk.", "Mia has 5.",
                 "Sam gained pears.", "The price fell to a third.",
                 "The tariff doubles after 6 pm.", "Tom gained 3 apples.",
                 "Tom gained 3 degrees.", "Tom gained 3.", "Tom gained apples."]


def codes_on(page: str) -> list[str]:
    """The residual codes of a residual list's rows, in order."""
    rows = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<td class="mono">([a-z_ ]+)</td>', rows)


def facet_values(page: str, name: str) -> list[str]:
    """The values a facet lists, in order."""
    section = page.split(f'data-facet="{name}"', 1)[1].split("</section>", 1)[0]
    return [html.unescape(v) for v in re.findall(r"<li><(?:a|span)[^>]*>([^<]*)</", section)]


def href_of(page: str, marker: str) -> str:
    found = re.search(rf'<a href="([^"]*)"[^>]*{marker}', page)
    assert found is not None, marker
    return html.unescape(found.group(1))


def test_show_all_pages_through_every_code(console: TestClient,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "FACET_ROWS", 5)
    monkeypatch.setattr(list_facets, "FACET_PAGE", 5)
    page = console.get("/residuals?kind=MISSING_ROLE").text
    # Every code counts one residual: by count, then by code (of the eight missing-role
    # residuals, spec_values.MISSING_ROLE_CODES).
    assert facet_values(page, "code") == [
        "action_cue_unbound", "base_quantity_unbound", "changed_object_unbound",
        "delta_quantity_unbound", "direction_unbound"]
    show_all = href_of(page, 'data-show-all="code"')
    assert show_all == "/residuals?kind=MISSING_ROLE&facet=code"
    assert "show all 8" in text(page)  # eight missing-role codes
    seen, url = [], "/residuals?facet=code"
    while True:
        shown = console.get(url).text
        assert "every facet" in text(shown)
        seen.append(facet_values(shown, "code"))
        if 'data-more-values="code"' not in shown:
            break
        url = href_of(shown, 'data-more-values="code"')
        assert "facetAfter=" in url
    assert seen == [CODES_SORTED[:5], CODES_SORTED[5:10], CODES_SORTED[10:]]


def test_show_all_of_a_facet_this_page_has_not_is_refused(console: TestClient) -> None:
    page = console.get("/residuals?facet=prompt")
    assert page.status_code == 400
    assert problem(page.text).startswith("facet: 'prompt' is not a facet of this page")


def test_none_selects_the_records_without_a_value(console: TestClient) -> None:
    page = console.get("/residuals").text
    none = href_of(page, 'data-null="true"')
    assert none == "/residuals?isNull=familyId"
    only = console.get(none).text
    # temporal_tariff belongs to no family (spec_values.FACETS_ALL).
    assert codes_on(only) == ["unbound_base_quantity"]
    assert "1 residuals" in text(only)
    assert "Filtered by familyId = (none)" in text(only)
    assert "/residuals" in links(only)  # the chip removes it
    # (none) with a value of the same field: any of them.
    both = console.get("/residuals?isNull=familyId&familyId=binding.quantity_entity").text
    assert "2 residuals" in text(both)


def test_none_of_a_field_that_is_never_null_is_refused(console: TestClient) -> None:
    page = console.get("/residuals?isNull=kind")
    assert page.status_code == 400
    assert problem(page.text) == "isNull: 'kind' is not a field that can be null; one of familyId"


def test_every_filter_field_of_turns_and_surfaces_has_a_facet(console: TestClient) -> None:
    turns = console.get("/turns").text
    for name in ("groundingSource", "epistemicState", "normativeClearance", "verification",
                 "corpusId", "kind", "traceIntegrity", "surfaceForm", "chainId", "journal"):
        assert f'data-facet="{name}"' in turns, name
    assert facet_values(turns, "kind") == ["WORKBENCH_JOURNAL"]
    surfaces = console.get("/surfaces").text
    for name in ("groundingSource", "verification", "corpusId", "intent", "surfaceForm",
                 "chainId", "subject"):
        assert f'data-facet="{name}"' in surfaces, name


def test_a_column_heading_sorts_and_the_next_page_continues(console: TestClient) -> None:
    page = console.get("/residuals?first=5").text
    assert "/residuals?first=5&order=CODE_ASC" not in links(page)  # sorting starts over
    code = href_of(page, 'title="sort by code"')
    assert code == "/residuals?order=CODE_ASC"
    first = console.get("/residuals?order=CODE_ASC&first=5").text
    assert codes_on(first) == CODES_SORTED[:5]
    assert re.search(r'<th scope="col" aria-sort="ascending"><a href="/residuals\?order='
                     r'CODE_DESC"', first)
    after = href_of(first, 'rel="next"')
    assert codes_on(console.get(after).text) == CODES_SORTED[5:10]
    down = console.get("/residuals?order=CODE_DESC&first=5").text
    assert codes_on(down) == CODES_SORTED[::-1][:5]
    assert 'aria-sort="descending"' in down


def test_a_malformed_facet_cursor_is_a_400_naming_it(console: TestClient) -> None:
    page = console.get("/residuals?facet=code&facetAfter=xyz")
    assert page.status_code == 400
    assert problem(page.text) == "facetAfter: malformed facet cursor (use the link's)"


def test_turn_facets_past_their_limit_are_left_out_saying_why(
        console_db: AuditStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(kinds.LIST_KINDS, "turns", dataclasses.replace(
        kinds.LIST_KINDS["turns"], facet_seconds=1e-9))
    with TestClient(create_app(console_db, close_db_on_shutdown=False),
                    base_url="http://127.0.0.1") as client:
        page = client.get("/turns")
    assert page.status_code == 200
    assert "6 turns" in text(page.text)  # the list itself is shown
    assert 'data-facet="' not in page.text
    assert ("Facet counts (every facet) left out: they took longer than 1e-09 s: every "
            "matching turn is counted (about 2 s of CPU a million turns): narrow the filter, "
            "e.g. to a batch range or a journal.") in text(page.text)


def test_every_column_shown_has_a_heading_that_sorts(console: TestClient) -> None:
    for name, kind in kinds.LIST_KINDS.items():
        page = console.get(f"/{name}").text
        for column in kind.columns:
            assert column.orders, (name, column.heading)
            assert f'title="sort by {column.heading}' in page, (name, column.heading)


def test_batches_by_source_and_assessments_by_problem_text(console: TestClient) -> None:
    batches = console.get("/batches").text
    assert href_of(batches, 'title="sort by source"') == "/batches?order=SOURCE_ASC"
    down = console.get("/batches?order=SOURCE_DESC").text
    rows = down.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert re.findall(r"<td>([a-z0-9_]+\.jsonl)</td>", rows) == [
        "workbench_turn_journal.jsonl", "core_frames_families.jsonl",
        "adr_0225_frames.jsonl", "adr_0052_surfaces.jsonl"]
    assert re.search(r'<th scope="col" aria-sort="descending"><a href="/batches\?order='
                     r'SOURCE_ASC"', down)
    first = console.get("/assessments?order=PROBLEM_TEXT_ASC&first=3").text
    assert re.search(r'<th scope="col" aria-sort="ascending"><a href="/assessments\?order='
                     r'PROBLEM_TEXT_DESC"', first)
    after = console.get(href_of(first, 'rel="next"')).text
    texts = [re.findall(r"<td>([^<]*\.)</td>", page.split("<tbody>", 1)[1])
             for page in (first, after)]
    assert texts == [PROBLEM_TEXTS[:3], PROBLEM_TEXTS[3:6]]
