"""The log as C2SP tlog-tiles over HTTP (/log/) and as static files (`tiles --out`): every
byte checked against hashes computed here from `core-audit log` alone; then Go's reference
client (golang.org/x/mod/sumdb/tlog's TileHashReader and note) reads it over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runs import cli
from go_interop import go_client, run_go, serving
from jsonl_files import write_jsonl
from rfc9162_reference import leaf, mth
from starlette.testclient import TestClient

from store.api.app import create_app
from store.db.audit_store import AuditStore

__all__ = ["go_client"]  # a fixture

REPO = Path(__file__).resolve().parents[2]
ORIGIN = "audit.example/log"


def ok(*args: str | Path) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def frames(count: int, tag: str) -> list[dict[str, object]]:
    """Refused frames, one assessment and its residual each: a few leaves a frame."""
    return [{"problem_text": f"Tom gained {i} apples ({tag}).", "contract_assessments": [{
        "candidate_organ": "unary_delta_transition", "missing_bindings": ["direction_unbound"],
        "unresolved_hazards": [], "runnable": False, "explanation": "not runnable",
        "evidence_spans": [{"text": "gained", "start": 4, "end": 10}]}]}
        for i in range(count)]


@pytest.fixture(scope="module")
def tiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A store of some 600 leaves with two kept checkpoints (the first at an older size)."""
    folder = tmp_path_factory.mktemp("tiles")
    db = folder / "audit.db"
    ok("keygen", ORIGIN, "--out", folder / "log")
    ok("ingest", "--db", db, write_jsonl(folder / "a.jsonl", frames(100, "a")))
    first = ok("checkpoint", "--db", db, "--key", folder / "log.key", "--origin", ORIGIN)
    ok("ingest", "--db", db, write_jsonl(folder / "b.jsonl", frames(260, "b")))
    second = ok("checkpoint", "--db", db, "--key", folder / "log.key")
    entries = [json.loads(line)["entry"].encode("utf-8")
               for line in ok("log", "--db", db).splitlines()]
    return {"db": db, "folder": folder, "first": first, "note": second, "entries": entries,
            "pub": (folder / "log.pub").read_text(encoding="utf-8").strip()}


@pytest.fixture(scope="module")
def client(tiled: dict[str, object]) -> Iterator[TestClient]:
    db = AuditStore.open(str(tiled["db"]), read_only=True)
    try:
        with TestClient(create_app(db, close_db_on_shutdown=False),
                        base_url="http://127.0.0.1") as test_client:
            yield test_client
    finally:
        db.close()


def _bundle(entries: list[bytes]) -> bytes:
    return b"".join(len(e).to_bytes(2, "big") + e for e in entries)


def test_the_checkpoint_is_the_newest_kept_one(client: TestClient, tiled: dict[str, object]):
    response = client.get("/log/checkpoint")
    assert response.status_code == 200
    assert response.text == tiled["note"]
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache, max-age=0"


def test_tiles_hold_the_hashes_of_the_logs_entries(client: TestClient,
                                                   tiled: dict[str, object]):
    entries: list[bytes] = tiled["entries"]  # type: ignore[assignment]
    size = len(entries)
    assert 512 < size < 1024  # two full level-0 tiles, a partial one, a partial level 1
    leaves = [leaf(e) for e in entries]
    full = client.get("/log/tile/0/001")
    assert full.status_code == 200 and full.content == b"".join(leaves[256:512])
    assert full.headers["content-type"] == "application/octet-stream"
    assert full.headers["cache-control"] == "public, max-age=31536000, immutable"
    width = size - 512
    partial = client.get(f"/log/tile/0/002.p/{width}")
    assert partial.content == b"".join(leaves[512:])
    # tlog-tiles: "This endpoint is immutable, so its caching headers SHOULD be long-lived."
    # A partial tile's path names its width: its bytes never change either.
    assert partial.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert client.get("/log/tile/0/002.p/3").content == b"".join(leaves[512:515])
    level1 = client.get("/log/tile/1/000.p/2")
    assert level1.content == mth(leaves[:256]) + mth(leaves[256:512])
    bundle = client.get("/log/tile/entries/000")
    assert bundle.content == _bundle(entries[:256])
    assert client.get(f"/log/tile/entries/002.p/{width}").content == _bundle(entries[512:])


