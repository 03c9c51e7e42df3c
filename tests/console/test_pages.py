"""The console's pages on the example store + Workbench journal (tree heads 18, 37, 66, 83):
what an auditor reads, clicks and downloads; expected values from spec_values and the files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from backends import raw_query
from cli_runs import cli
from pages_html import links, parsed, problem, text
from spec_values import (
    CODES_IN_APPEND_ORDER,
    DELTA_QUANTITY_ID,
    HEADS,
    MISSING_ROLE_CODES,
    TOTAL_ASSESSMENTS,
    TOTAL_RESIDUALS,
)
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.api.app import create_app
from store.db.audit_store import AuditStore

REPO = Path(__file__).resolve().parents[2]
JOURNAL_LINES = (REPO / "examples" / "workbench_turn_journal.jsonl").read_text(
    encoding="utf-8").splitlines()
TREE_SIZE = HEADS[4]


def newest_root(url: str) -> str:
    [(root,)] = raw_query(url, "SELECT root_hash FROM tree_heads ORDER BY tree_size DESC "
                               "LIMIT 1")
    return str(root)


def codes_on(page: str) -> list[str]:
    """The residual codes of a residual list's rows, in order."""
    rows = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<td class="mono">([a-z_ ]+)</td>', rows)


def test_the_overview_shows_the_log_counts_and_charts_linking_to_lists(
        console: TestClient, console_url: str) -> None:
    page = console.get("/")
    assert page.status_code == 200
    shown = text(page.text)
    assert f"tree size {TREE_SIZE} leaves" in shown
    assert newest_root(console_url) in shown
    for count, name in ((TOTAL_RESIDUALS, "residuals"), (TOTAL_ASSESSMENTS, "assessments"),
                        (16, "surfaces"), (6, "turns"), (4, "batches")):
        assert f"{count} {name}" in shown, name
    hrefs = links(page.text)
    # Each bar links to its filtered list: 8 MISSING_ROLE residuals, 6 teaching turns.
    assert "/residuals?kind=MISSING_ROLE" in hrefs
    assert "/turns?groundingSource=TEACHING" in hrefs
    assert "/surfaces?verification=MISMATCH" in hrefs
    assert re.search(r"MISSING_ROLE: 8 records\. A required role slot on the relation is "
                     r"unbound\.</title>", page.text)
    assert "Ingest timeline" in shown


def test_a_list_filters_by_the_graphql_filter_fields(console: TestClient) -> None:
    page = console.get("/residuals?kind=MISSING_ROLE")
    assert page.status_code == 200
    assert "8 residuals" in text(page.text)
    assert codes_on(page.text) == MISSING_ROLE_CODES
    both = console.get("/residuals?kind=MISSING_ROLE&organ=unary_delta_transition")
    assert codes_on(both.text) == ["action_cue_unbound", "direction_unbound",
                                   "changed_object_unbound", "delta_quantity_unbound"]
    teaching = console.get("/turns?groundingSource=TEACHING")
    assert "4 turns" in text(teaching.text)  # lines 1, 2, 3 and 6 of the journal


def test_the_turn_list_takes_core_s_time_and_orders_by_it(console: TestClient) -> None:
    # The journal's turns 1-6 are 18:01 ... 18:06 on 2026-07-30 (UTC); an offset typed
    # unencoded in a URL (its '+' read as a space) is the same time.
    for query in ("timeFrom=2026-07-30T20:02:00%2B02:00&timeTo=2026-07-30T18:04:00Z",
                  "timeFrom=2026-07-30T18:02:00+00:00&timeTo=2026-07-30T18:04:00Z"):
        page = console.get(f"/turns?{query}")
        assert page.status_code == 200, problem(page.text)
        assert "3 turns" in text(page.text)  # turns 2, 3 and 4
    keys = _turn_keys(console)
    newest_first = console.get("/turns?order=TIME_DESC")
    assert re.findall(r'href="/turns/([0-9a-f]{64})"', newest_first.text) == keys[::-1]


