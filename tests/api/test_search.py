"""Full-text search (issue 33): `search` on the lists, facets and groups of residuals,
surfaces and turns, in the documented syntax, on both backends. Expected records are the
ADR-0225 examples' (tests/spec_values.py): a residual's text is the problem it was first seen
in and its explanation, e.g. seq 25 is "The price fell to a third." / "The base quantity role
is unbound.", written out below."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from graphql_requests import data_on_store as data
from graphql_requests import run_on_store as run

from store.api.execution import execute_operation
from store.db.audit_store import AuditStore
from store.db.queries.search import snippet
from store.db.queries.search_syntax import SearchSyntaxError, parse_search

RESIDUALS = """query($search: String, $order: Order, $first: Int, $after: String, $asOf: LogIndex) {
  residuals(search: $search, order: $order, first: $first, after: $after, asOf: $asOf) {
    totalCount edges { snippet cursor node { seq } } pageInfo { hasNextPage endCursor } } }"""

# The residuals' explanations that say "unbound" (the tariff's names unbound_base_quantity,
# which is the words unbound, base, quantity), by seq.
UNBOUND = [2, 4, 6, 9, 22, 25, 27, 30, 35]


def seqs(url: str, search: str, **variables: Any) -> list[int]:
    found = data(url, RESIDUALS, search=search, **variables)["residuals"]
    assert found["totalCount"] == len(found["edges"])
    return [edge["node"]["seq"] for edge in found["edges"]]


def test_words_phrases_prefixes_and_operators(example_url: str) -> None:
    url = example_url
    assert seqs(url, "unbound") == UNBOUND
    assert seqs(url, "UNBOUND") == UNBOUND  # case folded
    assert seqs(url, '"price fell"') == [25, 27]
    assert seqs(url, '"fell price"') == []  # a phrase keeps its order
    assert seqs(url, "degree*") == [15]
    assert seqs(url, "degree") == []  # a word is whole without *
    assert seqs(url, "apples") == [9, 12]
    assert seqs(url, "apples NOT passive") == [9]
    assert seqs(url, "mia OR tariff") == [22, 35]
    assert seqs(url, "tom gained") == [2, 4, 6, 9, 12, 15]  # AND by a space
    assert seqs(url, "(mia OR tariff) AND classification") == [35]
    assert seqs(url, "unbound_base_quantity") == [35]  # one word of the syntax: a phrase


def test_snippets_mark_the_words_found(example_url: str) -> None:
    found = data(example_url, RESIDUALS, search="price", first=1)["residuals"]
    assert [edge["snippet"] for edge in found["edges"]] == ["The «price» fell to a third."]
    without = data(example_url, RESIDUALS, first=1)["residuals"]
    assert without["edges"][0]["snippet"] is None


def test_rank_puts_the_record_with_every_word_first(example_url: str) -> None:
    # "Tom gained 3 degrees." / "Quantity unit conflicts with object type." has both words;
    # the others with "tom" only one.
    ranked = seqs(example_url, "degrees OR tom", order="RANK")
    assert ranked[0] == 15
    assert sorted(ranked) == [2, 4, 6, 9, 12, 15]


def test_rank_pages_forwards_without_overlap(example_url: str) -> None:
    url, pages, after = example_url, [], None
    while True:
        page = data(url, RESIDUALS, search="unbound", order="RANK", first=4,
                    after=after)["residuals"]
        pages += [edge["node"]["seq"] for edge in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert sorted(pages) == UNBOUND and len(pages) == len(set(pages))


def test_search_holds_as_of(example_url: str) -> None:
    # The first batch (the ADR-0225 frames) ends at tree size 18 (spec_values.HEADS).
    assert seqs(example_url, "unbound", asOf=18) == [2, 4, 6, 9]
    assert seqs(example_url, "unbound", asOf=18, order="RANK") != []


def test_facets_and_groups_take_search(example_url: str) -> None:
    found = data(example_url, """{
      residualFacets(search: "price") { total occurrences byOrgan { value count } }
      residualGroups(by: [ORGAN], search: "unbound") { groups { values count } } }""")
    assert found["residualFacets"]["total"] == 2
    assert found["residualFacets"]["byOrgan"] == [{"value": "fraction_decrease", "count": 2}]
    assert sum(g["count"] for g in found["residualGroups"]["groups"]) == len(UNBOUND)


def test_surfaces_and_turns_search_their_text_and_prompts(example_url: str) -> None:
    found = data(example_url, """{
      surfaces(search: "\\"requires recall\\"") { totalCount edges { snippet node { seq } } }
      byPrompt: surfaces(search: "light exist") { totalCount edges { snippet } }
      surfaceFacets(search: "knowledge") { total } }""")
    # "memory — teaching-grounded ... memory requires recall (operation.recall)." and
    # "memory requires recall (you said so in turn t1)."
    assert found["surfaces"]["totalCount"] == 2
    assert [edge["node"]["seq"] for edge in found["surfaces"]["edges"]] == [42, 48]
    assert found["byPrompt"]["totalCount"] == 1
    assert found["byPrompt"]["edges"][0]["snippet"] == "Why does «light» «exist»?"


def test_turns_search_prompts_and_surfaces(journal_db: AuditStore) -> None:
    result = asyncio.run(execute_operation(journal_db, """{
      turns(search: "memory") { totalCount edges { snippet } }
      turnFacets(search: "memory") { total byKind { count } }
      byKind: turnGroups(by: [KIND], search: "memory") { groups { count } }
      byDay: turnGroups(by: [CORE_DAY], search: "memory") { groups { count } } }""",
      None, None))
    assert result.get("errors") is None, result
    turns = result["data"]["turns"]
    # The facets and groups count the same matches the list does (a search matches the
    # turns themselves: never read from turn_fields alone).
    assert turns["totalCount"] == result["data"]["turnFacets"]["total"] >= 1
    assert sum(v["count"] for v in result["data"]["turnFacets"]["byKind"]) == turns["totalCount"]
    for grouped in ("byKind", "byDay"):
        assert sum(g["count"] for g in result["data"][grouped]["groups"]) == turns["totalCount"]
    assert all("«" in edge["snippet"] for edge in turns["edges"])


@pytest.mark.parametrize(("search", "said"), [
    ("apples AND", "search: a term is missing at the end"),
    ('"unclosed', "search: the quote at character 1 is never closed"),
    ("(apples", "search: a parenthesis is never closed"),
    ("apples)", "search: a closing parenthesis has no opening one"),
    ("NOT apples", "search: NOT needs a term before it and after it"),
    ("", "search: empty"),
    ("---", "search: '---' has no letter or digit"),
    ("'; DROP TABLE turns", "search: \"';\" has no letter or digit"),
    ("ap*ples", "search: 'ap*ples': * ends a prefix"),
])
def test_a_malformed_search_is_bad_user_input(example_url: str, search: str,
                                               said: str) -> None:
    result = run(example_url, RESIDUALS, search=search)
    [error] = result["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["message"].startswith(said), error["message"]


@pytest.mark.parametrize("search", [
    "explanation:tom",  # an FTS5 column filter: here the words explanation, tom
    "NEAR tom",  # NEAR is a word here
    "x'; DROP TABLE contract_residuals; --x",
    "tom^ -gained",
])
def test_engine_syntax_is_only_words(example_url: str, search: str) -> None:
    result = run(example_url, RESIDUALS, search=search)
    assert result.get("errors") is None, result
    assert result["data"]["residuals"]["totalCount"] == 0 or "tom" in search
    assert seqs(example_url, "unbound") == UNBOUND  # nothing dropped


def test_rank_needs_a_search(example_url: str) -> None:
    result = run(example_url, RESIDUALS, order="RANK")
    [error] = result["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "RANK orders a search's matches" in error["message"]


def test_lists_without_text_take_no_search(example_url: str) -> None:
    result = run(example_url, '{ assessments(search: "tom") { totalCount } }')
    assert result["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


def test_the_engine_strings_are_built_from_words_only() -> None:
    parsed = parse_search('tom "price fell" appl* OR (mia NOT pears)')
    assert parsed.fts5() == ('((("tom" AND "price fell") AND "appl"*) OR '
                             '("mia" NOT "pears"))')
    assert parsed.tsquery() == ("((('tom' & ('price' <-> 'fell')) & 'appl':*) | "
                                "('mia' & !'pears'))")
    with pytest.raises(SearchSyntaxError):
        parse_search("tom OR")


def test_a_snippet_is_cut_around_the_first_word_found() -> None:
    text = " ".join(f"w{i}" for i in range(60)) + " apples " + " ".join(
        f"v{i}" for i in range(60))
    marked = snippet(text, parse_search("apples"))
    assert marked is not None
    assert marked.startswith("…w52 ") and "«apples»" in marked and marked.endswith("…")
    assert snippet("no such word", parse_search("apples")) is None
