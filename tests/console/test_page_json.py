"""Every console page as JSON (`.json`, or `Accept: application/json`): for each page type, the
JSON says what the HTML page shows (its table cells and links, its fields, its counts); the
group-by pages, the histograms over time and the batch page's counts, on the example store +
Workbench journal (tree heads 18, 37, 66, 83). Expected values from spec_values and the files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pages_html import fields, links, tables, text
from spec_values import DELTA_QUANTITY_ID, HEADS, TOTAL_OCCURRENCES, TOTAL_RESIDUALS
from starlette.testclient import TestClient

REPO = Path(__file__).resolve().parents[2]
JOURNAL_LINES = (REPO / "examples" / "workbench_turn_journal.jsonl").read_text(
    encoding="utf-8").splitlines()
ENVELOPE = ("format", "page", "url", "html", "treeSize", "rootHash", "asOf", "newestTreeSize")


def both(console: TestClient, path: str) -> tuple[str, dict[str, Any]]:
    """The page's HTML and its JSON (at path + .json, the query string kept)."""
    page, _, query = path.partition("?")
    html = console.get(path)
    data = console.get(("/" if page == "/" else page) + ".json" + (f"?{query}" if query else ""))
    assert html.status_code == 200, html.text[:300]
    assert data.status_code == 200, data.text[:300]
    assert data.headers["content-type"] == "application/json"
    found = data.json()
    assert list(found)[:len(ENVELOPE)] == list(ENVELOPE)
    assert found["format"] == "core-audit-console/1"
    return html.text, found


def shown(value: Any) -> str:
    """A JSON row value as the page's cell shows it: ids and long texts shortened with "…",
    counts with thousands separators, a null as "—"."""
    if value is None:
        return "—"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def same_cell(text: str, value: Any) -> bool:
    full = shown(value)
    return text == full or (text.endswith("…") and full.startswith(text[:-1]))


@pytest.mark.parametrize("path", ["/residuals", "/residuals?kind=MISSING_ROLE&first=3",
                                  "/assessments", "/surfaces?order=MOST_SEEN", "/turns",
                                  "/batches", f"/residuals?asOf={HEADS[2]}"])
def test_a_list_as_json_is_the_page_s_rows_and_links(console: TestClient, path: str) -> None:
    html, data = both(console, path)
    rows = tables(html)[0]
    assert len(rows) == len(data["rows"]) > 0
    for cells, row in zip(rows, data["rows"], strict=True):
        assert len(cells) == len(data["columns"])
        for (cell_text, cell_href), column in zip(cells, data["columns"], strict=True):
            assert same_cell(cell_text, row[column]), (column, cell_text, row[column])
            assert cell_href == row.get(f"{column}_href"), (column, cell_href)
    assert f"{data['total']:,} {data['title'].lower()}" in text(html)
    page_links = links(html)
    for facet in data["facets"] or []:
        for value in facet["values"]:
            if value["href"]:
                assert value["href"] in page_links
    for name in ("previous", "next"):
        assert data[name] is None or data[name] in page_links
    if "asOf" in path:
        assert data["asOf"] == HEADS[2] and data["treeSize"] == HEADS[2]
        assert all(row["residual_href"].endswith(f"?asOf={HEADS[2]}") for row in data["rows"])


def test_the_residual_list_as_json_gives_whole_values(console: TestClient) -> None:
    _, data = both(console, "/residuals?kind=MISSING_ROLE&organ=unary_delta_transition")
    assert data["total"] == 4
    assert data["columns"] == ["residual", "kind", "axis", "organ", "code", "seen", "batch"]
    assert [row["code"] for row in data["rows"]] == [
        "action_cue_unbound", "direction_unbound", "changed_object_unbound",
        "delta_quantity_unbound"]
    delta = data["rows"][3]
    assert delta["residual"] == DELTA_QUANTITY_ID  # whole: the page shows 16 digits and "…"
    assert delta["residual_href"] == f"/residuals/{DELTA_QUANTITY_ID}"
    assert delta["seen"] == 2 and delta["batch"] == 1  # seen in both example files
    assert data["filters"] == [
        {"param": "kind", "value": "MISSING_ROLE",
         "remove": "/residuals?organ=unary_delta_transition"},
        {"param": "organ", "value": "unary_delta_transition",
         "remove": "/residuals?kind=MISSING_ROLE"}]


