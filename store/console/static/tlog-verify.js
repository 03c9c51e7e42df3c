// core-audit console: the checks an auditor's browser runs, with WebCrypto only (SHA-256 and
// Ed25519; no library): RFC 9162 inclusion and consistency proofs, C2SP signed notes
// (tlog-checkpoint bodies), note verifier keys and tlog-cosignature/v1 witness cosignatures.
// Pure functions over bytes and text; the pages' logic is in proof-check.js and keys.js.
// Loaded as a classic script (global `tlogVerify`) and, in the tests, by Node (module.exports).
"use strict";

(function (exports) {
  const encoder = new TextEncoder();
  const subtle = () => globalThis.crypto.subtle;

  function hex(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function fromHex(text, what) {
    if (!/^[0-9a-f]{64}$/.test(text)) {
      throw new Error(`${what} is not 64 lowercase hex digits: ${String(text).slice(0, 80)}`);
    }
    const out = new Uint8Array(32);
    for (let i = 0; i < 32; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
    return out;
  }

  // Strict base64: one spelling per value (canonical padding), as the signed-note spec reads it.
  function fromBase64(text, what) {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
      throw new Error(`${what} is not base64: ${text.slice(0, 80)}`);
    }
    const raw = atob(text);
    const out = Uint8Array.from(raw, (c) => c.charCodeAt(0));
    if (btoa(raw) !== text) throw new Error(`${what} is not canonical base64: ${text.slice(0, 80)}`);
    return out;
  }

  function concat(...parts) {
    const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) { joined.set(part, at); at += part.length; }
    return joined;
  }

  async function sha256(...parts) {
    return new Uint8Array(await subtle().digest("SHA-256", concat(...parts)));
  }

  const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
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

  // RFC 9162 section 2.1.4.2: [old root, new root] the path leads to, or an Error. With equal
  // sizes (or from 0) the path is empty and the new root is null: the caller compares roots.
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

  // Throws unless the path proves that the tree (second, secondRoot) extends (first, firstRoot)
  // (sizes BigInt, roots bytes); from size 0 anything extends the empty tree.
  async function checkConsistency(first, firstRoot, second, secondRoot, path) {
    const [oldRoot, newRoot] = await rootsFromConsistency(first, second, firstRoot, path);
    if (first === 0n) return;
    if (first === second) {
      if (!equal(firstRoot, secondRoot)) {
        throw new Error(`tree size ${first} has two roots: ${hex(firstRoot)} and ${hex(secondRoot)}`);
      }
      return;
    }
    if (!equal(oldRoot, firstRoot)) throw new Error(`the path leads to old root ${hex(oldRoot)}, not ${hex(firstRoot)}`);
    if (!equal(newRoot, secondRoot)) throw new Error(`the path leads to new root ${hex(newRoot)}, not ${hex(secondRoot)}`);
  }

  const KEY_TYPES = { 1: "Ed25519", 4: "Ed25519 cosignature/v1" };

  function checkName(name, what) {
    if (!name || /[\s+]/.test(name) || /[\x00-\x1f\x7f]/.test(name)) {
      throw new Error(`${what} ${JSON.stringify(name.slice(0, 80))} must be non-empty, printable, no space or '+'`);
    }
  }

  // A C2SP signed-note verifier key `<name>+<key hash hex>+<base64(type ‖ 32-byte key)>`,
  // type 0x01 (a log's or a witness's Ed25519 key) or 0x04 (a witness's cosignature/v1 key).
  async function parseVerifierKey(text) {
    const trimmed = String(text).trim();
    if (trimmed.startsWith("PRIVATE+KEY+")) throw new Error("this is a signer key (secret): give its verifier key, PREFIX.pub");
    const first = trimmed.indexOf("+"), second = trimmed.indexOf("+", first + 1);
    if (first < 0 || second < 0) throw new Error("a verifier key is '<name>+<hash>+<base64 key>'");
    const name = trimmed.slice(0, first), hashHex = trimmed.slice(first + 1, second);
    checkName(name, "key name");
    if (!/^[0-9a-f]{8}$/.test(hashHex)) throw new Error(`key hash ${hashHex.slice(0, 80)} is not 8 lowercase hex digits`);
    const raw = fromBase64(trimmed.slice(second + 1), "key material");
    if (raw.length !== 33 || !(raw[0] in KEY_TYPES)) throw new Error("not an Ed25519 key (type 0x01 or 0x04, and 32 bytes)");
    const keyHash = (await sha256(encoder.encode(name + "\n"), raw)).slice(0, 4);
    if (hex(keyHash) !== hashHex) throw new Error(`key hash ${hashHex} does not match its name and key`);
    return {
      text: trimmed, name, type: raw[0], typeName: KEY_TYPES[raw[0]], publicKey: raw.slice(1),
      keyHash,
      // What the auditor compares with the key they were given, out of band.
      fingerprint: hex(await sha256(raw)),
    };
  }

  // A signed note: body (ending "\n"), blank line, "— <name> <base64(key hash ‖ signature)>"
  // lines. The body is a tlog-checkpoint: origin, decimal size, base64 root, then extension
  // lines (opaque, signed with the rest).
  function parseCheckpoint(text) {
    if (!text.endsWith("\n")) throw new Error("the checkpoint does not end with a newline");
    const cut = text.lastIndexOf("\n\n");
    if (cut < 0) throw new Error("the checkpoint has no blank line after its body");
    const body = text.slice(0, cut + 1);
    const lines = body.split("\n").slice(0, -1);
    if (lines.length < 3) throw new Error(`the checkpoint has ${lines.length} body lines; it needs origin, size and root`);
    const [origin, sizeText, rootText] = lines;
    if (!origin) throw new Error("the checkpoint's origin line is empty");
    if (!/^(0|[1-9][0-9]{0,18})$/.test(sizeText) || BigInt(sizeText) >= (1n << 63n)) {
      throw new Error(`tree size ${sizeText.slice(0, 80)} is not a decimal below 2**63`);
    }
    const root = fromBase64(rootText, "root hash");
    if (root.length !== 32) throw new Error(`the root hash is ${root.length} bytes, not 32`);
    const signatures = text.slice(cut + 2).split("\n").slice(0, -1).map((line) => {
      const match = /^\u2014 (\S+) (\S+)$/.exec(line);
      if (!match) throw new Error(`a signature line is not '— <name> <base64>': ${line.slice(0, 80)}`);
      const blob = fromBase64(match[2], "signature");
      if (blob.length < 5) throw new Error(`the signature by ${match[1]} is too short`);
      return { name: match[1], keyHash: blob.slice(0, 4), signature: blob.slice(4) };
    });
    return { text, body, origin, size: BigInt(sizeText), root, signatures };
  }

  async function ed25519Verify(publicKey, signature, message) {
    const key = await subtle().importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    return subtle().verify({ name: "Ed25519" }, key, signature, message);
  }

  // The timestamp of `line` if it is `key`'s valid signature of `body` (a log's or 0x01
  // witness's note signature: timestamp null; a 0x04 cosignature/v1: its POSIX time), or false.
  async function signatureBy(key, line, body) {
    if (line.name !== key.name || !equal(line.keyHash, key.keyHash)) return false;
    if (key.type === 4) {
      if (line.signature.length !== 72) return false;
      const time = new DataView(line.signature.buffer, line.signature.byteOffset).getBigUint64(0);
      if (time >= (1n << 63n)) return false;
      const message = encoder.encode(`cosignature/v1\ntime ${time}\n${body}`);
      return (await ed25519Verify(key.publicKey, line.signature.slice(8), message)) ? time : false;
    }
    if (line.signature.length !== 64) return false;
    return (await ed25519Verify(key.publicKey, line.signature, encoder.encode(body))) ? null : false;
  }

  // Checks a checkpoint note against the auditor's pins: one of `logKeys` (type 0x01, named as
  // the checkpoint's origin, as tlog-policy asks) must have signed it; the pinned witnesses that
  // cosigned it are counted by key, and `quorum` of them are needed. Throws what failed.
  async function verifyCheckpoint(text, logKeys, witnessKeys, quorum) {
    const checkpoint = parseCheckpoint(text);
    const named = logKeys.filter((k) => k.type === 1 && k.name === checkpoint.origin);
    if (named.length === 0) {
      throw new Error(`no pinned log key is named ${JSON.stringify(checkpoint.origin)}, the checkpoint's origin`);
    }
    let signer = null;
    for (const key of named) {
      for (const line of checkpoint.signatures) {
        if (signer === null && (await signatureBy(key, line, checkpoint.body)) !== false) signer = key;
      }
    }
    if (signer === null) {
      throw new Error(`the checkpoint carries no valid signature by the pinned key ${named.map((k) => `${k.name} (${k.fingerprint.slice(0, 16)}…)`).join(", ")}`);
    }
    const witnesses = [];
    const counted = new Set();
    for (const key of witnessKeys) {
      const id = hex(key.publicKey);
      if (counted.has(id)) continue;
      for (const line of checkpoint.signatures) {
        const time = await signatureBy(key, line, checkpoint.body);
        if (time !== false && !counted.has(id)) {
          counted.add(id);
          witnesses.push({ key, time });
        }
      }
    }
    if (witnesses.length < quorum) {
      throw new Error(`${witnesses.length} of the pinned witnesses cosigned it (${witnesses.map((w) => w.key.name).join(", ") || "none"}); the quorum you set is ${quorum}`);
    }
    return { checkpoint, signer, witnesses };
  }

  Object.assign(exports, {
    hex, fromHex, fromBase64, sha256, leafHash, nodeHash, rootFromInclusion, rootsFromConsistency,
    checkConsistency, parseVerifierKey, parseCheckpoint, ed25519Verify, verifyCheckpoint, equal,
  });
})(typeof module === "object" && module.exports ? module.exports : (globalThis.tlogVerify = {}));
