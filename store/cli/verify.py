"""`core-audit verify`: is the store what was appended?"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import orjson

from store.cli.options import db_option, say_if_immutable
from store.errors import CheckpointError, StoreError, one_line
from store.model.checkpoint import (
    MAX_NOTE_BYTES,
    Checkpoint,
    SignerKey,
    VerifierKey,
)
from store.model.verify_record import is_record, open_record_sums, record_note
from store.model.witness_policy import WitnessPolicy, checkpoint_under

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def read_small_text(path: Path, what: str) -> str:
    """A checkpoint or key file: bounded, UTF-8; a clean error otherwise."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_NOTE_BYTES + 1)
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot read the {what}: {exc.strerror}") from exc
    if len(data) > MAX_NOTE_BYTES:
        raise click.ClickException(f"{path}: the {what} is larger than {MAX_NOTE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{path}: the {what} is not UTF-8 text") from exc


def load_checkpoint(path: Path, policy: WitnessPolicy | None) -> tuple[Checkpoint, str]:
    """The checkpoint a file holds and who signed it; with a policy, only if a listed log
    key signed exactly this text and the witness quorum cosigned it."""
    text = read_small_text(path, "checkpoint")
    try:
        return checkpoint_under(policy, text)
    except (CheckpointError, ValueError) as exc:
        raise click.ClickException(f"{path}: {exc}") from exc


F = TypeVar("F", bound=Callable[..., Any])


