// core-audit console: /keys, the log and witness keys (and the witness quorum) the auditor pins
// in this browser's localStorage. Pinning is an explicit act, after the key's fingerprint is
// shown; a key may come from the URL's fragment (never sent to the server), only to fill the form.
"use strict";

const K = globalThis.tlogVerify;
const PINS_KEY = "core-audit.pins";

function readPins() {
  try {
    const pins = JSON.parse(localStorage.getItem(PINS_KEY) || "{}");
    return { logKeys: pins.logKeys || [], witnessKeys: pins.witnessKeys || [],
             quorum: Number.isInteger(pins.quorum) ? pins.quorum : 0 };
  } catch {
    return { logKeys: [], witnessKeys: [], quorum: 0 };
  }
}

const writePins = (pins) => localStorage.setItem(PINS_KEY, JSON.stringify(pins));

async function showPins() {
  const pins = readPins();
  const list = document.querySelector(".pinned");
  list.replaceChildren();
  for (const [role, field] of [["log", "logKeys"], ["witness", "witnessKeys"]]) {
    for (const text of pins[field]) {
      const item = document.createElement("li");
      let label;
      try {
        const key = await K.parseVerifierKey(text);
        label = `${role} key ${key.name} (${key.typeName}), SHA-256 fingerprint ${key.fingerprint}`;
      } catch (error) {
        label = `${role} key that no longer parses (${error.message}): ${text.slice(0, 80)}`;
      }
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = "Unpin";
      button.addEventListener("click", () => {
        const now = readPins();
        now[field] = now[field].filter((t) => t !== text);
        writePins(now);
        showPins();
      });
      item.append(label, " ", button);
      list.append(item);
    }
  }
  if (!list.children.length) {  // a list holds items only (axe: list)
    const none = document.createElement("li");
    none.textContent = "No key is pinned: pages say their tree heads are backed by the server's word only.";
    list.append(none);
  }
  document.querySelector(".pinned-quorum").textContent =
    `Witness quorum: ${pins.quorum} of the ${pins.witnessKeys.length} pinned witnesses must have cosigned.`;
  document.querySelector("#quorum").value = String(pins.quorum);
}

let shown = null;

async function showKey() {
  const result = document.querySelector(".key-result");
  const pin = document.querySelector(".pin-key");
  shown = null;
  pin.disabled = true;
  document.querySelector(".key-shown").hidden = true;
  try {
    const key = await K.parseVerifierKey(document.querySelector("#key-text").value);
    const role = document.querySelector("input[name=role]:checked").value;
    if (role === "log" && key.type !== 1) throw new Error("a log's key is of type 0x01 (Ed25519); this one is a witness's cosigning key");
    document.querySelector(".key-name").textContent = key.name;
    document.querySelector(".key-type").textContent = `0x0${key.type} ${key.typeName}`;
    document.querySelector(".key-hash").textContent = K.hex(key.keyHash);
    document.querySelector(".key-fingerprint").textContent = key.fingerprint;
    document.querySelector(".key-shown").hidden = false;
    shown = { key, role };
    pin.disabled = false;
    result.textContent = "Compare the fingerprint with the one you were given, then pin.";
  } catch (error) {
    result.textContent = `Not a verifier key: ${error.message}`;
  }
}

function pinShown() {
  if (shown === null) return;
  const pins = readPins();
  const field = shown.role === "log" ? "logKeys" : "witnessKeys";
  if (!pins[field].includes(shown.key.text)) pins[field].push(shown.key.text);
  writePins(pins);
  document.querySelector(".key-result").textContent =
    `Pinned ${shown.role} key ${shown.key.name}, fingerprint ${shown.key.fingerprint}.`;
  shown = null;
  document.querySelector(".pin-key").disabled = true;
  showPins();
}

function setQuorum() {
  const text = document.querySelector("#quorum").value.trim();
  const pins = readPins();
  if (!/^(0|[1-9][0-9]{0,2})$/.test(text) || Number(text) > pins.witnessKeys.length) {
    document.querySelector(".pinned-quorum").textContent =
      `A quorum is a whole number from 0 to the ${pins.witnessKeys.length} pinned witnesses.`;
    return;
  }
  pins.quorum = Number(text);
  writePins(pins);
  showPins();
}

function fromFragment() {
  // Not URLSearchParams: it reads '+' as a space, and keys are full of '+'.
  const given = new Map(location.hash.slice(1).split("&").filter(Boolean).map((part) => {
    const cut = part.indexOf("=");
    return cut < 0 ? [part, ""] : [part.slice(0, cut), decodeURIComponent(part.slice(cut + 1))];
  }));
  const key = given.get("log") || given.get("witness");
  if (key) {
    document.querySelector("#key-text").value = key;
    document.querySelector(`input[name=role][value=${given.get("log") ? "log" : "witness"}]`).checked = true;
    showKey();
  }
  if (given.get("quorum")) document.querySelector("#quorum").value = given.get("quorum");
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelector(".show-key").addEventListener("click", showKey);
  document.querySelector(".pin-key").addEventListener("click", pinShown);
  document.querySelector(".set-quorum").addEventListener("click", setQuorum);
  document.querySelector("#key-text").addEventListener("input", () => {
    shown = null;
    document.querySelector(".pin-key").disabled = true;
  });
  showPins().then(fromFragment);
});
