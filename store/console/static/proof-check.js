// core-audit console: what an auditor's browser checks on a page, with tlog-verify.js.
// Record pages: the entry shown hashes to the leaf, the path leads to the page's root, every
// stored field shown is the entry's (or is marked as not covered), the signed checkpoint
// verifies against the log key and witness quorum pinned in this browser (/keys), and the
// page's tree head and the checkpoint's are consistent. /log: the consistency proof from the
// tree size (and root) the auditor kept. Every page with a signed checkpoint: the last one this
// browser verified for the log's origin must be consistent with it, or a split view is shown.
"use strict";

const V = globalThis.tlogVerify;
const PINS = "core-audit.pins";
const SEEN = "core-audit.seen:";
const KIND_TABLES = {
  residuals: "contract_residuals", assessments: "contract_assessments",
  surfaces: "surface_records", turns: "turns", batches: "ingest_batches",
};

function say(node, state, text) {
  node.textContent = text;
  node.classList.remove("pending", "verified", "failed", "unauthenticated");
  node.classList.add(state);
}

async function pinnedKeys() {
  let pins;
  try { pins = JSON.parse(localStorage.getItem(PINS) || "{}"); } catch { pins = {}; }
  const parse = (texts) => Promise.all((texts || []).map((t) => V.parseVerifierKey(t)));
  return { logKeys: await parse(pins.logKeys), witnessKeys: await parse(pins.witnessKeys),
           quorum: Number.isInteger(pins.quorum) ? pins.quorum : 0 };
}

function base() {
  const link = document.querySelector("header a.brand");
  return new URL(link.href).pathname.replace(/\/$/, "");
}

async function consistencyPath(first, second) {
  const answer = await fetch(`${base()}/proofs/consistency.json?from=${first}&to=${second}`,
                             { headers: { accept: "application/json" } });
  if (!answer.ok) throw new Error(`the server gave no consistency proof from ${first} to ${second} (HTTP ${answer.status})`);
  const body = await answer.json();
  return body.path.map((h, i) => V.fromHex(h, `path[${i}]`));
}

// Throws unless the trees (a, rootA) and (b, rootB) are one log's: the smaller a prefix of the
// larger, by a proof the server gives and this browser checks against the roots it holds.
async function checkLinked(a, rootA, b, rootB) {
  const [first, firstRoot, second, secondRoot] = a <= b ? [a, rootA, b, rootB] : [b, rootB, a, rootA];
  const path = first === second || first === 0n ? [] : await consistencyPath(first, second);
  await V.checkConsistency(first, firstRoot, second, secondRoot, path);
}

function offer(link, text, name) {
  link.href = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
  link.download = name;
}

// The monitor: the last checkpoint this browser verified for `checkpoint`'s origin must be
// consistent with it; the larger one is kept. A failure shows the split-view warning.
async function monitor(checkpoint) {
  const key = SEEN + checkpoint.origin;
  let seen = null;
  try { seen = JSON.parse(localStorage.getItem(key) || "null"); } catch { seen = null; }
  if (seen === null) {
    localStorage.setItem(key, JSON.stringify({ note: checkpoint.text }));
    return "the first checkpoint of this log this browser has verified; it is kept, and later ones must extend it";
  }
  const before = V.parseCheckpoint(seen.note);
  try {
    await checkLinked(before.size, before.root, checkpoint.size, checkpoint.root);
  } catch (error) {
    const warning = document.querySelector(".split-view");
    warning.querySelector(".split-view-text").textContent =
      `The checkpoint this browser verified before (tree size ${before.size}, root ${V.hex(before.root)}) ` +
      `and the one this page shows (tree size ${checkpoint.size}, root ${V.hex(checkpoint.root)}) are both ` +
      `signed by the pinned key, and are not one log: ${error.message}.`;
    offer(warning.querySelector(".split-view-seen"), before.text, `checkpoint-${before.size}-seen.txt`);
    offer(warning.querySelector(".split-view-now"), checkpoint.text, `checkpoint-${checkpoint.size}-now.txt`);
    warning.hidden = false;
    throw new Error(`split view: it does not extend the checkpoint of size ${before.size} this browser verified before`);
  }
  if (checkpoint.size > before.size) {
    localStorage.setItem(key, JSON.stringify({ note: checkpoint.text }));
    return `it extends the checkpoint of size ${before.size} this browser verified before (now kept instead)`;
  }
  if (checkpoint.size < before.size) {
    return `older than the checkpoint of size ${before.size} this browser verified before, which extends it`;
  }
  return `the checkpoint this browser verified before is this one`;
}

