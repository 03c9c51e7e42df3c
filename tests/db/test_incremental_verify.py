"""`verify --record FILE --record-key auditor.key` keeps the tree a full verify recomputed;
`verify --checkpoint FILE --record-key auditor.pub` then checks only what came after it: the
new leaves, their content ids, the stored tree rebuilt at the recorded size and the
consistency proof to the head. It refuses a record of another log, one its key did not sign,
and one larger than the tree; the same report with one process or two."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest
from cli_runs import cli
from jsonl_files import write_jsonl
from store_support import (
    distinct_frames,
    first_problem,
    raw_connect,
    triggers_bypassed,
    verify_both_ways,
)

from store.model.verify_record import RECORD_HEADER

ORIGIN = "audit.example.org/core"
NOT_EXTENDED = ("NOT intact: first problem at log checkpoint 19: the store does not extend "
                "the checkpoint's tree (history was rewritten)")


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    assert cli("keygen", "auditor.example", "--out", tmp_path / "auditor").exit_code == 0
    return tmp_path / "auditor"


def _ingest(store: Path, tmp_path: Path, count: int, tag: str) -> None:
    frames = write_jsonl(tmp_path / f"{tag}.jsonl", distinct_frames(count, tag))
    result = cli("ingest", "--db", store, frames)
    assert result.exit_code == 0, result.stderr


def _record(store: Path, keys: Path, record: Path) -> None:
    result = cli("verify", "--db", store, "--record", record, "--record-key", f"{keys}.key")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith(f"; record written to {record}\n")


@pytest.fixture
def recorded(examples_store: Path, keys: Path, tmp_path: Path) -> Path:
    """The examples store (18 leaves, and the leaf choosing its origin: 19) with a record of
    its full verify."""
    assert cli("checkpoint", "--db", examples_store, "--origin", ORIGIN).exit_code == 0
    _record(examples_store, keys, tmp_path / "verified.txt")
    return tmp_path / "verified.txt"


def _incremental(store: Path, record: Path, keys: Path):  # type: ignore[no-untyped-def]
    return verify_both_ways(store, "--checkpoint", record, "--record-key", f"{keys}.pub")


def test_the_record_is_the_recomputed_tree_signed_by_the_auditor(
        examples_store: Path, recorded: Path) -> None:
    lines = recorded.read_text().split("\n")
    assert RECORD_HEADER == "core-audit verified tree/v2\n"
    assert lines[0] == "core-audit verified tree/v2"
    # Per derived table: its rows under the tree, then each column's sum (texts: lengths).
    assert [line.split(" ")[:3] for line in lines[1:11]] == [
        ["derived", "log_subtrees", "0"],
        ["derived", "residual_record_tallies", "6"],  # each residual, by the batch storing it
        ["derived", "residual_tallies", "6"],
        ["derived", "residual_texts", "6"],  # one search text per residual
        ["derived", "sighting_counts", "6"], ["derived", "surface_texts", "0"],
        ["derived", "tree_heads", "2"],
        ["derived", "turn_fields", "0"],  # the frames of batch 1 hold no turn
        ["derived", "turn_tallies", "0"], ["derived", "turn_texts", "0"]]
    # Batch 1 (size 18) and the origin's batch 2 (size 19): batch ids 1 + 2, sizes 18 + 19,
    # two 64-digit roots.
    assert lines[7] == "derived tree_heads 2 3 37 128"
    assert lines[11:13] == [ORIGIN, "19"]
    root = cli("verify", "--db", examples_store).stdout.split("root ")[1].strip()
    assert base64.b64decode(lines[13]).hex() == root
    assert lines[14] == "" and lines[15].startswith("— auditor.example ")


def test_after_a_new_batch_only_the_new_leaves_are_checked(
        examples_store: Path, recorded: Path, keys: Path, tmp_path: Path) -> None:
    _ingest(examples_store, tmp_path, 3, "new")
    full = cli("verify", "--db", examples_store).stdout
    size = int(full.split(" ")[1])
    result = _incremental(examples_store, recorded, keys)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"{full.removesuffix(chr(10))}; leaves 19..{size - 1} checked after the verified tree "
        "of size 19 (record signed by auditor.example), which it extends\n")
    assert "the first 19 leaves were not re-read" in result.stderr
    assert "integrity_check did not run" in result.stderr
    as_json = _incremental(examples_store, recorded, keys).stdout  # the same, asked twice
    assert as_json == result.stdout


def test_a_forged_new_leaf_is_found(examples_store: Path, recorded: Path, keys: Path,
                                    tmp_path: Path) -> None:
    _ingest(examples_store, tmp_path, 3, "new")
    with triggers_bypassed(examples_store) as connection:
        seq, key = connection.execute(
            "SELECT seq, residual_id FROM contract_residuals WHERE seq > 19 ORDER BY seq"
        ).fetchone()
        connection.execute("UPDATE contract_residuals SET residual_code = 'forged' "
                           "WHERE residual_id = ?", (key,))
        connection.commit()
    result = _incremental(examples_store, recorded, keys)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[:2] == [
        NOT_EXTENDED,
        f"  also seq {seq}: contract_residuals {key}: residual_id is not the hash of its "
        "content"]


def test_a_forged_old_leaf_breaks_the_consistency_with_the_record(
        examples_store: Path, recorded: Path, keys: Path, tmp_path: Path) -> None:
    """A row under the record changed out of band, and history rebuilt on it: the stored
    log no longer makes the recorded root, so the store does not extend the verified tree."""
    _ingest(examples_store, tmp_path, 3, "new")
    with triggers_bypassed(examples_store) as connection:
        connection.execute("UPDATE contract_residuals SET explanation = 'forged' WHERE seq = 2")
        connection.commit()
    result = _incremental(examples_store, recorded, keys)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[:2] == [
        NOT_EXTENDED,
        "  also log checkpoint 19: the stored log's first 19 leaves no longer make the root "
        "the full verify recorded (changed since)"]


def test_a_forged_stored_subtree_under_the_record_is_found(
        db_path: Path, keys: Path, tmp_path: Path) -> None:
    _ingest(db_path, tmp_path, 40, "old")  # more than 256 leaves: stored subtrees
    _record(db_path, keys, tmp_path / "verified.txt")
    _ingest(db_path, tmp_path, 3, "new")
    connection = raw_connect(db_path)
    for name in ("log_subtrees_append_only_update",):
        connection.execute(f"DROP TRIGGER {name}")
    connection.execute("UPDATE log_subtrees SET hash = ? WHERE level = 8 AND start = 0",
                       ("00" * 32,))
    connection.commit()
    connection.close()
    result = cli("verify", "--db", db_path, "--checkpoint", tmp_path / "verified.txt",
                 "--record-key", f"{keys}.pub")
    assert result.exit_code == 1
    assert "the stored log's first" in result.stderr
    assert "no longer make the root the full verify recorded" in result.stderr


def test_a_record_larger_than_the_tree_is_refused(
        examples_store: Path, keys: Path, tmp_path: Path) -> None:
    older = tmp_path / "older.db"
    shutil.copyfile(examples_store, older)
    _ingest(examples_store, tmp_path, 3, "new")
    _record(examples_store, keys, tmp_path / "newer.txt")
    result = _incremental(older, tmp_path / "newer.txt", keys)
    assert result.exit_code == 1
    size = int(tmp_path.joinpath("newer.txt").read_text().split("\n")[12])
    assert first_problem(result.stderr) == (
        f"log checkpoint {size}: the checkpoint's tree has {size} leaves, the store 18 "
        "(rows were removed)")


def test_a_record_of_another_log_is_refused(
        recorded: Path, keys: Path, db_path: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    _ingest(other, tmp_path, 2, "other")
    result = _incremental(other, recorded, keys)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"NOT intact: the record is of log {ORIGIN!r}, this store "
                                    "is 'core-audit/")


def test_a_checkpoint_the_verify_did_not_record_is_refused(
        examples_store: Path, recorded: Path, keys: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text(cli("checkpoint", "--db", examples_store).stdout)
    refused = cli("verify", "--db", examples_store, "--checkpoint", plain,
                  "--record-key", f"{keys}.pub")
    assert refused.exit_code == 1
    assert refused.stderr.startswith(f"Error: {plain}: not a verify record")
    assert cli("keygen", "someone.else", "--out", tmp_path / "other").exit_code == 0
    other_key = cli("verify", "--db", examples_store, "--checkpoint", recorded,
                    "--record-key", tmp_path / "other.pub")
    assert other_key.exit_code == 1
    assert "the record is not signed by key someone.else" in other_key.stderr
    edited = tmp_path / "edited.txt"
    edited.write_text(recorded.read_text().replace("\n19\n", "\n18\n"))
    changed = cli("verify", "--db", examples_store, "--checkpoint", edited,
                  "--record-key", f"{keys}.pub")
    assert changed.exit_code == 1
    assert "signature by auditor.example does not verify" in changed.stderr


def test_a_record_without_its_key_is_a_plain_checkpoint_and_a_full_verify(
        examples_store: Path, recorded: Path) -> None:
    result = cli("verify", "--db", examples_store, "--checkpoint", recorded)
    assert result.exit_code == 0
    assert result.stdout.endswith("; extends the checkpoint of size 19\n")
    assert "is a verify record, checked as a plain checkpoint with a full recompute" \
        in result.stderr


def test_no_record_is_written_for_a_store_that_is_not_intact(
        examples_store: Path, keys: Path, tmp_path: Path) -> None:
    with triggers_bypassed(examples_store) as connection:
        connection.execute("UPDATE contract_residuals SET explanation = 'forged' WHERE seq = 2")
        connection.commit()
    record = tmp_path / "verified.txt"
    result = cli("verify", "--db", examples_store, "--record", record,
                 "--record-key", f"{keys}.key")
    assert result.exit_code == 1
    assert not record.exists()


@pytest.mark.parametrize(("extra", "message"), [
    (("--record-key", "KEY.pub"), "--record-key needs --record"),
    (("--record", "r.txt"), "--record needs --record-key"),
])
def test_record_options_out_of_place_are_refused(examples_store: Path, keys: Path,
                                                 extra: tuple[str, ...], message: str) -> None:
    args = [a.replace("KEY", str(keys)) for a in extra]
    result = cli("verify", "--db", examples_store, *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_forged_sighting_count_of_a_new_batch_is_found(
        examples_store: Path, recorded: Path, keys: Path, tmp_path: Path) -> None:
    _ingest(examples_store, tmp_path, 3, "new")
    with triggers_bypassed(examples_store) as connection:
        batch, seq = connection.execute(
            "SELECT batch_id, record_seq FROM sighting_counts "
            "ORDER BY batch_id DESC, record_seq LIMIT 1").fetchone()
        connection.execute("UPDATE sighting_counts SET sightings = 7 WHERE batch_id = ? "
                           "AND record_seq = ?", (batch, seq))
        connection.commit()
    result = _incremental(examples_store, recorded, keys)
    assert result.exit_code == 1
    assert (f"sighting_counts batch {batch} seq {seq}: row says contract_residuals, "
            "7 sightings; the sightings say contract_residuals, 1") in result.stderr


def test_derived_rows_added_to_old_batches_after_the_record_are_named(
        backend_url: str, keys: Path, tmp_path: Path) -> None:
    """Issue 32: append-only allows inserts, so a foreign connection can add a sighting count
    (1 -> 99,999, the top of MOST_SEEN) and a tally for a batch under the record; the record's
    sums of each derived table find them, and the incremental verify names them."""
    from sqlalchemy import create_engine, text

    for tag in ("old", "older"):
        _ingest_url(backend_url, tmp_path, tag)
    record = tmp_path / "verified.txt"
    _record(backend_url, keys, record)  # type: ignore[arg-type]
    engine = create_engine(backend_url)
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO sighting_counts VALUES (1, 999, 'contract_residuals', 99999)"))
        connection.execute(text(
            "INSERT INTO residual_tallies VALUES (2, 999, 'missing_binding', 'operator', "
            "'unary_delta_transition', NULL, 'forged', 1, 99999)"))
    engine.dispose()
    _ingest_url(backend_url, tmp_path, "new")

    result = _incremental(backend_url, record, keys)  # type: ignore[arg-type]

    assert result.exit_code == 1
    problems = result.stderr.splitlines()
    assert problems[0] == (
        "NOT intact: first problem at residual_tallies batches 1..2: "
        + problems[0].split("batches 1..2: ")[1])
    assert any(p.endswith("rows under the verified tree now, 6 when the record was written "
                          "(sums differ): rows were added or changed out of band since")
               and "residual_tallies batches 1..2: 7" in p for p in problems), problems
    assert any("sighting_counts batches 1..2: " in p and "(sums differ)" in p
               for p in problems), problems
    assert "  also sighting_counts batch 1 seq 999: row names no record this batch " \
           "sighted (added out of band)" in problems
    assert any(p.startswith("  also residual_tallies batch 2: ") for p in problems), problems
    assert cli("verify", "--db", backend_url).exit_code == 1  # a full verify agrees


def _ingest_url(url: str, tmp_path: Path, tag: str) -> None:
    frames = write_jsonl(tmp_path / f"{tag}.jsonl", distinct_frames(2, tag))
    result = cli("ingest", "--db", url, frames)
    assert result.exit_code == 0, result.stderr


def test_a_record_without_the_derived_sums_is_refused_by_the_incremental_verify(
        examples_store: Path, recorded: Path, keys: Path, tmp_path: Path) -> None:
    """A v1 record (before the sums): signed as it was, it is checked, and the incremental
    verify says it cannot vouch for the derived rows under it."""
    from store.model.checkpoint import SignerKey
    from store.model.verify_record import RECORD_HEADER_V1

    signer = SignerKey.parse(Path(f"{keys}.key").read_text().strip())
    body = "".join(line + "\n" for line in recorded.read_text().split("\n")[11:14])
    text = RECORD_HEADER_V1 + body
    from store.model.checkpoint import NoteSignature

    signature = NoteSignature(signer.name, signer.verifier.key_hash, signer.sign(text.encode()))
    old = tmp_path / "v1.txt"
    old.write_text(text + "\n" + signature.line())

    result = _incremental(examples_store, old, keys)

    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "NOT intact: first problem at residual_tallies: the verify record keeps no sums of this "
        "table (an older core-audit wrote it): run a full verify with --record again")
