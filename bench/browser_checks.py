"""Browser benchmark: the time a record page's checks take in headless Chromium, beside the
WebCrypto floor of the same checks, measured in the same run and the same page.

    .venv/bin/python bench/browser_checks.py [--rounds 200]

Builds a store of the bundled examples, signs it (a throwaway key, cosigned by a throwaway
witness) after the second file and ingests the third, so that a record page's tree head is
newer than its signed checkpoint and the page fetches a consistency proof, as pages at a
store's newest head usually do. Serves it on 127.0.0.1, pins both keys in the browser, opens
a residual's page and, in the page, times `--rounds` runs of:

- page: proof-check.js's whole check of the record (entry, fields, inclusion path, signed
  checkpoint and cosignature against the pinned keys, consistency with the page's head by a
  fetch of /proofs/consistency.json, the monitor's localStorage read);
- fetch: the fetch of that consistency proof alone;
- floor: the WebCrypto calls the checks cannot do without, called directly: SHA-256 of the
  entry and of one node per inclusion-path hash and two per consistency-path hash, and one
  Ed25519 key import and verify for the log's signature and one for the cosignature.

Prints the mean and p50 in ms (Chromium's timer is coarsened, so the mean over all rounds is
the finer figure); asserts nothing about time. Needs Debian's chromium, chromium-driver and
selenium (the test extra).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from backends import EXAMPLE_FILES  # noqa: E402
from browser_runs import WAIT, chromium, serving  # noqa: E402

from store.api.app import create_app  # noqa: E402
from store.db.audit_store import AuditStore  # noqa: E402
from store.db.log.kept_checkpoints import newest_kept_checkpoint  # noqa: E402
from store.model.checkpoint import COSIGNATURE_V1, SignerKey  # noqa: E402
from store.model.cosignature import cosign  # noqa: E402

ORIGIN = "bench.example/log"

TIMING = """
const done = arguments[arguments.length - 1];
const rounds = arguments[0];
(async () => {
  const box = document.querySelector("[data-proof]");
  const path = pathOf(box);
  const entry = new TextEncoder().encode(box.querySelector(".proof-entry").textContent);
  const note = V.parseCheckpoint(box.querySelector(".signed-checkpoint").textContent);
  const pins = await pinnedKeys();
  const size = BigInt(box.dataset.treeSize);
  const url = `${base()}/proofs/consistency.json?from=${note.size}&to=${size}`;
  const consistency = (await (await fetch(url)).json()).path.length;
  const node = new Uint8Array(65);
  const signatures = [[pins.logKeys[0], note.signatures[0].signature, note.body],
                      [pins.witnessKeys[0], note.signatures[1].signature.slice(8),
                       `cosignature/v1\\ntime ${new DataView(note.signatures[1].signature.buffer,
                         note.signatures[1].signature.byteOffset).getBigUint64(0)}\\n${note.body}`]];
  const run = async (work) => {
    const each = [];
    const start = performance.now();
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      await work();
      each.push(performance.now() - t);
    }
    return [(performance.now() - start) / rounds, each];
  };
  const page = await run(() => checkInclusion(box));
  const said = box.querySelector(".proof-result").textContent;
  const fetched = await run(async () => (await fetch(url)).json());
  const floor = await run(async () => {
    await crypto.subtle.digest("SHA-256", entry);
    for (let i = 0; i < path.length + 2 * consistency; i++) {
      await crypto.subtle.digest("SHA-256", node);
    }
    for (const [key, signature, text] of signatures) {
      await V.ed25519Verify(key.publicKey, signature, new TextEncoder().encode(text));
    }
  });
  return {page, fetched, floor, said, path: path.length, consistency};
})().then(done, (e) => done({error: e.message}));
"""


def build(folder: Path) -> tuple[str, SignerKey, SignerKey]:
    log = SignerKey(ORIGIN, os.urandom(32))
    witness = SignerKey("bench-witness.example", os.urandom(32), COSIGNATURE_V1)
    url = f"sqlite:///{folder / 'audit.db'}"
    first, second, third = EXAMPLE_FILES
    with AuditStore.open(url) as store:
        for path in (first, second):
            store.ingest(path.read_bytes().splitlines(keepends=True), source=path.name)
    from cli_runs import cli

    (folder / "log.key").write_text(str(log) + "\n", encoding="utf-8")
    made = cli("checkpoint", "--db", url, "--key", folder / "log.key", "--origin", ORIGIN)
    assert made.exit_code == 0, made.output
    with AuditStore.open(url) as store:
        kept = store.execute(newest_kept_checkpoint)
        body = kept.signed_note[:kept.signed_note.index("\n\n") + 1]
        store.add_cosignatures(kept.checkpoint_id, [cosign(body, witness, 1700000000)],
                               [witness.verifier])
        store.ingest(third.read_bytes().splitlines(keepends=True), source=third.name)
    return url, log, witness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200,
                        help="how many times each of the three is run in the page (default 200)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="core-audit-bench-browser-") as folder:
        url, log, witness = build(Path(folder))
        with AuditStore.open(url, read_only=True) as db, \
                serving(create_app(db, close_db_on_shutdown=False)) as origin, \
                chromium() as browser:
            browser.set_script_timeout(WAIT * 10)
            browser.get(f"{origin}/keys")
            browser.execute_script(
                "localStorage.setItem('core-audit.pins', arguments[0])",
                json.dumps({"logKeys": [str(log.verifier)],
                            "witnessKeys": [str(witness.verifier)], "quorum": 1}))
            browser.get(f"{origin}/residuals")
            record = re.search(r'href="(/residuals/[0-9a-f]{64})"', browser.page_source)
            assert record is not None
            browser.get(origin + record.group(1))
            found = browser.execute_async_script(TIMING, args.rounds)
    if "error" in found:
        raise SystemExit(f"the page's checks failed: {found['error']}")
    print(f"record page {record.group(1)[:30]}…: inclusion path {found['path']} hashes, "
          f"consistency path {found['consistency']}, {args.rounds} rounds in Chromium")
    print(f"  the page said: {found['said']}")
    for name, label in (("page", "page's checks (with the fetch)"),
                        ("fetched", "fetch of the consistency proof alone"),
                        ("floor", "WebCrypto floor (digests + 2 Ed25519)")):
        mean, each = found[name]
        print(f"  {label:40} mean {mean:7.3f} ms   p50 {statistics.median(each):7.3f} ms")


if __name__ == "__main__":
    main()
