"""One error root: every error the package raises for a user is a `CoreAuditError` with a
one-line `diagnostics()`; the log's verifiers raise saying what was expected and what was
found; the CLI shows the diagnostics, never a traceback."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import pkgutil

import click
import pytest
from cli_runs import cli

import store
from store import (
    BatchRejected,
    CheckpointError,
    CoreAuditError,
    ProofError,
    QueryError,
    SignatureError,
    StoreError,
    VerificationError,
    check_proof,
    open_checkpoint,
    verify_consistency,
    verify_inclusion,
)
from store.cli import main
from store.model.checkpoint import Checkpoint, SignerKey, generate_key, sign

# Defects of the code's own declarations, found at import: for a developer, not a user.
# RecordKindError: a declaration a developer got wrong. RequestRefused: Starlette's
# HTTPException, the server's 4xx answer before GraphQL runs, never raised to a caller.
DEVELOPER_ERRORS = {"RecordKindError", "RequestRefused"}


def _leaf(n: int) -> bytes:
    return hashlib.sha256(b"\x00" + bytes([n])).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


# RFC 9162 by hand: a tree of 3 leaves is node(node(l0, l1), l2).
L0, L1, L2 = _leaf(0), _leaf(1), _leaf(2)
ROOT2 = _node(L0, L1)
ROOT3 = _node(ROOT2, L2)


def test_the_tree_of_errors() -> None:
    for error in (StoreError, QueryError, BatchRejected, VerificationError):
        assert issubclass(error, CoreAuditError)
    assert issubclass(CheckpointError, VerificationError)
    assert issubclass(ProofError, VerificationError)
    assert issubclass(SignatureError, CheckpointError)


def test_every_public_error_class_of_the_package_descends_from_the_root() -> None:
    outside = []
    for module_info in pkgutil.walk_packages(store.__path__, "store."):
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, Exception)
                    and value.__module__ == module.__name__ and not name.startswith("_")
                    and not issubclass(value, (CoreAuditError, click.ClickException))
                    and name not in DEVELOPER_ERRORS):
                outside.append(f"{module.__name__}.{name}")
    assert outside == []


def test_diagnostics_is_one_line() -> None:
    assert StoreError("cannot open\n  the store").diagnostics() == "cannot open the store"


def test_an_inclusion_proof_verifies() -> None:
    verify_inclusion(2, 3, L2, [ROOT2], ROOT3)
    verify_inclusion(0, 3, L0, [L1, L2], ROOT3)


def test_a_wrong_root_says_which_root_the_path_leads_to_and_which_was_expected() -> None:
    wrong = _node(L2, ROOT2)
    with pytest.raises(ProofError) as raised:
        verify_inclusion(2, 3, L2, [ROOT2], wrong)
    assert raised.value.diagnostics() == (
        f"inclusion path leads to root {ROOT3.hex()}, expected {wrong.hex()}")


@pytest.mark.parametrize(("args", "message"), [
    ((3, 3, L2, [ROOT2], ROOT3), "leaf index 3 is not in a tree of 3 leaves"),
    ((2, 3, L2, [], ROOT3), "inclusion path has 0 hashes, too few for leaf 2 of a tree of 3"),
    ((2, 3, L2, [ROOT2, L0], ROOT3), "inclusion path has 2 hashes, more than the tree's shape"),
    ((2, 3, L2[:31], [ROOT2], ROOT3), "leaf_hash: expected a 32-byte hash, got 31 bytes"),
])
def test_a_malformed_inclusion_proof_says_what_is_wrong(args: tuple, message: str) -> None:
    with pytest.raises(ProofError, match=message):
        verify_inclusion(*args)


def test_a_consistency_proof_verifies_and_a_wrong_root_says_expected_vs_got() -> None:
    verify_consistency(2, 3, ROOT2, ROOT3, [L2])
    with pytest.raises(ProofError) as raised:
        verify_consistency(2, 3, ROOT2, ROOT2, [L2])
    assert raised.value.diagnostics() == (
        f"consistency path leads to second root {ROOT3.hex()}, expected {ROOT2.hex()}")
    with pytest.raises(ProofError, match="a tree of 2 leaves cannot extend one of 3"):
        verify_consistency(3, 2, ROOT3, ROOT2, [])


def test_open_checkpoint_checks_the_signature_of_the_key_given() -> None:
    signer_text, verifier_text = generate_key("auditor.example")
    note = sign(Checkpoint("example.org/log", 3, ROOT3), SignerKey.parse(signer_text))
    assert open_checkpoint(note, verifier_text) == Checkpoint("example.org/log", 3, ROOT3)
    assert open_checkpoint(note).size == 3
    _, other = generate_key("auditor.example")
    with pytest.raises(SignatureError, match="not signed by key"):
        open_checkpoint(note, other)
    with pytest.raises(CheckpointError, match="does not end with a newline"):
        open_checkpoint(note.rstrip("\n"))


def test_check_proof_takes_the_size_and_root_from_the_checkpoint() -> None:
    checkpoint = Checkpoint("example.org/log", 3, ROOT3)
    entry = "a leaf"
    leaf = hashlib.sha256(b"\x00" + entry.encode()).digest()
    root = _node(ROOT2, leaf)
    proof = {"leaf_index": 2, "tree_size": 3, "entry": entry, "leaf_hash": leaf.hex(),
             "inclusion_path": [ROOT2.hex()], "root_hash": root.hex()}
    assert check_proof(proof, Checkpoint("o", 3, root)).startswith("leaf 2 is in the tree of")
    with pytest.raises(ProofError, match="the checkpoint is size 3, root " + ROOT3.hex()):
        check_proof(proof, checkpoint)


def test_the_cli_shows_an_error_as_one_line_without_a_traceback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**_: object) -> None:
        raise StoreError("the store is\ndamaged at seq 7")

    monkeypatch.setattr(main.commands["schema"], "callback", broken)
    result = cli("schema")
    assert result.exit_code == 1
    assert result.stderr == "Error: the store is damaged at seq 7\n"
    assert "Traceback" not in result.stdout + result.stderr