@pytest.mark.parametrize(("path", "field", "graphql_filter"), [
    ("/residuals?kind=MISSING_ROLE&axis=ROLE", "residuals", '{kind: [MISSING_ROLE], axis: [ROLE]}'),
    ("/assessments?runnable=false&batchIdFrom=2", "assessments",
     "{runnable: false, batchIdFrom: 2}"),
    ("/surfaces?verification=VERIFIED&verification=MISMATCH", "surfaces",
     "{verification: [VERIFIED, MISMATCH]}"),
    ("/turns?epistemicState=decoded", "turns", '{epistemicState: ["decoded"]}'),
])
def test_a_list_page_shows_what_the_api_answers_for_the_same_filter(
        console: TestClient, path: str, field: str, graphql_filter: str) -> None:
    ids = {"residuals": "residualId", "assessments": "assessmentId", "surfaces": "surfaceId",
           "turns": "turnKey"}[field]
    answer = console.post("/graphql", json={"query": f"{{ {field}(filter: {graphql_filter}) "
                                                     f"{{ totalCount nodes {{ {ids} }} }} }}"})
    data = answer.json()["data"][field]
    page = console.get(path)
    assert page.status_code == 200
    shown = re.findall(rf'href="/{field}/([0-9a-f]{{64}})"', page.text)
    assert shown == [node[ids] for node in data["nodes"]]
    assert f"{data['totalCount']} {field}" in text(page.text)


def test_a_facet_link_adds_or_removes_its_filter(console: TestClient) -> None:
    page = console.get("/residuals?kind=MISSING_ROLE")
    hrefs = links(page.text)
    assert "/residuals" in hrefs  # MISSING_ROLE again: removed
    assert "/residuals?kind=MISSING_ROLE&kind=UNSUPPORTED_TOPOLOGY" in hrefs
    assert "/residuals?kind=MISSING_ROLE&axis=ROLE" in hrefs
    # A single-valued field (runnable) is replaced, never given twice.
    runnable = links(console.get("/assessments?runnable=true").text)
    assert "/assessments?runnable=false" in runnable
    assert not any("runnable=true&runnable" in h for h in runnable)


def test_facets_for_assessments_and_batches(console: TestClient) -> None:
    assessments = text(console.get("/assessments").text)
    assert "runnable false 9 true 1" in assessments
    batches = console.get("/batches")
    assert "/batches?recordType=turns" in links(batches.text)
    only_turns = console.get("/batches?recordType=turns")
    assert "1 batches" in text(only_turns.text)
    assert re.findall(r'href="/batches/(\d+)"', only_turns.text.split("<tbody>")[1]) == ["4"]


def test_keyset_pages_link_forwards_and_back(console: TestClient) -> None:
    first = console.get("/residuals?first=5")
    assert codes_on(first.text) == CODES_IN_APPEND_ORDER[:5]
    [after] = [h for h in links(first.text) if "after=" in h]
    second = console.get(after)
    assert codes_on(second.text) == CODES_IN_APPEND_ORDER[5:10]
    [back] = [h for h in links(second.text) if "before=" in h]
    assert codes_on(console.get(back).text) == CODES_IN_APPEND_ORDER[:5]
    newest = console.get("/residuals?order=NEWEST_FIRST")
    assert codes_on(newest.text) == CODES_IN_APPEND_ORDER[::-1]


@pytest.mark.parametrize(("path", "parameter", "says"), [
    ("/residuals?kind=NOPE", "kind", "Value 'NOPE' does not exist in 'ResidualKind' enum"),
    ("/residuals?colour=red", "colour", "not a parameter of this page"),
    ("/residuals?asOf=5", "asOf", "not a tree size this store recorded"),
    ("/residuals?asOf=-1", "asOf", "must be between 0"),
    ("/turns?order=MOST_SEEN", "order", "is not one of OLDEST_FIRST, NEWEST_FIRST"),
    ("/residuals?after=nonsense", "after", "malformed cursor"),
    ("/residuals?first=501", "first", "must be between 1 and 500"),
    ("/assessments?runnable=maybe", "runnable", "true or false"),
    ("/assessments?batchId=x", "batchId", "not an integer"),
    ("/batches?ingestedFrom=yesterday", "ingestedFrom", "not an ISO 8601 timestamp"),
    ("/turns?timeFrom=yesterday", "timeFrom", "Value cannot represent a DateTime"),
    ("/turns?timeTo=2026-07-30T18:00:00", "timeTo", "has no UTC offset"),
    ("/log?from=999", "from", "must be between 0 and 83"),
    ("/residuals/" + DELTA_QUANTITY_ID + "?colour=red", "colour", "not a parameter"),
])
def test_a_bad_parameter_is_a_400_page_naming_it(console: TestClient, path: str,
                                                 parameter: str, says: str) -> None:
    page = console.get(path)
    assert page.status_code == 400
    assert problem(page.text).startswith(f"{parameter}: ")
    assert says in problem(page.text)
    assert "Traceback" not in page.text


