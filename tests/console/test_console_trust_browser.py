"""The browser as the auditor's verifier and monitor, in headless Debian Chromium, offline.

Keys are pinned on /keys after their fingerprint is shown (never offered by the server); a
record page then says against which pinned key and which witnesses its proof was checked, or
that only the server's word backs it. A hostile proxy rewriting the entry, the path, the root,
the signed checkpoint or a field shown makes the page say it failed; a server that shows one
browser two logs signed by the same key (a split view) is warned of, with both signed
checkpoints offered as evidence. /log's form checks the root the auditor kept.

Stores: the example files, signed by LOG after the first file, and after the second and
cosigned by the witness W (C2SP cosignature/v1), then the third file ingested; the fork ingests
the third file before the second and is signed by the same key."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from backends import EXAMPLE_FILES
from browser_runs import WAIT, RewritingProxy, serving, skip_without_chromium
from cli_runs import cli
from spec_values import DELTA_QUANTITY_ID

from store.api.app import create_app
from store.db.audit_store import AuditStore
from store.db.log.kept_checkpoints import (
    KeptCheckpoint,
    kept_checkpoint,
    newest_kept_checkpoint,
)
from store.model.checkpoint import COSIGNATURE_V1, SignerKey
from store.model.cosignature import cosign

skip_without_chromium()
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow
ORIGIN = "audit.example/console"
LOG = SignerKey(ORIGIN, b"\x03" * 32)
WITNESS = SignerKey("w.example", b"\x07" * 32, COSIGNATURE_V1)
RESIDUAL = f"/residuals/{DELTA_QUANTITY_ID}"


def _store(folder: Path, steps: tuple[Path | str, ...]) -> str:
    """A store made by `steps`: a file is ingested; "sign" signs the newest tree head by LOG
    (choosing the origin the first time); "cosign" has WITNESS cosign the newest checkpoint."""
    folder.mkdir()
    url = f"sqlite:///{folder / 'audit.db'}"
    (folder / "log.key").write_text(str(LOG) + "\n", encoding="utf-8")
    origin: tuple[str, ...] = ("--origin", ORIGIN)
    for step in steps:
        if step == "sign":
            made = cli("checkpoint", "--db", url, "--key", folder / "log.key", *origin)
            assert made.exit_code == 0, made.output
            origin = ()
        elif step == "cosign":
            with AuditStore.open(url) as store:
                kept = store.execute(newest_kept_checkpoint)
                body = kept.signed_note[:kept.signed_note.index("\n\n") + 1]
                store.add_cosignatures(kept.checkpoint_id,
                                       [cosign(body, WITNESS, 1700000000)], [WITNESS.verifier])
        else:
            assert cli("ingest", "--db", url, step).exit_code == 0
    return url


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("trust")
    first, second, third = EXAMPLE_FILES
    return {"log": _store(folder / "log", (first, "sign", second, "sign", "cosign", third)),
            "fork": _store(folder / "fork", (first, third, second, "sign"))}


@dataclass
class Site:
    origin: str
    proxy: RewritingProxy
    dbs: dict[str, AuditStore]


@pytest.fixture
def site(stores: dict[str, str]) -> Iterator[Site]:
    with AuditStore.open(stores["log"], read_only=True) as log, \
            AuditStore.open(stores["fork"], read_only=True) as fork:
        proxy = RewritingProxy(create_app(log, close_db_on_shutdown=False))
        with serving(proxy) as origin:
            yield Site(origin, proxy, {"log": log, "fork": fork})


def _settled(browser: Any, selector: str) -> tuple[str, str]:
    """The text and state (verified, failed, unauthenticated) of the first `selector`."""
    WebDriverWait(browser, WAIT).until(lambda b: "pending" not in b.find_element(
        By.CSS_SELECTOR, selector).get_attribute("class"))
    node = browser.find_element(By.CSS_SELECTOR, selector)
    state = next(c for c in ("verified", "failed", "unauthenticated")
                 if c in node.get_attribute("class").split())
    return str(node.text), state


def _pin(browser: Any, site: Site, *, witnesses: tuple[SignerKey, ...] = (WITNESS,),
         quorum: int = 1) -> KeptCheckpoint:
    """Pins as /keys stores them (the explicit act itself is tested once, below); the log
    store's newest signed checkpoint."""
    browser.get(f"{site.origin}/keys")
    browser.execute_script(
        "localStorage.clear(); localStorage.setItem('core-audit.pins', arguments[0]);",
        json.dumps({"logKeys": [str(LOG.verifier)],
                    "witnessKeys": [str(w.verifier) for w in witnesses], "quorum": quorum}))
    return _kept(site.dbs["log"])


