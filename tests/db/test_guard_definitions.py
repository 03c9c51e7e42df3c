"""A fresh store at head carries exactly the append-only triggers store/db/schema/guards.py expects,
definition by definition: what `verify` compares against is what the revisions create."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import raw_query

from store.db.audit_store import AuditStore
from store.db.schema.guards import (
    PG_FUNCTION_BODY,
    expected_pg_guards,
    expected_sqlite_guards,
    guard_key,
    guard_version,
)
from store.db.schema.record_kinds import APPEND_ONLY_TABLES

_PG_TRIGGERS = (
    "SELECT t.tgname, c.relname, t.tgtype, t.tgenabled::text, p.proname, p.prosrc, "
    "t.tgqual IS NULL FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
    "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid "
    "WHERE NOT t.tgisinternal AND n.nspname = current_schema()"
)


def test_guard_keys_and_versions_follow_the_schema() -> None:
    assert guard_key("residual_occurrences") == ("assessment_id", "ordinal")
    assert guard_key("residual_tallies") == ("batch_id", "ordinal")
    assert {guard_version(t) for t in APPEND_ONLY_TABLES} == {3}


def test_the_expected_sqlite_definitions_read_as_the_revisions_wrote_them() -> None:
    guards = expected_sqlite_guards()
    assert len(guards) == 3 * len(APPEND_ONLY_TABLES)
    assert guards["ingest_batches_append_only_insert"].sql == (
        "CREATE TRIGGER ingest_batches_append_only_insert BEFORE INSERT ON ingest_batches "
        "WHEN EXISTS (SELECT 1 FROM ingest_batches WHERE batch_id = NEW.batch_id) "
        "BEGIN SELECT RAISE(ABORT, 'ingest_batches is append-only: a row with this key "
        "exists'); END")
    assert guards["residual_occurrences_append_only_insert"].sql == (
        "CREATE TRIGGER residual_occurrences_append_only_insert BEFORE INSERT ON "
        "residual_occurrences WHEN EXISTS (SELECT 1 FROM residual_occurrences WHERE "
        "assessment_id = NEW.assessment_id AND ordinal = NEW.ordinal) OR NEW.rowid <> -1 "
        "BEGIN SELECT RAISE(ABORT, "
        "'residual_occurrences is append-only: a row with this key exists'); END")
    # REPLACE deletes through any UNIQUE constraint: tree_size is guarded as the key is.
    assert guards["tree_heads_append_only_insert"].sql == (
        "CREATE TRIGGER tree_heads_append_only_insert BEFORE INSERT ON tree_heads WHEN "
        "EXISTS (SELECT 1 FROM tree_heads WHERE batch_id = NEW.batch_id) OR EXISTS "
        "(SELECT 1 FROM tree_heads WHERE tree_size = NEW.tree_size) BEGIN SELECT "
        "RAISE(ABORT, 'tree_heads is append-only: a row with this key exists'); END")
    assert guards["log_origin_append_only_insert"].sql == (
        "CREATE TRIGGER log_origin_append_only_insert BEFORE INSERT ON log_origin WHEN "
        "EXISTS (SELECT 1 FROM log_origin) OR NEW.rowid <> -1 BEGIN SELECT RAISE(ABORT, "
        "'log_origin is append-only: a row with this key exists'); END")
    assert guards["turns_append_only_delete"].sql == (
        "CREATE TRIGGER turns_append_only_delete BEFORE DELETE ON turns "
        "BEGIN SELECT RAISE(ABORT, 'turns is append-only: DELETE rejected'); END")


def test_a_fresh_sqlite_store_carries_exactly_the_expected_triggers(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    AuditStore.open(url).close()
    stored = {name: (table, sql) for name, table, sql in raw_query(  # type: ignore[misc]
        url, "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")}
    assert stored == {g.name: (g.table, g.sql) for g in expected_sqlite_guards().values()}


@pytest.mark.postgres
def test_a_fresh_postgres_store_carries_exactly_the_expected_triggers(pg_url: str) -> None:
    AuditStore.open(pg_url).close()
    stored = {row[0]: row[1:] for row in raw_query(pg_url, _PG_TRIGGERS)}
    body = (" BEGIN RAISE EXCEPTION '% is append-only: % rejected', TG_TABLE_NAME, TG_OP "
            "USING ERRCODE = 'restrict_violation'; END ")
    assert body == PG_FUNCTION_BODY
    assert stored == {
        g.name: (g.table, g.tgtype, "O", "core_audit_reject_change", body, True)
        for g in expected_pg_guards().values()}
    # BEFORE ... FOR EACH ROW: update 19, delete 11; BEFORE TRUNCATE, per statement: 34.
    assert [stored[f"turns_append_only_{op}"][1] for op in ("update", "delete", "truncate")] == [
        19, 11, 34]