@pytest.mark.parametrize("path", [
    "/residuals/" + "0" * 64, "/residuals/not-an-id", "/turns/" + "f" * 64, "/batches/99",
    "/batches/x", "/assessments/" + "A" * 64, "/proofs/residuals/" + "0" * 64 + ".json",
    "/proofs/widgets/1.json", "/export/batches.csv", "/export/residuals.xml", "/nope"])
def test_an_unknown_record_is_a_404_page(console: TestClient, path: str) -> None:
    page = console.get(path)
    assert page.status_code == 404
    assert "Traceback" not in page.text


def test_a_page_of_the_store_now_listens_for_new_records_and_an_as_of_page_does_not(
        console: TestClient) -> None:
    now = console.get("/residuals")
    assert f'<body data-events="/events" data-tree-size="{TREE_SIZE}">' in now.text
    assert '<script src="/static/new-records.js" defer></script>' in now.text
    assert console.get("/static/new-records.js").status_code == 200
    then = console.get(f"/residuals?asOf={HEADS[1]}")  # it never changes: nothing to tell
    assert "<body>" in then.text
    assert "new-records.js" not in then.text


def test_as_of_pages_are_the_store_then_and_immutable(console: TestClient) -> None:
    page = console.get(f"/residuals?asOf={HEADS[1]}")
    assert page.status_code == 200
    assert f"As it was at tree size {HEADS[1]} (after batch 1 )" in text(page.text)
    assert "6 residuals" in text(page.text)
    assert page.headers["cache-control"] == "public, max-age=31536000, immutable"
    # Links stay at that tree size.
    assert all("asOf=18" in h for h in links(page.text) if h.startswith("/residuals/"))
    again = console.get(f"/residuals?asOf={HEADS[1]}",
                        headers={"if-none-match": page.headers["etag"]})
    assert again.status_code == 304
    # A record stored later is not there then.
    later = console.get(f"/turns/{_turn_keys(console)[0]}?asOf={HEADS[1]}")
    assert later.status_code == 404


def test_current_pages_carry_the_tree_head_as_their_etag(console: TestClient,
                                                         console_url: str) -> None:
    page = console.get("/residuals")
    etag = page.headers["etag"]
    assert f"-{TREE_SIZE}-{newest_root(console_url)[:32]}" in etag
    assert page.headers["cache-control"] == "no-cache"
    assert console.get("/residuals", headers={"if-none-match": etag}).status_code == 304
    assert console.get("/residuals", headers={"if-none-match": '"other"'}).status_code == 200


def test_pages_carry_a_self_only_csp_and_no_inline_script(console: TestClient) -> None:
    for path in ("/", "/residuals", f"/residuals/{DELTA_QUANTITY_ID}", "/log?from=18"):
        page = console.get(path)
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        found = parsed(page.text)
        assert found.inline_scripts == 0 and found.style_attributes == 0, path
        assert all(not h.startswith(("http:", "https:", "//")) for h in found.hrefs), path
        assert all(s["src"].startswith("/static/") for s in found.scripts), path


def test_a_residual_page_links_to_its_occurrences_assessments_and_batch(
        console: TestClient) -> None:
    page = console.get(f"/residuals/{DELTA_QUANTITY_ID}")
    assert page.status_code == 200
    shown = text(page.text)
    assert "delta_quantity_unbound" in shown and "Tom gained apples." in shown
    assert "Sam gained pears." in shown  # its two sightings
    assessments = [h for h in links(page.text) if h.startswith("/assessments/")]
    assert len(assessments) == 2
    back = console.get(assessments[0])
    assert f"/residuals/{DELTA_QUANTITY_ID}" in links(back.text)
    assert "/batches/1" in links(back.text)
    batch = console.get("/batches/1")
    assert "/residuals?batchIdFrom=1&batchIdTo=1" in links(batch.text)
    assert f"size {HEADS[1]}" in text(batch.text)


def _turn_keys(console: TestClient) -> list[str]:
    return re.findall(r'href="/turns/([0-9a-f]{64})"', console.get("/turns").text)