// The page's signed checkpoint against the pins; {checkpoint, said} or null when the page has
// none or nothing is pinned (what is said then is on the page).
async function checkSigned(box) {
  const result = box.querySelector(".checkpoint-result");
  const note = box.querySelector(".signed-checkpoint");
  const pins = await pinnedKeys();
  if (note === null) {
    say(result, "unauthenticated", "not authenticated: the server shows no signed checkpoint; only its word backs this tree head (consistency, not authenticity)");
    return null;
  }
  if (pins.logKeys.length === 0) {
    say(result, "unauthenticated", "not authenticated: no log key is pinned in this browser (Keys); only the server's word backs this tree head (consistency, not authenticity)");
    return null;
  }
  let verified;
  try {
    verified = await V.verifyCheckpoint(note.textContent, pins.logKeys, pins.witnessKeys, pins.quorum);
  } catch (error) {
    say(result, "failed", `failed: the signed checkpoint: ${error.message}`);
    throw error;
  }
  const { checkpoint, signer, witnesses } = verified;
  const cosigned = witnesses.length === 0 ? "no pinned witness cosigned it" :
    `cosigned by ${witnesses.map((w) => `${w.key.name} (${w.key.fingerprint.slice(0, 16)}…)`).join(", ")}`;
  const said = `signed checkpoint of tree size ${checkpoint.size}, root ${V.hex(checkpoint.root)}: ` +
    `signed by the pinned key ${signer.name} (SHA-256 ${signer.fingerprint.slice(0, 16)}…), ${cosigned} ` +
    `(${witnesses.length} cosigned, quorum ${pins.quorum})`;
  let history;
  try {
    history = await monitor(checkpoint);
  } catch (error) {
    say(result, "failed", `failed: ${error.message}`);
    throw error;
  }
  say(result, "verified", `verified in this browser: ${said}; ${history}`);
  return { checkpoint, said };
}

function pathOf(box) {
  return Array.from(box.querySelectorAll(".proof-path code"),
                    (node, i) => V.fromHex(node.textContent.trim(), `path[${i}]`));
}

