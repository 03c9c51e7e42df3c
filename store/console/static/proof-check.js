// core-audit console: checks the RFC 9162 proofs shown on a page, in this browser, with
// WebCrypto's SHA-256 only (no library). Inclusion: the leaf hash from the entry shown, the
// root from the path. Consistency: both roots from the path. Says what holds or what failed.
"use strict";

const encoder = new TextEncoder();

function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function fromHex(text, what) {
  if (!/^[0-9a-f]{64}$/.test(text)) {
    throw new Error(`${what} is not 64 lowercase hex digits: ${text.slice(0, 80)}`);
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

async function sha256(...parts) {
  const size = parts.reduce((n, p) => n + p.length, 0);
  const joined = new Uint8Array(size);
  let at = 0;
  for (const part of parts) { joined.set(part, at); at += part.length; }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", joined));
}

const leafHash = (entry) => sha256(Uint8Array.of(0), encoder.encode(entry));
const nodeHash = (left, right) => sha256(Uint8Array.of(1), left, right);
const odd = (n) => (n & 1n) === 1n;

// RFC 9162 section 2.1.3.2: the root the path leads to from `leaf`, or an Error.
async function rootFromInclusion(index, size, leaf, path) {
  if (index >= size) throw new Error(`leaf index ${index} is not below the tree size ${size}`);
  let fn = index, sn = size - 1n, r = leaf;
  for (const p of path) {
    if (sn === 0n) throw new Error(`the path has ${path.length} hashes, more than a leaf of this tree needs`);
    if (odd(fn) || fn === sn) {
      r = await nodeHash(p, r);
      if (!odd(fn)) { while (!odd(fn) && fn !== 0n) { fn >>= 1n; sn >>= 1n; } }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n; sn >>= 1n;
  }
  if (sn !== 0n) throw new Error(`the path has ${path.length} hashes, fewer than leaf ${index} of a tree of size ${size} needs`);
  return r;
}

// RFC 9162 section 2.1.4.2: [old root, new root] the path leads to, or an Error.
async function rootsFromConsistency(first, second, firstRoot, path) {
  if (first > second) throw new Error(`size ${first} is larger than ${second}`);
  if (first === second || first === 0n) {
    if (path.length !== 0) throw new Error(`a proof from size ${first} to ${second} has no hashes; this one has ${path.length}`);
    return [firstRoot, null];
  }
  if (path.length === 0) throw new Error("the path is empty");
  const nodes = (first & (first - 1n)) === 0n ? [firstRoot, ...path] : path;
  let fn = first - 1n, sn = second - 1n;
  while (odd(fn)) { fn >>= 1n; sn >>= 1n; }
  let fr = nodes[0], sr = nodes[0];
  for (const c of nodes.slice(1)) {
    if (sn === 0n) throw new Error("the path has more hashes than these sizes need");
    if (odd(fn) || fn === sn) {
      fr = await nodeHash(c, fr); sr = await nodeHash(c, sr);
      if (!odd(fn)) { while (!odd(fn) && fn !== 0n) { fn >>= 1n; sn >>= 1n; } }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn >>= 1n; sn >>= 1n;
  }
  if (sn !== 0n) throw new Error("the path has fewer hashes than these sizes need");
  return [fr, sr];
}

function say(box, ok, text) {
  const out = box.querySelector(".proof-result");
  out.textContent = text;
  out.classList.remove("pending");
  out.classList.add(ok ? "verified" : "failed");
}

function pathOf(box) {
  return Array.from(box.querySelectorAll(".proof-path code"),
                    (node, i) => fromHex(node.textContent.trim(), `path[${i}]`));
}

async function checkInclusion(box) {
  const index = BigInt(box.dataset.leafIndex), size = BigInt(box.dataset.treeSize);
  const root = box.dataset.root, stated = box.dataset.leafHash;
  const entry = box.querySelector(".proof-entry").textContent;
  const leaf = hex(await leafHash(entry));
  if (leaf !== stated) {
    return say(box, false, `failed: the entry shown hashes to leaf ${leaf}, not the proof's leaf hash ${stated}`);
  }
  let reached;
  try {
    reached = hex(await rootFromInclusion(index, size, fromHex(leaf, "leaf"), pathOf(box)));
  } catch (error) {
    return say(box, false, `failed: ${error.message}`);
  }
  if (reached !== root) {
    return say(box, false, `failed: the path leads from leaf ${index} to root ${reached}, not to the tree head's root ${root}`);
  }
  say(box, true, `verified in this browser: leaf ${index} of tree size ${size}, root ${root}`);
}

async function checkConsistency(box) {
  const first = BigInt(box.dataset.first), second = BigInt(box.dataset.second);
  const firstRoot = box.dataset.firstRoot, secondRoot = box.dataset.secondRoot;
  let roots;
  try {
    roots = await rootsFromConsistency(first, second, fromHex(firstRoot, "old root"), pathOf(box));
  } catch (error) {
    return say(box, false, `failed: ${error.message}`);
  }
  const [oldRoot, newRoot] = roots.map((r) => (r === null ? null : hex(r)));
  if (oldRoot !== firstRoot) {
    return say(box, false, `failed: the path leads to old root ${oldRoot}, not ${firstRoot}`);
  }
  if (newRoot !== null && newRoot !== secondRoot) {
    return say(box, false, `failed: the path leads to new root ${newRoot}, not the tree head's root ${secondRoot}`);
  }
  if (newRoot === null && first === second && firstRoot !== secondRoot) {
    return say(box, false, `failed: the same size ${first} with two roots, ${firstRoot} and ${secondRoot}`);
  }
  say(box, true, `verified in this browser: the tree of size ${second}, root ${secondRoot} extends the tree of size ${first}, root ${firstRoot}`);
}

async function checkAll() {
  for (const box of document.querySelectorAll("[data-proof]")) {
    if (!(window.crypto && crypto.subtle)) {
      say(box, false, "not checked: this browser offers WebCrypto only to secure pages (HTTPS or localhost)");
      continue;
    }
    try {
      await (box.dataset.proof === "inclusion" ? checkInclusion(box) : checkConsistency(box));
    } catch (error) {
      say(box, false, `failed: ${error.message}`);
    }
  }
}

document.addEventListener("DOMContentLoaded", checkAll);