def test_a_turn_page_shows_its_journal_line_byte_for_byte_and_its_digest_check(
        console: TestClient) -> None:
    keys = _turn_keys(console)
    assert len(keys) == 6
    page = console.get(f"/turns/{keys[1]}")
    [line] = re.findall(r'<pre class="line">(.*?)</pre>', page.text, flags=re.S)
    import html

    assert html.unescape(line) == JOURNAL_LINES[1]
    digest = json.loads(JOURNAL_LINES[1])["journal_digest"]
    assert f"journal_digest checks: the line hashes to {digest}, as stated" in text(page.text)
    hrefs = links(page.text)
    assert f"/turns/{keys[0]}" in hrefs and f"/turns/{keys[2]}" in hrefs
    surface = next(h for h in hrefs if h.startswith("/surfaces/"))
    assert f"/turns/{keys[1]}" in links(console.get(surface).text)  # and back


def test_previous_and_next_follow_the_turns_journal_across_its_ingests(tmp_path: Path) -> None:
    """Turns 1-3, another journal's turn 1, then the whole journal again (4-6 new): turn 3's
    next is turn 4 of its own journal, not the other journal's turn stored in between."""
    url = f"sqlite:///{tmp_path / 'journals.db'}"
    lines = [line.encode() + b"\n" for line in JOURNAL_LINES]
    mine, other = "workbench_data/turn_journal.jsonl", "elsewhere/turn_journal.jsonl"
    with AuditStore.open(url) as store:
        store.ingest(lines[:3], source=mine)
        store.ingest([journal_line(journal_entry(1, "Elsewhere?", DISCLOSURE, "none"))
                      .encode() + b"\n"], source=other)
        store.ingest(lines, source=mine)
    rows = raw_query(url, "SELECT t.turn_id, t.turn_key, b.source FROM turns t JOIN "
                          "ingest_batches b ON b.batch_id = t.batch_id ORDER BY t.seq")
    key = {(turn_id, source): k for turn_id, k, source in rows}
    assert len(key) == 7
    with AuditStore.open(url, read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as client:
        third = client.get(f"/turns/{key[(3, mine)]}")
        assert f'href="/turns/{key[(4, mine)]}" rel="next"' in third.text
        assert f'href="/turns/{key[(2, mine)]}" rel="prev"' in third.text
        fourth = client.get(f"/turns/{key[(4, mine)]}")
        assert f'href="/turns/{key[(3, mine)]}" rel="prev"' in fourth.text
        lone = client.get(f"/turns/{key[(1, other)]}")
        assert 'rel="prev"' not in lone.text and 'rel="next"' not in lone.text


def test_a_mismatch_surface_shows_stored_and_expected_text_with_the_difference(
        console: TestClient) -> None:
    listing = console.get("/surfaces?verification=MISMATCH")
    [surface] = re.findall(r'href="(/surfaces/[0-9a-f]{64})"', listing.text)
    page = console.get(surface)
    assert "Stored vs expected surface" in page.text
    assert "<del>" in page.text or "<ins>" in page.text
    [stored, expected] = [text(p) for p in re.findall(
        r"<dt>(?:stored|expected)</dt><dd><pre>(.*?)</pre>", page.text, flags=re.S)]
    assert stored != expected


def test_a_record_page_shows_its_inclusion_proof_of_the_stored_entry(
        console: TestClient, console_url: str) -> None:
    page = console.get(f"/residuals/{DELTA_QUANTITY_ID}")
    box = re.search(r'data-proof="inclusion" data-leaf-index="(\d+)" data-tree-size="(\d+)" '
                    r'data-root="([0-9a-f]{64})"', page.text)
    assert box is not None
    index = int(box.group(1))
    assert int(box.group(2)) == TREE_SIZE
    assert box.group(3) == newest_root(console_url)
    logged = cli("log", "--db", console_url, "--start", str(index), "--end",
                 str(index + 1))
    entry = json.loads(logged.stdout)["entry"]
    import html

    [shown] = re.findall(r'<pre class="proof-entry">(.*?)</pre>', page.text, flags=re.S)
    assert html.unescape(shown) == entry
    assert '<script src="/static/proof-check.js" defer></script>' in page.text
    assert console.get("/static/proof-check.js").status_code == 200


def test_the_downloaded_proof_verifies_offline_and_a_tampered_one_does_not(
        console: TestClient, console_url: str, tmp_path: Path) -> None:
    download = console.get(f"/proofs/residuals/{DELTA_QUANTITY_ID}.json")
    assert download.status_code == 200
    assert "attachment" in download.headers["content-disposition"]
    proof = tmp_path / "proof.json"
    proof.write_bytes(download.content)
    assert cli("verify-proof", proof).exit_code == 1  # no key: nothing authenticates it
    ok = cli("verify-proof", proof, "--consistency-only")
    assert ok.exit_code == 0, ok.output
    assert f"is in the tree of size {TREE_SIZE}" in ok.stdout
    assert "against the checkpoint inside the file" in ok.stdout
    # With a checkpoint the auditor kept (here: taken now from the store).
    kept = tmp_path / "checkpoint.txt"
    kept.write_text(cli("checkpoint", "--db", console_url).stdout, encoding="utf-8")
    assert cli("verify-proof", proof, "--checkpoint", kept, "--consistency-only").exit_code == 0
    document = json.loads(download.content)
    document["proof"]["entry"] = document["proof"]["entry"].replace("gained", "gaimed")
    proof.write_text(json.dumps(document), encoding="utf-8")
    bad = cli("verify-proof", proof, "--consistency-only")
    assert bad.exit_code == 1
    assert "leaf_hash is not SHA-256(0x00 ‖ entry)" in bad.output


def test_a_download_holds_the_proof_as_of_a_tree_size(console: TestClient) -> None:
    download = console.get(f"/proofs/residuals/{DELTA_QUANTITY_ID}.json?asOf={HEADS[2]}")
    document = json.loads(download.content)
    assert document["format"] == "core-audit-proof/1"
    assert document["proof"]["tree_size"] == HEADS[2]
    assert document["checkpoint"].split("\n")[1] == str(HEADS[2])


def test_log_checks_a_consistency_proof_from_a_kept_size(console: TestClient,
                                                         console_url: str) -> None:
    [(root_18,)] = raw_query(console_url,
                             "SELECT root_hash FROM tree_heads WHERE tree_size = 18")
    page = console.get(f"/log?from=18&root={root_18}")
    assert page.status_code == 200
    assert 'data-proof="consistency" data-first="18" data-second="83"' in page.text
    assert "The root you kept is this store's root at size 18." in text(page.text)
    wrong = console.get("/log?from=18&root=" + "ab" * 32)
    assert "is NOT this store's root at size 18" in text(wrong.text)
    heads = console.get("/log")
    assert all(f"/?asOf={size}" in links(heads.text) for size in HEADS.values())


@pytest.mark.parametrize(("path", "kind", "filter_json"), [
    ("/export/residuals.csv?kind=MISSING_ROLE", "residuals", '{"kind": ["MISSING_ROLE"]}'),
    ("/export/turns.jsonl", "turns", None),
    ("/export/assessments.csv?runnable=false&asOf=37", "assessments", '{"runnable": false}'),
])
def test_an_export_link_gives_core_audit_export_output(
        console: TestClient, console_url: str, path: str, kind: str,
        filter_json: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("store.console.exports.CHUNK_ROWS", 3)  # many chunks, same bytes
    download = console.get(path)
    assert download.status_code == 200
    output_format = path.split("?")[0].rsplit(".", 1)[1]
    args = ["export", kind, "--db", console_url, "--format", output_format]
    if filter_json:
        args += ["--filter", filter_json]
    query = parse_qs(urlsplit(path).query)
    if "asOf" in query:
        args += ["--as-of", query["asOf"][0]]
    expected = cli(*args)
    assert expected.exit_code == 0
    assert download.content == expected.stdout_bytes
    assert download.content.count(b"\n") > 3


def test_no_console_serves_no_page(console_db: AuditStore) -> None:
    app = create_app(console_db, console=False, close_db_on_shutdown=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for path in ("/", "/residuals", "/static/console.css", "/log"):
            assert client.get(path).status_code == 404, path
        assert client.post("/graphql", json={"query": "{ ledger { treeSize } }"}).json() == {
            "data": {"ledger": {"treeSize": TREE_SIZE}}}


def test_under_a_root_path_every_link_keeps_the_prefix(console_db: AuditStore) -> None:
    app = Starlette(routes=[Mount("/audit", app=create_app(console_db,
                                                          close_db_on_shutdown=False))])
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for path in ("/audit/", "/audit/residuals", f"/audit/residuals/{DELTA_QUANTITY_ID}"):
            page = client.get(path)
            assert page.status_code == 200, path
            local = [h for h in links(page.text) if h.startswith("/")]
            assert local and all(h.startswith("/audit/") for h in local), path
        assert client.get("/audit/static/proof-check.js").status_code == 200


@pytest.mark.parametrize(("query", "why"), [
    ("&batchIdFrom=1", "the filter on batchIdFrom reads every matching row; organ, familyId, "
                       "runnable alone are counted from an index"),
    (f"&asOf={HEADS[2]}", "as of an older tree head, the rows appended since are counted off "
                          "one by one"),
    ("", None),  # the index, or its absence
])
def test_facets_past_their_limit_are_left_out_saying_which_and_why(
        console_db: AuditStore, console_url: str, monkeypatch: pytest.MonkeyPatch,
        query: str, why: str | None) -> None:
    import dataclasses

    from store.console import kinds

    monkeypatch.setitem(kinds.LIST_KINDS, "assessments", dataclasses.replace(
        kinds.LIST_KINDS["assessments"], facet_seconds=1e-9))
    first = 4
    with TestClient(create_app(console_db, close_db_on_shutdown=False),
                    base_url="http://127.0.0.1") as client:
        page = client.get(f"/assessments?first={first}{query}")
    assert page.status_code == 200
    if why is None:
        indexed = raw_query(console_url, "SELECT name FROM sqlite_master WHERE type = 'index' "
                                         "AND sql LIKE '%contract_assessments%(candidate_organ"
                                         "%runnable)%'")
        why = ("the server is busy: try again" if indexed else
               "this store has no index on contract_assessments (candidate_organ, runnable) "
               "yet, so every row is read: `core-audit db upgrade` adds it")
    assert ("Facet counts (organ, familyId, runnable) left out: they took longer than 1e-09 "
            f"s: {why}.") in text(page.text)
    assert len(re.findall(r'href="/assessments/[0-9a-f]{64}[?"]', page.text)) == first


@pytest.mark.parametrize("as_of", [None, *HEADS.values()])
def test_assessment_facets_are_exact_at_every_tree_head(console: TestClient, console_url: str,
                                                       as_of: int | None) -> None:
    """Counted per (organ, runnable) from the index, as of a head by counting off the rows
    appended since: the same as counting the stored rows one by one."""
    bound = "" if as_of is None else f"WHERE seq <= {as_of}"
    rows = raw_query(console_url, f"SELECT candidate_organ, runnable FROM contract_assessments "
                                  f"{bound}")
    organs: dict[str, int] = {}
    for organ, _ in rows:
        organs[organ] = organs.get(organ, 0) + 1
    runnable = sum(1 for _, r in rows if r)
    page = console.get("/assessments" + ("" if as_of is None else f"?asOf={as_of}"))
    shown = text(page.text)
    assert f"{len(rows)} assessments" in shown
    listed = " ".join(f"{o} {n}" for o, n in sorted(organs.items(), key=lambda i: (-i[1], i[0])))
    assert f"organ {listed} familyId" in shown
    both = sorted([("false", len(rows) - runnable), ("true", runnable)],
                  key=lambda i: (-i[1], i[0]))
    assert "runnable " + " ".join(f"{v} {n}" for v, n in both if n) in shown


@pytest.mark.parametrize("as_of", [None, HEADS[3]])
def test_every_link_of_every_kind_of_page_resolves(console: TestClient,
                                                   as_of: int | None) -> None:
    """Overview, lists, one record of each kind and the log, now and at a tree size: each
    local link answers 200 (downloads aside: the export tests read them)."""
    suffix = "" if as_of is None else f"?asOf={as_of}"
    pages = [f"/{suffix}", *(f"/{name}{suffix}" for name in
                             ("residuals", "assessments", "surfaces", "turns", "batches"))]
    for name in ("residuals", "assessments", "surfaces", "batches"):
        listing = console.get(f"/{name}{suffix}")
        pages.append(re.findall(rf'href="(/{name}/[0-9a-f\d]+[^"]*)"', listing.text)[0])
    if as_of is None:
        pages += [f"/turns/{_turn_keys(console)[2]}", "/log?from=18"]
    seen: set[str] = set()
    for page in pages:
        answer = console.get(page)
        assert answer.status_code == 200, page
        for link in links(answer.text):
            if link in seen or not link.startswith("/") or "/export/" in link or (
                    link.startswith("/graphql")):
                continue
            seen.add(link)
            assert console.get(link).status_code == 200, f"{link} (on {page})"
            if as_of is not None and link.startswith(("/residuals/", "/assessments/")) and (
                    link != page.split("?")[0]):  # "See it now": the same page, as it is now
                assert f"asOf={as_of}" in link, (link, page)
    assert len(seen) > 50