def test_accept_json_is_the_same_answer_with_its_own_etag(console: TestClient) -> None:
    as_json = console.get("/turns?groundingSource=TEACHING",
                          headers={"accept": "application/json"})
    suffixed = console.get("/turns.json?groundingSource=TEACHING")
    html = console.get("/turns?groundingSource=TEACHING", headers={"accept": "text/html"})
    assert as_json.headers["content-type"] == "application/json"
    assert as_json.json() == suffixed.json()
    assert as_json.json()["total"] == 4  # lines 1, 2, 3 and 6 of the journal
    assert html.headers["content-type"].startswith("text/html")
    assert as_json.headers["etag"] != html.headers["etag"]
    assert as_json.headers["vary"] == "Accept"
    again = console.get("/turns?groundingSource=TEACHING",
                        headers={"accept": "application/json",
                                 "if-none-match": as_json.headers["etag"]})
    assert again.status_code == 304


def test_a_bad_parameter_of_a_json_page_is_a_json_400_naming_it(console: TestClient) -> None:
    for path, parameter in (("/residuals.json?kind=NOT_A_KIND", "kind"),
                            ("/residuals/groups.json?by=colour", "by"),
                            ("/log.json?from=x", "from")):
        answer = console.get(path)
        assert answer.status_code == 400, path
        assert answer.headers["content-type"] == "application/json"
        said = answer.json()
        assert said["parameter"] == parameter and said["status"] == 400
        assert "Traceback" not in answer.text
    missing = console.get("/residuals/" + "0" * 64 + ".json")
    assert missing.status_code == 404 and missing.json()["error"] == "Not found"


def test_the_overview_as_json_is_its_counts_charts_and_timeline(console: TestClient) -> None:
    html, data = both(console, "/")
    assert data["log"]["treeSize"] == HEADS[4]
    assert f"tree size {HEADS[4]:,} leaves" in text(html)
    assert [(c["records"], c["count"]) for c in data["counts"]] == [
        ("residuals", TOTAL_RESIDUALS), ("assessments", 10), ("surfaces", 16), ("turns", 6),
        ("batches", 4)]
    for count in data["counts"]:
        assert f'<a href="{count["href"]}"><strong>{count["count"]:,}</strong>' in html
    kinds = next(c for c in data["charts"] if c["title"] == "Residuals by kind")
    assert [(b["label"], b["count"]) for b in kinds["bars"]] == [
        ("MISSING_ROLE", 8), ("UNSUPPORTED_TOPOLOGY", 2), ("CONTRACT_GAP_UNCLASSIFIED", 1),
        ("UNIT_OBJECT_CONFLICT", 1)]
    page_links = links(html)
    for chart in data["charts"]:
        for bar in chart["bars"]:
            assert bar["href"] is None or bar["href"] in page_links
            assert f"{bar['label']}: {bar['count']:,} records" in html
    # Every batch of the example store was ingested on one day: one bar, its count on it.
    [day] = data["timeline"]
    assert day["newRows"] == HEADS[4] - 4  # every leaf but the four batches' own rows
    assert day["href"] in page_links
    assert f'class="count-above">{HEADS[4] - 4}</text>' in html
    assert f'class="label-under">{day["day"]}</text>' in html


@pytest.mark.parametrize("path", [f"/residuals/{DELTA_QUANTITY_ID}", "/batches/4",
                                  f"/residuals/{DELTA_QUANTITY_ID}?asOf={HEADS[1]}"])