def _visit(browser: Any, url: str) -> tuple[str, str]:
    browser.get(url)
    return _settled(browser, ".proof-result")


def _fingerprint(key: SignerKey) -> str:
    """SHA-256 of the verifier key's type byte and 32-byte public key, in hex."""
    return hashlib.sha256(bytes([key.key_type]) + key.verifier.public_key).hexdigest()


def _kept(db: AuditStore) -> KeptCheckpoint:
    found = db.execute(newest_kept_checkpoint)
    assert found is not None
    return found


def test_pinning_shows_the_fingerprint_and_the_page_names_the_key_and_witness(
        browser: Any, site: Site) -> None:
    origin, dbs = site.origin, site.dbs
    browser.get(f"{origin}/keys")
    browser.execute_script("localStorage.clear()")
    browser.get(f"{origin}{RESIDUAL}")
    said, state = _settled(browser, ".proof-result")
    assert state == "unauthenticated"
    assert said.startswith("consistent, not authenticated: leaf ")
    assert said.endswith("only the server's word backs this tree head")
    assert _settled(browser, ".checkpoint-result") == (
        "not authenticated: no log key is pinned in this browser (Keys); only the server's "
        "word backs this tree head (consistency, not authenticity)", "unauthenticated")

    # The key in the URL's fragment fills the form and shows its fingerprint; nothing is
    # pinned until the auditor presses Pin.
    browser.get(f"{origin}/keys#log={LOG.verifier}")
    WebDriverWait(browser, WAIT).until(lambda b: b.find_element(
        By.CSS_SELECTOR, ".key-fingerprint").text)
    assert browser.find_element(By.CSS_SELECTOR, ".key-fingerprint").text == _fingerprint(LOG)
    assert browser.find_element(By.CSS_SELECTOR, ".key-name").text == ORIGIN
    assert browser.execute_script("return localStorage.getItem('core-audit.pins')") is None
    browser.find_element(By.CSS_SELECTOR, ".pin-key").click()
    browser.find_element(By.CSS_SELECTOR, "#key-text").clear()
    browser.find_element(By.CSS_SELECTOR, "#key-text").send_keys(str(WITNESS.verifier))
    browser.find_element(By.CSS_SELECTOR, "input[name=role][value=witness]").click()
    browser.find_element(By.CSS_SELECTOR, ".show-key").click()
    WebDriverWait(browser, WAIT).until(lambda b: b.find_element(
        By.CSS_SELECTOR, ".key-fingerprint").text == _fingerprint(WITNESS))
    browser.find_element(By.CSS_SELECTOR, ".pin-key").click()
    browser.find_element(By.CSS_SELECTOR, "#quorum").clear()
    browser.find_element(By.CSS_SELECTOR, "#quorum").send_keys("1")
    browser.find_element(By.CSS_SELECTOR, ".set-quorum").click()
    pinned = browser.find_element(By.CSS_SELECTOR, ".pinned").text
    assert f"log key {ORIGIN} (Ed25519), SHA-256 fingerprint {_fingerprint(LOG)}" in pinned
    assert (f"witness key w.example (Ed25519 cosignature/v1), SHA-256 fingerprint "
            f"{_fingerprint(WITNESS)}") in pinned

    kept = _kept(dbs["log"])
    browser.get(f"{origin}{RESIDUAL}")
    said, state = _settled(browser, ".proof-result")
    signed = (f"signed checkpoint of tree size {kept.tree_size}, root {kept.root_hash}: signed "
              f"by the pinned key {ORIGIN} (SHA-256 {_fingerprint(LOG)[:16]}…), cosigned by "
              f"w.example ({_fingerprint(WITNESS)[:16]}…) (1 cosigned, quorum 1)")
    assert state == "verified", said
    assert re.fullmatch(rf"verified in this browser: leaf \d+ of tree size \d+, root "
                        rf"[0-9a-f]{{64}}, in the {re.escape(signed)}", said), said
    assert _settled(browser, ".checkpoint-result")[0] == (
        f"verified in this browser: {signed}; the first checkpoint of this log this browser "
        "has verified; it is kept, and later ones must extend it")
    covered = browser.find_elements(By.CSS_SELECTOR, "dl.fields dd.covered")
    uncovered = [e.find_element(By.XPATH, "preceding-sibling::dt[1]").text
                 for e in browser.find_elements(By.CSS_SELECTOR, "dl.fields dd.not-covered")]
    assert len(covered) >= 8
    assert uncovered == ["occurrences", "seq"]
    assert "not covered by the proof (the server's word)" in browser.find_element(
        By.CSS_SELECTOR, "dd.not-covered").text
    assert browser.find_element(By.CSS_SELECTOR, ".split-view").get_attribute("hidden")


