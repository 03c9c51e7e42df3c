"""Lexicon packs: a folder with `manifest.json` and a checksummed `lexicon.jsonl`, indexed the
way CORE's teaching loader indexes it (core-interop.md section 1)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson

from store.errors import InputError
from store.model.canonical import canonical, sha256_hex
from store.model.dropped import DroppedLine, Severity
from store.model.fields import RecordError, describe, json_object, required, string
from store.model.jsonl import iter_json_lines

MANIFEST = "manifest.json"
LEXICON = "lexicon.jsonl"


class PackError(InputError):
    """A pack that must not be used at all: unreadable, malformed manifest, or tampered."""


@dataclass(frozen=True, slots=True)
class LexiconEntry:
    """What teaching needs of one lexicon line: its index key and its domains."""

    key: str  # `lemma`, or `surface` when lemma is empty; lower-cased, not stripped
    semantic_domains: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True, eq=False)
class Pack:
    pack_id: str
    language: str
    version: str
    checksum: str  # the manifest's, verified equal to sha256 of the lexicon bytes
    provenance: str  # a string as given, any other JSON value in canonical JSON
    folder: Path
    entries: Mapping[str, LexiconEntry]  # the last qualifying line of each key wins
    dropped: tuple[DroppedLine, ...] = ()
    present: bool = True  # False: no such folder, so every corpus bound to it is empty

    def entry(self, lemma: str) -> LexiconEntry | None:
        return self.entries.get(lemma.lower())

    def semantic_domains(self, lemma: str) -> tuple[str, ...]:
        entry = self.entry(lemma)
        return entry.semantic_domains if entry is not None else ()


def absent_pack(folder: Path) -> Pack:
    """A bound pack that is not there: CORE gives its corpus no chains rather than failing."""
    return Pack(pack_id=folder.name, language="", version="", checksum="", provenance="",
                folder=folder, entries=MappingProxyType({}), present=False)


def _index_key(obj: dict[str, Any]) -> str:
    lemma, surface = obj.get("lemma"), obj.get("surface")
    for name, value in (("lemma", lemma), ("surface", surface)):
        if value is not None and not isinstance(value, str):
            raise RecordError(f"entry.{name}: expected a string, got {describe(value)}")
    return (lemma or surface or "").lower()


def index_lexicon(lines: bytes, source: Path
                  ) -> tuple[dict[str, LexiconEntry], list[DroppedLine]]:
    """Only `lemma`/`surface` and `semantic_domains` are read; other fields may be anything."""
    entries: dict[str, LexiconEntry] = {}
    dropped: list[DroppedLine] = []
    for line in iter_json_lines(io.BytesIO(lines)):
        if line.error is not None:
            dropped.append(DroppedLine(source, line.number, line.error))
            continue
        try:
            obj = json_object(line.value, "entry")
            key = _index_key(obj)
            domains = obj.get("semantic_domains")
            if not isinstance(domains, list) or not domains:
                # CORE skips it entirely: it cannot override an earlier line of its lemma.
                dropped.append(DroppedLine(
                    source, line.number,
                    f"entry {key!r}: semantic_domains is not a non-empty list: ignored",
                    Severity.WARNING))
                continue
            texts = tuple(string(d, f"entry.semantic_domains[{i}]")
                          for i, d in enumerate(domains))
        except RecordError as exc:
            dropped.append(DroppedLine(source, line.number, str(exc)))
            continue
        entries[key] = LexiconEntry(key, texts, line.number)
    return entries, dropped


def _provenance_text(value: Any) -> str:
    return value if isinstance(value, str) else canonical(value).decode("utf-8")


def _read_manifest(folder: Path) -> dict[str, str]:
    path = folder / MANIFEST
    try:
        value = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise PackError(f"pack {folder.name!r}: cannot read {path}: {exc.strerror}") from exc
    except orjson.JSONDecodeError as exc:
        raise PackError(f"pack {folder.name!r}: {path} is not valid JSON: {exc}") from exc
    try:
        obj = json_object(value, "manifest")
        keys = ("pack_id", "language", "version", "checksum")
        manifest = {k: string(required(obj, k, "manifest"), f"manifest.{k}", non_empty=True)
                    for k in keys}
    except RecordError as exc:
        raise PackError(f"pack {folder.name!r}: {path}: {exc}") from exc
    manifest["provenance"] = _provenance_text(obj.get("provenance", ""))
    return manifest


def load_pack(folder: Path) -> Pack:
    """Load and verify one pack folder; refuses a pack whose lexicon bytes fail its checksum
    (CORE's pack compiler aborts start-up on that, though its teaching loader never checks)."""
    manifest = _read_manifest(folder)
    pack_id = manifest["pack_id"]
    # Corpora bind a pack by id and it is found by folder name: the two must agree.
    if pack_id != folder.name:
        raise PackError(f"pack {folder.name!r}: manifest names pack_id {pack_id!r}")
    lexicon_path = folder / LEXICON
    try:
        lexicon = lexicon_path.read_bytes()
    except OSError as exc:
        raise PackError(f"pack {pack_id!r}: cannot read {lexicon_path}: {exc.strerror}") from exc
    actual = sha256_hex(lexicon)
    if actual != manifest["checksum"]:
        raise PackError(
            f"pack {pack_id!r} refused: manifest checksum {manifest['checksum']} does not match"
            f" sha256 {actual} of {lexicon_path}"
        )
    entries, dropped = index_lexicon(lexicon, lexicon_path)
    return Pack(
        pack_id=pack_id,
        language=manifest["language"],
        version=manifest["version"],
        checksum=manifest["checksum"],
        provenance=manifest["provenance"],
        folder=folder,
        entries=MappingProxyType(entries),
        dropped=tuple(dropped),
    )


def load_bound_pack(folder: Path) -> Pack:
    """A pack a corpus is bound to: absent when its folder is missing, else `load_pack`."""
    return load_pack(folder) if folder.is_dir() else absent_pack(folder)
