"""Ratified lexicon packs: a folder with `manifest.json` and a checksummed `lexicon.jsonl`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson

from store.model.canonical import sha256_hex
from store.model.dropped import DroppedLine, read_records
from store.model.fields import RecordError, json_object, required, string, strings

MANIFEST = "manifest.json"
LEXICON = "lexicon.jsonl"


class PackError(ValueError):
    """A pack that must not be used at all: unreadable, malformed manifest, or tampered."""


@dataclass(frozen=True, slots=True)
class LexiconEntry:
    entry_id: str
    surface: str
    lemma: str
    language: str
    pos: str
    semantic_domains: tuple[str, ...]
    morphology_tags: tuple[str, ...]
    provenance_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Pack:
    pack_id: str
    language: str
    version: str
    checksum: str
    provenance: str
    folder: Path
    entries: Mapping[str, LexiconEntry]  # keyed by lower-cased lemma; the last line wins
    dropped: tuple[DroppedLine, ...] = ()

    def entry(self, lemma: str) -> LexiconEntry | None:
        return self.entries.get(lemma.lower())

    def semantic_domains(self, lemma: str) -> tuple[str, ...]:
        entry = self.entry(lemma)
        return entry.semantic_domains if entry is not None else ()


def parse_lexicon_entry(value: Any) -> LexiconEntry:
    obj = json_object(value, "entry")

    def text(key: str) -> str:
        return string(required(obj, key, "entry"), f"entry.{key}", non_empty=True)

    def texts(key: str) -> tuple[str, ...]:
        return strings(required(obj, key, "entry"), f"entry.{key}")

    return LexiconEntry(
        entry_id=text("entry_id"),
        surface=text("surface"),
        lemma=text("lemma"),
        language=text("language"),
        pos=text("pos"),
        semantic_domains=texts("semantic_domains"),
        morphology_tags=texts("morphology_tags"),
        provenance_ids=texts("provenance_ids"),
    )


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
        keys = ("pack_id", "language", "version", "checksum", "provenance")
        return {k: string(required(obj, k, "manifest"), f"manifest.{k}", non_empty=True)
                for k in keys}
    except RecordError as exc:
        raise PackError(f"pack {folder.name!r}: {path}: {exc}") from exc


def load_pack(folder: Path) -> Pack:
    """Load and verify one pack folder; refuses a pack whose lexicon bytes fail its checksum."""
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
    with lexicon_path.open("rb") as stream:
        kept, dropped = read_records(stream, lexicon_path,
                                     lambda value, _: parse_lexicon_entry(value))
    entries = {entry.lemma.lower(): entry for entry in kept}  # a later line wins
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