function sameJson(a, b) {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (a !== null && typeof a === "object") {
    if (b === null || typeof b !== "object" || Array.isArray(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return a === b;
}

// Whether `text`, as a page shows a stored value, is `value` as the entry holds it: its text,
// an enum's GraphQL name (upper case), or the same JSON for a list or object kept as JSON text.
function shows(text, value) {
  if (value === null || typeof value !== "string") return text === String(value);
  if (text === value || (/^[a-z0-9_]+$/.test(value) && text === value.toUpperCase())) return true;
  if (!/^[[{]/.test(value)) return false;
  try { return sameJson(JSON.parse(value), JSON.parse(text)); } catch { return false; }
}

function mark(node, text) {
  if (node.querySelector(":scope > .uncovered")) return;  // checked before: marked once
  const badge = document.createElement("span");
  badge.className = "uncovered";
  badge.textContent = text;
  node.append(" ", badge);
}

// Every stored field against the entry the proof covers; fields it does not cover are marked.
// Returns the failures.
function checkFields(entry) {
  const failures = [];
  const row = entry.row || {};
  const segments = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const [kind, key] = segments.slice(-2);
  if (KIND_TABLES[kind] !== entry.table) failures.push(`the entry is a row of ${entry.table}, not of ${kind}`);
  const card = document.querySelector("section[aria-labelledby='fields-h']");
  const names = card ? Array.from(card.querySelectorAll("dl.fields > dt")) : [];
  if (names.length === 0) failures.push("the page shows no stored fields");
  names.forEach((dt, i) => {
    const name = dt.textContent, dd = dt.nextElementSibling, text = dd.textContent;
    if (i === 0 && String(row[name]) !== key) failures.push(`the entry's ${name} is ${row[name]}, not ${key} (the address of this page)`);
    if (!(name in row)) {
      dd.classList.add("not-covered");
      return mark(dd, "not covered by the proof (the server's word)");
    }
    dd.classList.remove("covered", "failed");
    if (shows(text, row[name])) {
      dd.classList.add("covered");
      dd.title = "checked in this browser against the entry the proof covers";
    } else {
      dd.classList.add("failed");
      failures.push(`field ${name} shows ${JSON.stringify(text.slice(0, 80))}; the entry holds ${JSON.stringify(row[name]).slice(0, 80)}`);
    }
  });
  const heading = document.querySelector("h1 code");
  if (heading && heading.textContent !== key) failures.push(`the heading names ${heading.textContent}, not ${key}`);
  const line = document.querySelector("pre.line");
  if (line && line.textContent !== row.line) failures.push("the journal line shown is not the entry's line");
  for (const section of document.querySelectorAll("main > section.card")) {
    const id = section.getAttribute("aria-labelledby");
    if (section.dataset.proof || ["fields-h", "bundle-h", "line-h"].includes(id) ||
        section.querySelector(":scope > p.uncovered")) continue;
    const note = document.createElement("p");
    note.className = "uncovered";
    note.textContent = "Not covered by this record's proof: read from the server's other records (each has its own page and proof).";
    section.querySelector("h2").after(note);
  }
  const digest = document.querySelector("section[aria-labelledby='line-h'] p");
  if (digest) mark(digest, "(the server's check of the line)");
  return failures;
}

async function checkInclusion(box) {
  const result = box.querySelector(".proof-result");
  const index = BigInt(box.dataset.leafIndex), size = BigInt(box.dataset.treeSize);
  const entryText = box.querySelector(".proof-entry").textContent;
  const leaf = await V.leafHash(entryText);
  if (V.hex(leaf) !== box.dataset.leafHash) {
    return say(result, "failed", `failed: the entry shown hashes to leaf ${V.hex(leaf)}, not the proof's leaf hash ${box.dataset.leafHash}`);
  }
  let entry;
  try { entry = JSON.parse(entryText); } catch { entry = {}; }
  const failures = checkFields(entry);
  if (failures.length) return say(result, "failed", `failed: ${failures.join("; ")}`);
  const root = await V.rootFromInclusion(index, size, leaf, pathOf(box));
  if (V.hex(root) !== box.dataset.root) {
    return say(result, "failed", `failed: the path leads from leaf ${index} to root ${V.hex(root)}, not to the tree head's root ${box.dataset.root}`);
  }
  const held = `leaf ${index} of tree size ${size}, root ${V.hex(root)}`;
  let signed;
  try {
    signed = await checkSigned(box);
  } catch (error) {
    return say(result, "failed", `failed: the signed checkpoint: ${error.message}`);
  }
  if (signed === null) {
    return say(result, "unauthenticated", `consistent, not authenticated: ${held} (the entry and every field marked as covered); only the server's word backs this tree head`);
  }
  const { checkpoint } = signed;
  try {
    await checkLinked(size, root, checkpoint.size, checkpoint.root);
  } catch (error) {
    return say(result, "failed", `failed: this page's tree head (size ${size}) and the signed checkpoint (size ${checkpoint.size}) are not one log: ${error.message}`);
  }
  if (index >= checkpoint.size) {
    return say(result, "unauthenticated", `consistent, not authenticated: ${held}; the leaf was appended after the signed checkpoint of size ${checkpoint.size}, so only the server's word backs it`);
  }
  say(result, "verified", `verified in this browser: ${held}, in the ${signed.said}`);
}

async function checkKept(box) {
  const result = box.querySelector(".proof-result");
  const first = BigInt(box.dataset.first), second = BigInt(box.dataset.second);
  const kept = box.dataset.keptRoot;
  const oldRoot = V.fromHex(kept || box.dataset.firstRoot, "old root");
  const newRoot = V.fromHex(box.dataset.secondRoot, "new root");
  try {
    await V.checkConsistency(first, oldRoot, second, newRoot, pathOf(box));
  } catch (error) {
    return say(result, "failed", `failed: ${error.message}`);
  }
  const whose = kept ? "the root you kept" : "the server's root (give the root you kept to check yours)";
  say(result, kept ? "verified" : "unauthenticated",
      `${kept ? "verified in this browser" : "consistent, not authenticated"}: the tree of size ${second}, root ${V.hex(newRoot)} (the server's newest head) extends the tree of size ${first}, root ${V.hex(oldRoot)}, ${whose}`);
}

async function checkAll() {
  const boxes = Array.from(document.querySelectorAll("[data-proof]"));
  const signedBoxes = Array.from(document.querySelectorAll(".signed-box"))
    .filter((box) => !box.closest("[data-proof]"));
  if (!(globalThis.crypto && crypto.subtle)) {
    for (const node of document.querySelectorAll(".proof-result, .checkpoint-result")) {
      say(node, "failed", "not checked: this browser offers WebCrypto only to secure pages (HTTPS or localhost)");
    }
    return;
  }
  for (const box of signedBoxes) {
    try { await checkSigned(box); } catch { /* said on the page */ }
  }
  for (const box of boxes) {
    try {
      await (box.dataset.proof === "inclusion" ? checkInclusion(box) : checkKept(box));
    } catch (error) {
      say(box.querySelector(".proof-result"), "failed", `failed: ${error.message}`);
    }
  }
}

document.addEventListener("DOMContentLoaded", checkAll);