def test_a_record_page_as_json_is_its_fields_related_rows_and_proof(
        console: TestClient, path: str) -> None:
    html, data = both(console, path)
    assert [(f["name"], re.sub(r"\s+", " ", f["value"]).strip(), f["href"])
            for f in data["fields"]] == fields(html)
    sections = [section for section in data["related"] if section["rows"]]
    for section, rows in zip(sections, [t for t in tables(html) if t], strict=True):
        assert [[(c["text"], c["href"]) for c in row] for row in section["rows"]] == rows
    proof = data["inclusionProof"]
    assert proof["tree_size"] == data["treeSize"]
    assert f'data-leaf-index="{proof["leaf_index"]}"' in html
    assert f'data-root="{proof["root_hash"]}"' in html
    assert data["proofFile"] in links(html)


def test_the_batch_page_counts_what_it_stored_and_names_its_tree_head(
        console: TestClient) -> None:
    _, data = both(console, "/batches/4")  # the Workbench journal: six lines, six turns
    stored = data["related"][0]
    assert stored["columns"] == ["records", "first stored by this batch", "list"]
    counts = {row[0]["text"]: row[1]["text"] for row in stored["rows"]}
    assert counts["turns"] == str(len(JOURNAL_LINES)) == "6"
    assert counts["residuals"] == counts["assessments"] == "0"
    named = {f["name"]: f for f in data["fields"]}
    assert named["tree head size"]["value"] == str(HEADS[4])
    assert named["tree head"]["href"] == f"/?asOf={HEADS[4]}"
    assert re.fullmatch(r"[0-9a-f]{64}", named["tree head root (hex)"]["value"])
    assert stored["rows"][3][2]["href"] == "/turns?batchIdFrom=4&batchIdTo=4"
    assert console.get("/turns.json?batchIdFrom=4&batchIdTo=4").json()["total"] == 6


def test_the_log_as_json_is_its_tree_heads(console: TestClient) -> None:
    html, data = both(console, f"/log?from={HEADS[1]}")
    [heads] = [t for t in tables(html) if t]
    assert [h["treeSize"] for h in data["treeHeads"]] == [HEADS[4], HEADS[3], HEADS[2],
                                                          HEADS[1]]
    assert [(f"{h['treeSize']:,}", h["rootHash"][:16] + "…", h["batch"])
            for h in data["treeHeads"]] == [(r[0][0], r[1][0], r[2][1]) for r in heads]
    assert data["consistency"]["from"] == HEADS[1] and data["consistency"]["to"] == HEADS[4]
    assert data["consistency"]["keptRoot"] is None


def test_the_keys_page_as_json_offers_no_key(console: TestClient) -> None:
    _, data = both(console, "/keys")
    assert data["keys"] == []


def test_a_group_page_counts_per_combination_and_links_each_to_its_list(
        console: TestClient) -> None:
    html, data = both(console, "/residuals/groups?by=kind,organ")
    assert data["by"] == ["KIND", "ORGAN"]
    assert data["total"] == TOTAL_RESIDUALS and data["occurrences"] == TOTAL_OCCURRENCES
    largest = data["groups"][0]
    assert largest["values"] == {"kind": "MISSING_ROLE", "organ": "unary_delta_transition"}
    assert largest["count"] == 4
    assert largest["href"] == "/residuals?kind=MISSING_ROLE&organ=unary_delta_transition"
    [rows] = [t for t in tables(html) if t]
    assert [[c[0] for c in row] for row in rows] == [
        [*g["values"].values(), f"{g['count']:,}", f"{g['occurrences']:,}"]
        for g in data["groups"]]
    assert [row[-2][1] for row in rows] == [g["href"] for g in data["groups"]]
    for group in data["groups"]:  # each row's list holds exactly its count
        if group["href"] is not None:
            listed = console.get(group["href"].replace("/residuals?", "/residuals.json?"))
            assert listed.json()["total"] == group["count"], group
    by_kind = console.get("/residuals/groups.json?by=KIND").json()
    assert [(g["values"]["kind"], g["count"]) for g in by_kind["groups"]] == [
        ("MISSING_ROLE", 8), ("UNSUPPORTED_TOPOLOGY", 2), ("CONTRACT_GAP_UNCLASSIFIED", 1),
        ("UNIT_OBJECT_CONFLICT", 1)]


