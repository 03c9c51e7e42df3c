"""A file's tail appended on its own (InputStart, as `core-audit follow` appends new lines)
stores what `ingest` of the whole grown file stores: the same rows, keys and line numbers,
so re-ingesting the whole file afterwards finds every row present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from turn_data import DISCLOSURE, journal_entry, journal_line

from store.db.audit_store import AuditStore
from store.db.write.row_builders import InputStart
from store.errors import BatchRejected


def journal(*turn_ids: int) -> list[str]:
    return [journal_line(journal_entry(n, f"Why does zorp {n} exist?", DISCLOSURE, "none",
                                       epistemic_state="undetermined",
                                       normative_clearance="suppressed",
                                       refusal_emitted=True)) for n in turn_ids]


# A ChatResponse line (core-interop.md §4) has no turn id: its stored key is its line and its
# line number in the input, so the same output twice is two turns. (" ": a blank line.)
CHAT = json.dumps({"prompt": "Why does zorp exist?", "surface": DISCLOSURE,
                   "grounding_source": "none", "epistemic_state": "undetermined",
                   "normative_clearance": "suppressed", "normative_detail": "",
                   "refusal_reason": None}, ensure_ascii=False)


def turn_rows(db: AuditStore) -> list[tuple[object, ...]]:
    with db.engine.connect() as connection:
        return [tuple(row) for row in connection.exec_driver_sql(
            "SELECT turn_key, kind, turn_id, line_number FROM turns ORDER BY seq")]


@pytest.mark.parametrize("lines", [journal(1, 2, 3, 4), [" ", CHAT, CHAT, " ", CHAT, CHAT]],
                         ids=["journal", "chat-responses"])
def test_a_tail_stores_what_the_whole_grown_file_stores(backend_url: str, tmp_path: Path,
                                                         lines: list[str]) -> None:
    with AuditStore.open(backend_url) as tailed:
        tailed.ingest(lines[:3], source="f.jsonl")
        next_turn = 4 if lines[0].strip() else 1
        summary = tailed.ingest(lines[3:], source="f.jsonl", start=InputStart(4, next_turn))
        assert summary.batch_id == 2
        assert summary.lines == len(lines)  # numbered as in the file
        again = tailed.ingest(lines, source="f.jsonl")  # `ingest` of the whole file, later
        assert again.batch_id is None
        assert again.tables["turns"].new == 0
        stored = turn_rows(tailed)
    with AuditStore.open(str(tmp_path / "whole.db")) as whole:
        whole.ingest(lines, source="f.jsonl")
        assert turn_rows(whole) == stored


def test_a_tail_continues_the_journal_turn_ids_and_names_a_gap_by_its_file_line(
        backend_url: str) -> None:
    with AuditStore.open(backend_url) as db:
        db.ingest(journal(1, 2), source="turn_journal.jsonl")
        with pytest.raises(BatchRejected) as rejected:
            db.ingest(journal(4), source="turn_journal.jsonl", start=InputStart(3, 3))
        [failure] = rejected.value.summary.failures
        assert (failure.line, failure.reason) == (3, "turn_id: expected 3, found 4 (a gap)")