def test_entry_bundles_are_gzip_compressed_for_a_client_that_accepts_it(
        client: TestClient, tiled: dict[str, object]):
    """tlog-tiles: "Entry bundles SHOULD be compressed at the HTTP layer. Logs MAY use
    `Content-Encoding: gzip` with no negotiation, or any compression algorithm requested by
    the client with `Accept-Encoding`." """
    import gzip

    entries: list[bytes] = tiled["entries"]  # type: ignore[assignment]
    with client.stream("GET", "/log/tile/entries/000",
                       headers={"Accept-Encoding": "gzip, identity"}) as zipped:
        raw = b"".join(zipped.iter_raw())
        assert zipped.headers["content-encoding"] == "gzip"
        assert zipped.headers["vary"] == "Accept-Encoding"
        assert zipped.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert gzip.decompress(raw) == _bundle(entries[:256]) and len(raw) < len(_bundle(
        entries[:256])) // 2
    for accept in ("identity", "gzip;q=0", "br"):
        plain = client.get("/log/tile/entries/000", headers={"Accept-Encoding": accept})
        assert "content-encoding" not in plain.headers and plain.content == _bundle(
            entries[:256])
    tile = client.get("/log/tile/0/000", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in tile.headers  # hashes do not compress: sent as they are


@pytest.mark.parametrize("path", [
    "/log/tile/0/003", "/log/tile/0/002", "/log/tile/1/000", "/log/tile/2/000.p/1",
    "/log/tile/0/002.p/255", "/log/tile/0/2", "/log/tile/0/x000/001", "/log/tile/0/001.p/0",
    "/log/tile/entries/003", "/log/tile/64/000", "/log/tiles/0/000",
])
def test_tiles_the_tree_does_not_have_are_not_found(client: TestClient, path: str):
    assert client.get(path).status_code == 404


def test_under_a_root_path(tiled: dict[str, object]):
    db = AuditStore.open(str(tiled["db"]), read_only=True)
    try:
        with TestClient(create_app(db, close_db_on_shutdown=False), root_path="/audit",
                        base_url="http://127.0.0.1") as test_client:
            assert test_client.get("/audit/log/checkpoint").text == tiled["note"]
            assert len(test_client.get("/audit/log/tile/0/000").content) == 8192
    finally:
        db.close()


def test_no_checkpoint_until_one_is_signed(tmp_path: Path):
    ok("ingest", "--db", tmp_path / "s.db", write_jsonl(tmp_path / "a.jsonl", frames(2, "x")))
    ok("checkpoint", "--db", tmp_path / "s.db", "--origin", ORIGIN)  # unsigned: not kept
    with AuditStore.open(str(tmp_path / "s.db"), read_only=True) as db, TestClient(
            create_app(db, close_db_on_shutdown=False), base_url="http://127.0.0.1") as test:
        response = test.get("/log/checkpoint")
        assert response.status_code == 404 and "core-audit checkpoint --key" in response.text
    refused = cli("tiles", "--db", tmp_path / "s.db", "--out", tmp_path / "out")
    assert refused.exit_code == 1 and "no kept checkpoint" in refused.stderr
    assert not (tmp_path / "out").exists()


def test_static_tiles_are_what_the_server_serves(client: TestClient, tiled: dict[str, object],
                                                 tmp_path: Path):
    out = tmp_path / "log"
    said = ok("tiles", "--db", tiled["db"], "--out", out)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    size = len(tiled["entries"])  # type: ignore[arg-type]
    first = int(str(tiled["first"]).split("\n")[1])
    expected = {"checkpoint", "tile/0/000", "tile/0/001", f"tile/0/002.p/{size - 512}",
                "tile/entries/000", "tile/entries/001", f"tile/entries/002.p/{size - 512}",
                "tile/1/000.p/2",
                # the older kept checkpoint's partial tiles
                f"tile/0/{first // 256:03d}.p/{first % 256}",
                f"tile/entries/{first // 256:03d}.p/{first % 256}"}
    if first >= 256:
        expected.add(f"tile/1/000.p/{first // 256}")
    assert set(files) == expected
    assert said.startswith(f"wrote {len(files) - 1} tiles and the checkpoint of size {size}")
    for name in files:
        assert (out / name).read_bytes() == client.get(f"/log/{name}").content, name


@pytest.mark.slow
def test_go_reads_the_log_over_http_and_verifies_it(go_client: Path, tiled: dict[str, object]):
    first = str(tiled["first"]).split("\n")
    with serving(tiled["db"]) as url:  # type: ignore[arg-type]
        result = run_go(go_client, f"{url}/log", str(tiled["pub"]),
                        "-old", f"{first[1]}:{first[2]}")
    size = len(tiled["entries"])  # type: ignore[arg-type]
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f"checkpoint {ORIGIN} size {size}: {size} entries proven\n"
                             f"consistent with size {first[1]}\n")


@pytest.mark.slow
def test_go_refuses_another_logs_key_and_a_forged_old_root(go_client: Path,
                                                           tiled: dict[str, object]):
    folder: Path = tiled["folder"]  # type: ignore[assignment]
    ok("keygen", ORIGIN, "--out", folder / "stranger")
    stranger = (folder / "stranger.pub").read_text(encoding="utf-8").strip()
    first = str(tiled["first"]).split("\n")
    with serving(tiled["db"]) as url:  # type: ignore[arg-type]
        unsigned = run_go(go_client, f"{url}/log", stranger)
        forged = run_go(go_client, f"{url}/log", str(tiled["pub"]), "-old",
                        f"{first[1]}:{'A' * 43}=")
    assert unsigned.returncode == 1 and "checkpoint: " in unsigned.stderr
    assert forged.returncode == 1 and f"does not extend size {first[1]}" in forged.stderr


def test_a_row_an_entry_bundle_cannot_carry_is_refused_at_ingest(tmp_path: Path):
    big = frames(1, "big")
    big[0]["problem_text"] = "Tom gained 3 apples" + "." * 70_000
    result = cli("ingest", "--db", tmp_path / "s.db",
                 write_jsonl(tmp_path / "big.jsonl", [*frames(1, "ok"), *big]))
    assert result.exit_code != 0
    assert "big.jsonl:2: its contract_assessments row's log entry is" in result.stderr
    assert "a C2SP tlog-tiles entry bundle carries at most 65535" in result.stderr
    assert "rejected, nothing written" in result.stderr