def policy_options(command: F) -> F:
    options = [
        click.option("--key", "keys", type=_FILE, multiple=True, metavar="PREFIX.pub",
                     help="The log's verifier key: the checkpoint must carry its valid "
                          "signature (repeat while keys rotate: any one will do)."),
        click.option("--witness-key", "witness_keys", multiple=True, metavar="KEY",
                     help="A witness's cosigning key (text or a file; repeatable): its "
                          "cosignature is checked and counted."),
        click.option("--quorum", type=click.IntRange(0), default=None, metavar="N",
                     help="How many of the --witness-key witnesses must have cosigned "
                          "(default: all of them)."),
        click.option("--policy", "policy_file", type=_FILE, metavar="FILE",
                     help="A C2SP tlog-policy file (log, witness, group and quorum lines) "
                          "instead of --key, --witness-key and --quorum."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def load_verifier(text_or_path: str, what: str = "verifier key") -> VerifierKey:
    """A verifier key given inline (`name+hash+base64`) or as a file holding one."""
    path = Path(text_or_path)
    text = read_small_text(path, what) if "+" not in text_or_path and path.is_file() \
        else text_or_path
    try:
        return VerifierKey.parse(text.strip())
    except CheckpointError as exc:
        raise click.ClickException(f"{what} {text_or_path[:80]!r}: {exc}") from exc


def build_policy(keys: tuple[Path, ...], witness_keys: tuple[str, ...], quorum: int | None,
                 policy_file: Path | None) -> WitnessPolicy | None:
    """The policy the options describe; None when no key was given (signatures unchecked)."""
    if policy_file is not None:
        if keys or witness_keys or quorum is not None:
            raise click.UsageError("--policy replaces --key, --witness-key and --quorum")
        try:
            return WitnessPolicy.parse(read_small_text(policy_file, "policy"))
        except CheckpointError as exc:
            raise click.ClickException(f"{policy_file}: {exc}") from exc
    if not keys:
        if witness_keys or quorum is not None:
            raise click.UsageError("--witness-key and --quorum need --key (the log's key)")
        return None
    logs = [load_verifier(str(path)) for path in keys]
    witnesses = [load_verifier(text, "witness key") for text in witness_keys]
    try:
        return WitnessPolicy.of_keys(logs, witnesses, quorum)
    except CheckpointError as exc:
        raise click.ClickException(str(exc)) from exc


def kept_signature_problems(store: Any, origin: str | None, policy: WitnessPolicy
                            ) -> tuple[list[Any], int]:
    """Every kept checkpoint row and cosignature row checked against the keys given, and how
    many kept checkpoints there are."""
    from store.db.log.kept_checkpoints import count_kept_checkpoints
    from store.db.verify.signature_checks import signature_problems

    with store.engine.connect() as connection:
        return (list(signature_problems(connection, origin, policy.logs,
                                        list(policy.witnesses.values()))),
                count_kept_checkpoints(connection))


def _not_intact(problems: list[str], as_json: bool) -> NoReturn:
    problems = [one_line(problem) for problem in problems]
    if as_json:
        click.echo(orjson.dumps({"intact": False, "problems": problems}).decode())
    else:
        click.echo(f"NOT intact: {problems[0]}", err=True)
        for problem in problems[1:]:
            click.echo(f"  also {problem}", err=True)
    sys.exit(1)


def load_record_key(text_or_path: str) -> tuple[SignerKey | None, VerifierKey]:
    """The auditor's record key: a signer key (it can write records) or its verifier key."""
    path = Path(text_or_path)
    text = read_small_text(path, "record key") if path.is_file() else text_or_path
    if text.strip().startswith("PRIVATE+KEY+"):
        try:
            signer = SignerKey.parse(text.strip())
        except CheckpointError as exc:
            raise click.ClickException(f"record key {text_or_path[:80]!r}: {exc}") from exc
        return signer, signer.verifier
    return None, load_verifier(text_or_path, "record key")


def load_record(path: Path, verifier: VerifierKey | None) -> Checkpoint:
    return load_record_sums(path, verifier)[0]


def load_record_sums(path: Path, verifier: VerifierKey | None
                     ) -> tuple[Checkpoint, dict[str, tuple[int, ...]]]:
    """The record's tree and the derived tables' sums it keeps."""
    try:
        return open_record_sums(read_small_text(path, "checkpoint"), verifier)
    except CheckpointError as exc:
        raise click.ClickException(f"{path}: {exc}") from exc


def write_record(path: Path, note: str) -> None:
    """Replace `path` whole (a crash leaves the old record or the new, never half of one)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(note, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise click.ClickException(f"{path}: cannot write the record: {exc.strerror}") from exc


@click.command()
@db_option
@click.option("--checkpoint", "checkpoint_file", type=_FILE, metavar="FILE",
              help="A C2SP checkpoint kept earlier: the store must extend its tree. With "
                   "--record-key, a record an earlier full verify wrote (--record): only the "
                   "leaves after it are checked.")
@policy_options
@click.option("--quick", is_flag=True,
              help="Only the checkpoint's consistency proof (O(log n)), no full recompute.")
@click.option("--record", "record_file", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE",
              help="After a full verify that finds the store intact, write FILE: the tree it "
                   "recomputed, signed with --record-key (keep it with the auditor, not "
                   "beside the store).")
@click.option("--record-key", metavar="KEY",
              help="The auditor's record key (`core-audit keygen`): its .key to write a "
                   "--record; its .key or .pub (file or text) to check one given as "
                   "--checkpoint.")
@click.option("--jobs", type=click.IntRange(1), default=None, metavar="N",
              help="Worker processes for the O(n) checks (default: one a core; 1: all in "
                   "this process). The report is the same whatever N.")
@click.option("--json", "as_json", is_flag=True,
              help='Print one JSON object: {"intact", "tree_size", "root_hash", ...} or '
                   '{"intact": false, "problems"}.')
def verify(db: str | None, checkpoint_file: Path | None, keys: tuple[Path, ...],
           witness_keys: tuple[str, ...], quorum: int | None, policy_file: Path | None,
           quick: bool, record_file: Path | None, record_key: str | None, jobs: int | None,
           as_json: bool) -> None:
    """Recompute every leaf, the tree and its heads from the rows; check keys, triggers and
    the file; with --checkpoint, prove the store extends it. Exit 1 if anything is wrong.

    One row a leaf, one leaf a row; every stored subtree and each batch's tree head; every
    content-addressed key (residual, assessment, surface, sighting and turn ids) from the
    row's content; every foreign key, each table's primary key and indexes; the append-only
    triggers' definitions (SQLite: their stored SQL; PostgreSQL: table, events, enabled state
    and the function's body); the whole schema against the one the head revision creates
    (tables, columns with type, nullability and default, keys, unique constraints, indexes,
    foreign keys, views; PostgreSQL: UNLOGGED, row-level security and policies, rules, the
    functions' SECURITY DEFINER and SET options, same-named functions on the search path),
    anything extra or missing named; SQLite's integrity_check and the committed frames of
    its -wal SQLite would ignore or drop (a header it rejects, frames after a checksum break,
    a last frame cut short); each batch's residual tallies and sighting counts; each journal
    turn's fields and construction status and assessment links, re-derived from its line. The
    first problem is named by seq, table and key (or the batch whose tree head its rows no
    longer make). A store that cannot be opened or read prints NOT intact: REASON, exit 1.
    Every checkpoint the store kept must be one its log extends.

    With --key (or --policy) the checkpoint must be signed by a listed log key and cosigned
    by the witness quorum; the output says which key signed and who cosigned. With or without
    --checkpoint, the keys also check every checkpoint the store kept: each row's note must be
    signed by a listed log key named for the store's origin, each kept cosignature must verify
    against the listed witness key of its name (cosignatures of witnesses not listed are not
    checked); a row that does not is named. Kept checkpoints must grow with their ids.

    Incremental: `--record FILE --record-key auditor.key` after a full verify keeps the tree
    it recomputed; a later `--checkpoint FILE --record-key auditor.pub` checks only what came
    after it, and that the derived rows under it still make the sums the record keeps
    (docs/transparency-log.md says what that trusts).
    """
    policy = build_policy(keys, witness_keys, quorum, policy_file)
    if quick and checkpoint_file is None:
        raise click.UsageError("--quick needs --checkpoint")
    signer, record_verifier = load_record_key(record_key) if record_key else (None, None)
    incremental = record_verifier is not None and checkpoint_file is not None
    if record_key and not (record_file or checkpoint_file):
        raise click.UsageError("--record-key needs --record (to write) or --checkpoint (to "
                               "check a record)")
    if record_file is not None:
        if signer is None:
            raise click.UsageError("--record needs --record-key with the auditor's signer "
                                   "key (the .key `core-audit keygen` wrote)")
        if quick or incremental:
            raise click.UsageError("--record keeps what a full verify recomputed: not with "
                                   "--quick, nor with a record as --checkpoint")
    if incremental and (policy is not None or quick):
        raise click.UsageError("a record as --checkpoint is checked with --record-key alone")
    since = checkpoint = None
    since_sums: dict[str, tuple[int, ...]] = {}
    signed_by = ""
    mode_note = ""
    if incremental:
        assert checkpoint_file is not None
        since, since_sums = load_record_sums(checkpoint_file, record_verifier)
    elif checkpoint_file is not None:
        text = read_small_text(checkpoint_file, "checkpoint")
        if is_record(text) and policy is None:
            checkpoint = load_record(checkpoint_file, None)
            mode_note = (f"{checkpoint_file} is a verify record, checked as a plain "
                         "checkpoint with a full recompute: give --record-key to check only "
                         "what came after it")
        else:
            checkpoint, signed_by = load_checkpoint(checkpoint_file, policy)
    try:
        from store.db.audit_store import AuditStore
        from store.db.verify.check_processes import available_cores

        with AuditStore.open(db, read_only=True) as store:
            say_if_immutable(store.engine)
            try:
                origin = store.origin()
            except StoreError:
                origin = None  # the report names what is wrong with log_origin
            if since is not None:
                expected = origin or store.provisional_origin()
                if since.origin != expected:
                    _not_intact([f"the record is of log {since.origin!r}, this store is "
                                 f"{expected!r}"], as_json)
            if checkpoint is not None and origin is not None and checkpoint.origin != origin:
                _not_intact([f"the checkpoint is of log {checkpoint.origin!r}, this store is "
                             f"{origin!r}"], as_json)
            report = store.verify(checkpoint, quick=quick, jobs=jobs or available_cores(),
                                  since=since, since_sums=since_sums if since else None,
                                  record=record_file is not None)
            kept_count = None
            if policy is not None:
                kept_signatures, kept_count = kept_signature_problems(store, origin, policy)
                report.problems.extend(kept_signatures)
            if report.intact and record_file is not None and signer is not None:
                tip = report.tip
                assert tip is not None
                write_record(record_file, record_note(
                    Checkpoint(origin or store.provisional_origin(), tip.size, tip.root),
                    signer, report.derived_sums))
    except StoreError as exc:  # unopenable or unreadable: not intact either, and no traceback
        _not_intact([str(exc)], as_json)
    if not report.intact:
        problems = [str(p) for p in report.problems]
        _not_intact(problems if as_json else [f"first problem at {problems[0]}",
                                              *problems[1:]], as_json)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    if mode_note:
        click.echo(f"note: {mode_note}", err=True)
    if since is not None:
        click.echo(f"note: incremental: the first {since.size} leaves were not re-read: their "
                   "rows, content ids and foreign keys are trusted as the full verify "
                   f"recorded in {checkpoint_file} found them (their derived rows must still "
                   "make the sums it keeps), and SQLite's integrity_check did not run; verify "
                   "without --record-key recomputes everything", err=True)
    tip = report.tip
    assert tip is not None
    if as_json:
        click.echo(orjson.dumps({
            "intact": True, "tree_size": tip.size, "root_hash": tip.root_hex,
            "recomputed": not quick,
            "extends_checkpoint": checkpoint.size if checkpoint else None,
            **({"incremental_since": since.size} if since else {})}).decode())
        return
    extends = f"; extends the checkpoint of size {checkpoint.size}" if checkpoint else ""
    if signed_by:
        extends = f"; checkpoint {signed_by}{extends}"
    if since is not None:
        assert record_verifier is not None
        checked = (f"leaves {since.size}..{tip.size - 1} checked" if tip.size > since.size
                   else "no leaves")
        extends = (f"; {checked} after the verified tree of size {since.size} (record signed "
                   f"by {record_verifier.name}), which it extends")
    if kept_count is not None:
        extends += (f"; {kept_count} kept checkpoint(s) signed by the log key given" +
                    (" and their cosignatures by the witnesses given verified"
                     if policy is not None and policy.witnesses else ""))
    if record_file is not None:
        extends += f"; record written to {record_file}"
    # --quick recomputed nothing: it checked the tree head (of that many leaves), not leaves.
    what = f"tree head of {tip.size} leaves" if quick else f"{tip.size} leaves"
    click.echo(f"intact: {what}, root {tip.root_hex}{extends}")