def test_turns_group_by_clearance_and_the_list_shows_it(console: TestClient) -> None:
    data = console.get("/turns/groups.json?by=clearance").json()
    # The journal's normative_clearance: violated on turns 1, 2, 4, 6; cleared 3; suppressed 5.
    assert [(g["values"]["clearance"], g["count"]) for g in data["groups"]] == [
        ("VIOLATED", 4), ("CLEARED", 1), ("SUPPRESSED", 1)]
    assert console.get("/turns/groups.json?by=normativeClearance").json()["groups"] == \
        data["groups"]  # the filter's name for the dimension
    listed = console.get("/turns.json?normativeClearance=SUPPRESSED").json()
    assert [row["clearance"] for row in listed["rows"]] == ["SUPPRESSED"]
    assert "clearance" in listed["columns"]
    day = console.get("/surfaces/groups.json?by=ingest_day,grounding_source").json()
    assert sum(g["count"] for g in day["groups"]) == 16
    assert all(g["href"].startswith("/surfaces?ingestedFrom=") for g in day["groups"])


def test_each_histogram_bar_lists_exactly_its_count(console: TestClient) -> None:
    turns = console.get("/turns.json").json()["histogram"]
    # The journal's six timestamps fall in one hour of CORE time: 18:01 to 18:06 UTC.
    assert turns["time"] == "CORE time" and turns["bucket"] == "hour"
    assert [(b["label"], b["count"]) for b in turns["bars"]] == [("2026-07-30 18:00", 6)]
    assert turns["bars"][0]["from"] == "2026-07-30T18:00:00.000000Z"
    assert turns["bars"][0]["to"] == "2026-07-30T18:59:59.999999Z"
    for path in ("/residuals.json", "/surfaces.json?groundingSource=TEACHING", "/turns.json"):
        found = console.get(path).json()
        bars = found["histogram"]["bars"]
        assert sum(b["count"] for b in bars) == found["total"], path
        for bar in bars:
            listed = console.get(bar["href"].replace("?", ".json?", 1)).json()
            assert listed["total"] == bar["count"], bar


def test_a_page_links_its_json_and_graphiql_links_back(console: TestClient) -> None:
    page = console.get("/residuals?kind=MISSING_ROLE")
    assert "/residuals.json?kind=MISSING_ROLE" in links(page.text)
    assert "/residuals/groups?kind=MISSING_ROLE" in links(page.text)
    graphiql = console.get("/graphql", headers={"accept": "text/html"})
    assert '<a href="./">← core-audit console</a>' in graphiql.text


def test_a_bar_within_a_range_lists_only_the_part_it_counts(console: TestClient) -> None:
    batches = console.get("/batches.json").json()["rows"]
    second = next(b for b in batches if b["batch"] == 2)["ingested at"]  # mid-hour
    found = console.get(f"/residuals.json?ingestedFrom={second}").json()
    assert found["total"] == 6  # batch 2's residuals (batch 1 stored the other six)
    bars = found["histogram"]["bars"]
    first = next(b for b in bars if b["from"] <= second <= b["to"])
    assert first["from"] < second  # its bucket starts before the page's range ...
    assert f"ingestedFrom={second.replace(':', '%3A')}" in first["href"]  # ... its link not
    for bar in bars:
        listed = console.get(bar["href"].replace("?", ".json?", 1)).json()
        assert listed["total"] == bar["count"]
    assert sum(bar["count"] for bar in bars) == 6


def test_a_histogram_past_its_limit_is_left_out_and_the_page_says_why(
        console: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.console import lists

    monkeypatch.setattr(lists, "HISTOGRAM_SECONDS", 0.0)
    page = console.get("/surfaces?first=7")
    assert page.status_code == 200
    assert ("The histogram over time is left out: they took longer than 0.0 s: counting "
            "every matching surface per bucket of time; narrow the filter (a batch or time "
            "range).") in text(page.text)
    data = console.get("/surfaces.json?first=7").json()
    assert data["histogram"] is None and data["total"] == 16 and len(data["rows"]) == 7
    assert data["histogramOmitted"].startswith("they took longer than 0.0 s")
