"""A record page's "download proof": the C2SP tlog-proof bundle `prove --bundle` writes, byte
for byte, against the newest kept signed checkpoint (at asOf=N, the kept one of size N), which
`verify-proof` accepts offline with the log's key (and the witnesses' when cosigned); and the
page saying plainly when no signed checkpoint holds the record.

The store: the three example files and the leaf choosing the origin after the first (tree
heads 18 and 19, 38, 67); checkpoint #1 signed at 19 and
cosigned by a witness, #2 signed at 38 with no cosignature, none at 67."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import EXAMPLE_FILES
from cli_runs import cli
from pages_html import links, text
from spec_values import DELTA_QUANTITY_ID
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore
from store.db.log.kept_checkpoints import kept_checkpoint
from store.model.checkpoint import COSIGNATURE_V1, SignerKey
from store.model.cosignature import cosign

ORIGIN = "audit.example/console"
LOG = SignerKey(ORIGIN, b"\x03" * 32)
WITNESS = SignerKey("w.example", b"\x07" * 32, COSIGNATURE_V1)
SIZES = (19, 38, 67)  # the tree heads after each example file


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    folder = tmp_path_factory.mktemp("bundles")
    url = f"sqlite:///{folder / 'audit.db'}"
    (folder / "log.key").write_text(str(LOG) + "\n", encoding="utf-8")
    (folder / "log.pub").write_text(str(LOG.verifier) + "\n", encoding="utf-8")
    for number, path in enumerate(EXAMPLE_FILES):
        assert cli("ingest", "--db", url, path).exit_code == 0
        if number == 0:
            assert cli("checkpoint", "--db", url, "--key", folder / "log.key", "--origin",
                       ORIGIN).exit_code == 0
            with AuditStore.open(url) as store:
                kept = store.execute(kept_checkpoint, 1)
                body = kept.signed_note[:kept.signed_note.index("\n\n") + 1]
                store.add_cosignatures(1, [cosign(body, WITNESS, 1700000000)],
                                       [WITNESS.verifier])
        if number == 1:
            assert cli("checkpoint", "--db", url, "--key", folder / "log.key").exit_code == 0
    return {"url": url, "dir": folder}


@pytest.fixture(scope="module")
def client(signed: dict[str, Path | str]) -> Iterator[TestClient]:
    with AuditStore.open(str(signed["url"]), read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as client:
        yield client


def bundle_link(page: str) -> str | None:
    found = [h for h in links(page) if ".tlog-proof" in h]
    assert len(found) <= 1, found
    return found[0] if found else None


def prove_bundle(signed: dict[str, Path | str], *args: str) -> bytes:
    out = Path(signed["dir"]) / "prove.tlog-proof"
    made = cli("prove", "--db", signed["url"], *args, "--bundle", out)
    assert made.exit_code == 0, made.output
    return out.read_bytes()


def verify(path: Path, *args: str | Path) -> tuple[int, str]:
    result = cli("verify-proof", path, *args)
    return result.exit_code, result.stdout + result.stderr


def test_the_download_is_prove_bundle_byte_for_byte_and_verifies_offline(
        client: TestClient, signed: dict[str, Path | str], tmp_path: Path) -> None:
    page = client.get(f"/residuals/{DELTA_QUANTITY_ID}")
    href = bundle_link(page.text)
    assert href == f"/proofs/residuals/{DELTA_QUANTITY_ID}.tlog-proof"
    shown = text(page.text)
    assert ("signed checkpoint #2 of tree size 38, signed by audit.example/console, with no "
            "witness cosignature") in shown
    assert (f"core-audit prove --residual {DELTA_QUANTITY_ID} --bundle "
            f"residual-{DELTA_QUANTITY_ID[:16]}-38.tlog-proof") in shown
    # This page proves at the newest head (67); the signed proof is at 38: linked.
    assert f"/residuals/{DELTA_QUANTITY_ID}?asOf=38" in links(page.text)
    download = client.get(href)
    assert download.status_code == 200
    assert download.headers["content-disposition"] == (
        f'attachment; filename="residual-{DELTA_QUANTITY_ID[:16]}-38.tlog-proof"')
    assert download.content == prove_bundle(signed, "--residual", DELTA_QUANTITY_ID)
    assert download.content.startswith(b"c2sp.org/tlog-proof@v1\nextra ")
    assert f"\n\n{ORIGIN}\n38\n".encode() in download.content
    saved = tmp_path / "residual.tlog-proof"
    saved.write_bytes(download.content)
    code, said = verify(saved, "--key", Path(signed["dir"]) / "log.pub")
    assert code == 0, said
    assert said.startswith("valid: leaf ") and "is in the tree of size 38" in said


@pytest.mark.parametrize("where", ["extra", "path", "signature"])
def test_an_altered_byte_of_the_download_is_refused(
        client: TestClient, signed: dict[str, Path | str], tmp_path: Path, where: str) -> None:
    body = client.get(f"/proofs/residuals/{DELTA_QUANTITY_ID}.tlog-proof").content
    lines = body.split(b"\n")
    at = {"extra": 1, "path": 3, "signature": len(lines) - 2}[where]
    line = bytearray(lines[at])
    spot = len(line) // 2
    line[spot] = ord("A") if line[spot] != ord("A") else ord("B")
    lines[at] = bytes(line)
    altered = tmp_path / "altered.tlog-proof"
    altered.write_bytes(b"\n".join(lines))
    code, said = verify(altered, "--key", Path(signed["dir"]) / "log.pub")
    assert code == 1
    assert said.startswith("invalid: ")


def test_as_of_a_signed_size_the_download_is_the_cosigned_checkpoints_bundle(
        client: TestClient, signed: dict[str, Path | str], tmp_path: Path) -> None:
    page = client.get(f"/residuals/{DELTA_QUANTITY_ID}?asOf=19")
    assert page.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "signed checkpoint #1 of tree size 19, signed by audit.example/console, cosigned " \
           "by w.example" in text(page.text)
    assert f"--tree-size 19 --bundle residual-{DELTA_QUANTITY_ID[:16]}-19" in text(page.text)
    href = bundle_link(page.text)
    assert href == f"/proofs/residuals/{DELTA_QUANTITY_ID}.tlog-proof?asOf=19"
    download = client.get(href)
    assert download.content == prove_bundle(signed, "--residual", DELTA_QUANTITY_ID,
                                            "--tree-size", "19")
    assert download.content.endswith(b"\n\xe2\x80\x94 w.example " +
                                     download.content.rsplit(b" ", 1)[1])
    saved = tmp_path / "at18.tlog-proof"
    saved.write_bytes(download.content)
    key = Path(signed["dir"]) / "log.pub"
    code, said = verify(saved, "--key", key, "--witness-key", str(WITNESS.verifier),
                        "--quorum", "1")
    assert code == 0, said
    assert "is in the tree of size 19" in said and "cosigned by w.example" in said
    # The checkpoint at 38 has no cosignature: a quorum of one refuses its bundle.
    newest = tmp_path / "at37.tlog-proof"
    newest.write_bytes(client.get(f"/proofs/residuals/{DELTA_QUANTITY_ID}.tlog-proof").content)
    code, said = verify(newest, "--key", key, "--witness-key", str(WITNESS.verifier),
                        "--quorum", "1")
    assert code == 1 and "quorum" in said


def test_a_size_with_no_signed_checkpoint_says_so_and_offers_none(
        client: TestClient) -> None:
    page = client.get(f"/residuals/{DELTA_QUANTITY_ID}?asOf=67")
    assert page.status_code == 200
    assert bundle_link(page.text) is None
    assert ("No signed proof to download: this store keeps no signed checkpoint of tree size "
            "67") in text(page.text)
    assert f"/residuals/{DELTA_QUANTITY_ID}?asOf=38" in links(page.text)
    # The newest head may still be signed: its page is not cached as immutable.
    assert page.headers["cache-control"] == "no-cache"
    download = client.get(f"/proofs/residuals/{DELTA_QUANTITY_ID}.tlog-proof?asOf=67")
    assert download.status_code == 404
    assert "no kept signed checkpoint of tree size 67" in download.text


def test_a_record_newer_than_the_newest_signed_checkpoint_says_so(
        client: TestClient) -> None:
    surfaces = client.get("/surfaces")
    surface = re.findall(r'href="(/surfaces/[0-9a-f]{64})"', surfaces.text)[0]
    page = client.get(surface)
    assert bundle_link(page.text) is None
    assert re.search(r"No signed proof to download: leaf \d+ was appended after the newest "
                     r"signed checkpoint \(#2, tree size 38\)", text(page.text))
    download = client.get(surface.replace("/surfaces/", "/proofs/surfaces/") + ".tlog-proof")
    assert download.status_code == 404
    assert "was appended after the kept checkpoint of size 38" in download.text


def test_a_batch_page_offers_its_bundle_as_prove_index_writes_it(
        client: TestClient, signed: dict[str, Path | str]) -> None:
    page = client.get("/batches/1")
    index = re.search(r'data-leaf-index="(\d+)"', page.text)
    assert index is not None
    assert f"core-audit prove --index {index.group(1)} --bundle batch-1-38" in text(page.text)
    download = client.get("/proofs/batches/1.tlog-proof")
    assert download.content == prove_bundle(signed, "--index", index.group(1))


def test_a_store_with_no_signed_checkpoint_says_how_to_make_one(console: TestClient) -> None:
    page = console.get(f"/residuals/{DELTA_QUANTITY_ID}")
    assert bundle_link(page.text) is None
    assert ("No signed proof to download: this store keeps no signed checkpoint yet: "
            "`core-audit checkpoint --key K` signs the newest tree head and keeps it."
            ) in text(page.text)
    assert console.get(f"/proofs/residuals/{DELTA_QUANTITY_ID}.tlog-proof").status_code == 404


def test_signing_a_checkpoint_changes_the_etag_of_the_newest_pages(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    key = tmp_path / "log.key"
    key.write_text(str(LOG) + "\n", encoding="utf-8")
    assert cli("ingest", "--db", url, EXAMPLE_FILES[0]).exit_code == 0
    with AuditStore.open(url, read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as client:
        path = f"/residuals/{DELTA_QUANTITY_ID}"
        before = client.get(path)
        assert bundle_link(before.text) is None
        assert cli("checkpoint", "--db", url, "--key", key, "--origin", ORIGIN).exit_code == 0
        after = client.get(path, headers={"if-none-match": before.headers["etag"]})
        assert after.status_code == 200  # not a 304: the page now offers the signed proof
        assert after.headers["etag"] != before.headers["etag"]
        assert bundle_link(after.text) == f"/proofs/residuals/{DELTA_QUANTITY_ID}.tlog-proof"


def test_a_record_page_shows_the_signed_checkpoint_and_never_a_key_of_its_own(
        client: TestClient, signed: dict[str, Path | str]) -> None:
    """The browser checks the page's signed checkpoint against keys its auditor pinned: the
    page carries the note as the log signed it (with its cosignatures) and no key at all."""
    with AuditStore.open(str(signed["url"]), read_only=True) as db:
        newest = db.execute(kept_checkpoint, 2)
        first = db.execute(kept_checkpoint, 1)
    page = client.get(f"/residuals/{DELTA_QUANTITY_ID}").text
    assert f'<pre class="signed-checkpoint" data-size="38">{newest.note}</pre>' in page
    assert "/log/checkpoint" in links(page)
    assert client.get("/log/checkpoint").text == newest.note
    # asOf=19 (batch 1 and the origin's batch): the newest kept checkpoint of a tree of at
    # most 19 leaves, with its cosignature.
    batch = client.get("/batches/1?asOf=19").text
    assert f'data-size="19">{first.note}</pre>' in batch and "\u2014 w.example " in first.note
    for path in ("/", "/log", "/keys", f"/residuals/{DELTA_QUANTITY_ID}", "/batches/1"):
        shown = client.get(path).text
        assert str(LOG.verifier) not in shown and str(WITNESS.verifier) not in shown, path
        assert str(LOG.verifier).rsplit("+", 1)[1] not in shown, path


def test_the_consistency_json_is_the_rfc_9162_proof_between_two_sizes(
        client: TestClient) -> None:
    from store.model.merkle import consistency_holds

    answer = client.get("/proofs/consistency.json?from=19&to=67")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    proof = answer.json()
    assert sorted(proof) == ["from", "from_root", "path", "to", "to_root"]
    assert (proof["from"], proof["to"]) == (19, 67)
    log = client.get("/log").text
    assert proof["to_root"] in log
    assert consistency_holds(19, 67, bytes.fromhex(proof["from_root"]),
                             bytes.fromhex(proof["to_root"]),
                             [bytes.fromhex(h) for h in proof["path"]])
    assert client.get("/proofs/consistency.json?from=38&to=38").json()["path"] == []
    for query, parameter in (("from=38&to=19", "from"), ("from=1&to=68", "to"),
                             ("from=1", "to"), ("from=1&to=2&asOf=3", "asOf")):
        refused = client.get(f"/proofs/consistency.json?{query}")
        assert refused.status_code == 400, query
        assert f"<code>{parameter}</code>" in refused.text or parameter in text(refused.text)