def test_a_record_appended_after_the_signed_checkpoint_says_only_the_server_backs_it(
        browser: Any, site: Site) -> None:
    kept = _pin(browser, site)
    said, state = _visit(browser, f"{site.origin}/batches/1")
    assert state == "verified", said
    # The third file's batch (4: choosing the origin was batch 2), ingested after the
    # checkpoint.
    said, state = _visit(browser, f"{site.origin}/batches/4")
    assert state == "unauthenticated", said
    assert said.endswith(f"the leaf was appended after the signed checkpoint of size "
                         f"{kept.tree_size}, so only the server's word backs it"), said
    assert _settled(browser, ".checkpoint-result")[1] == "verified"


TAMPERING: dict[str, Callable[[bytes], bytes]] = {
    # One character of the entry shown.
    "entry": lambda b: re.sub(rb'(class="proof-entry">\{&#34;row&#34;:\{)', rb"\1 ", b),
    # The entry and the leaf hash stated for it, made to agree.
    "entry and leaf hash": lambda b: _entry_with_its_hash(b),
    "path": lambda b: re.sub(rb'(class="proof-path" start="0"><li><code class="hash">)([0-9a-f])',
                             lambda m: m.group(1) + (b"0" if m.group(2) != b"0" else b"1"), b),
    "root": lambda b: re.sub(rb'data-root="[0-9a-f]{64}"', b'data-root="' + b"ab" * 32 + b'"', b),
    "checkpoint": lambda b: re.sub(rb'(class="signed-checkpoint" data-size="\d+">[^\n]*\n)(\d+)',
                                   lambda m: m.group(1) + str(int(m.group(2)) - 1).encode(), b),
    "field": lambda b: b.replace(b"<dt>residual_code</dt><dd>",
                                 b"<dt>residual_code</dt><dd>x", 1),
}


def _entry_with_its_hash(body: bytes) -> bytes:
    import html

    found = re.search(rb'class="proof-entry">(.*?)</pre>', body, re.S)
    assert found is not None
    entry = html.unescape(found.group(1).decode())
    entry = entry.replace('"residual_code":"', '"residual_code":"x', 1)
    leaf = hashlib.sha256(b"\x00" + entry.encode()).hexdigest().encode()
    body = body.replace(found.group(1), html.escape(entry, quote=True).encode(), 1)
    return re.sub(rb'data-leaf-hash="[0-9a-f]{64}"', b'data-leaf-hash="' + leaf + b'"', body)


@pytest.mark.parametrize("what", list(TAMPERING))
def test_a_page_rewritten_in_transit_says_it_failed(
        browser: Any, site: Site, what: str) -> None:
    _pin(browser, site)
    site.proxy.rewrite = TAMPERING[what]
    said, state = _visit(browser, f"{site.origin}{RESIDUAL}")
    assert state == "failed", said
    assert said.startswith("failed: "), said
    expected = {
        "entry": "failed: the entry shown hashes to leaf ",
        "entry and leaf hash": "failed: field residual_code shows ",
        "path": "failed: the path leads from leaf ",
        "root": "failed: the path leads from leaf ",
        "checkpoint": "failed: the signed checkpoint: the checkpoint carries no valid signature",
        "field": 'failed: field residual_code shows "x',
    }[what]
    assert said.startswith(expected), said


def test_a_page_without_its_signed_checkpoint_is_not_shown_as_verified(
        browser: Any, site: Site) -> None:
    _pin(browser, site)
    site.proxy.rewrite = lambda b: re.sub(rb'<pre class="signed-checkpoint".*?</pre>', b"", b,
                                          flags=re.S)
    said, state = _visit(browser, f"{site.origin}{RESIDUAL}")
    assert state == "unauthenticated", said
    assert "only the server's word backs this tree head" in said


def test_a_split_view_is_warned_with_both_checkpoints_to_download(
        browser: Any, site: Site) -> None:
    seen = _pin(browser, site, witnesses=(), quorum=0)
    assert _visit(browser, f"{site.origin}{RESIDUAL}")[1] == "verified"
    now = _kept(site.dbs["fork"])
    site.proxy.app = create_app(site.dbs["fork"], close_db_on_shutdown=False)
    browser.get(f"{site.origin}{RESIDUAL}")
    said, state = _settled(browser, ".checkpoint-result")
    assert state == "failed"
    assert said.startswith(f"failed: split view: it does not extend the checkpoint of size "
                           f"{seen.tree_size} this browser verified before"), said
    assert _settled(browser, ".proof-result")[1] == "failed"
    warning = browser.find_element(By.CSS_SELECTOR, ".split-view")
    assert warning.get_attribute("hidden") is None and warning.is_displayed()
    assert warning.get_attribute("role") == "alert"
    text = warning.find_element(By.CSS_SELECTOR, ".split-view-text").text
    assert (f"(tree size {seen.tree_size}, root {seen.root_hash})" in text
            and f"(tree size {now.tree_size}, root {now.root_hash})" in text), text
    links = warning.find_elements(By.CSS_SELECTOR, "a[download]")
    names = [a.get_attribute("download") for a in links]
    hrefs = [a.get_attribute("href") for a in links]
    texts = []
    for href in hrefs:  # the page's CSP keeps its own script from fetching blob: URLs
        browser.get(href)
        texts.append(browser.execute_script("return document.body.textContent"))
    assert names == [f"checkpoint-{seen.tree_size}-seen.txt",
                     f"checkpoint-{now.tree_size}-now.txt"]
    assert texts == [seen.note, now.note]
    # The overview and /log show the signed checkpoint too, and warn the same.
    for path in ("/", "/log"):
        browser.get(f"{site.origin}{path}")
        assert _settled(browser, ".checkpoint-result")[0].startswith("failed: split view: ")
        assert browser.find_element(By.CSS_SELECTOR, ".split-view").is_displayed(), path


def test_log_checks_the_root_the_auditor_kept_in_the_browser(
        browser: Any, site: Site) -> None:
    kept = _pin(browser, site)
    said, state = _visit(browser, f"{site.origin}/log?from={kept.tree_size}&root={kept.root_hash}")
    assert state == "verified", said
    assert said.endswith(f"extends the tree of size {kept.tree_size}, root {kept.root_hash}, "
                         "the root you kept"), said
    assert _settled(browser, ".checkpoint-result")[1] == "verified"
    said, state = _visit(browser, f"{site.origin}/log?from={kept.tree_size}&root={'cd' * 32}")
    assert state == "failed", said
    assert said.startswith("failed: the path leads to old root "), said


def test_a_quorum_the_pinned_witnesses_did_not_reach_fails(browser: Any, site: Site) -> None:
    other = SignerKey("w2.example", b"\x09" * 32, COSIGNATURE_V1)
    _pin(browser, site, witnesses=(WITNESS, other), quorum=2)
    said, state = _visit(browser, f"{site.origin}{RESIDUAL}")
    assert state == "failed", said
    assert said == ("failed: the signed checkpoint: 1 of the pinned witnesses cosigned it "
                    "(w.example); the quorum you set is 2"), said


def test_an_older_signed_checkpoint_is_said_to_be_older(browser: Any, site: Site) -> None:
    seen = _pin(browser, site, witnesses=(), quorum=0)
    assert _visit(browser, f"{site.origin}{RESIDUAL}")[1] == "verified"
    first = site.dbs["log"].execute(kept_checkpoint, 1)
    browser.get(f"{site.origin}/?asOf={first.tree_size}")  # shows the first checkpoint
    said, state = _settled(browser, ".checkpoint-result")
    assert state == "verified", said
    assert said.endswith(f"older than the checkpoint of size {seen.tree_size} this browser "
                         "verified before, which extends it"), said
    assert not browser.find_element(By.CSS_SELECTOR, ".split-view").is_displayed()
