"""The cross-pack corpus (ADR-0067, core-interop.md section 3.5): not registered, each line
names a subject pack and an object pack; the first line of a key wins."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Final

from store.model.chain_lines import (
    ChainKey,
    CorpusError,
    InactiveChain,
    NormalisedLine,
    TeachingChain,
    chain_id_of,
    chain_of_line,
    lines_with_intent,
    read_corpus_file,
)
from store.model.corpora import CorpusRegistration, PackSource, TeachingCorpus
from store.model.dropped import DroppedLine, Severity
from store.model.packs import Pack

CROSS_PACK_CORPUS_ID: Final = "cross_pack_chains_v1"


def _pack_ids(line: NormalisedLine) -> tuple[str, str] | DroppedLine:
    ids: list[str] = []
    for key in ("subject_pack_id", "object_pack_id"):
        value = line.obj.get(key)
        if not isinstance(value, str) or not value:
            return line.note(f"chain.{key}: a cross-pack line needs a pack id")
        if value in {".", ".."} or "/" in value or "\\" in value:
            return line.note(f"chain.{key}: {value!r} is not a plain name")
        ids.append(value)
    if ids[0] == ids[1]:
        return line.note(f"chain: subject_pack_id and object_pack_id are both {ids[0]!r}")
    return ids[0], ids[1]


def _unknown_lemma(line: NormalisedLine, subject_pack: Pack, object_pack: Pack
                   ) -> DroppedLine | None:
    for role, lemma, pack in (("subject", line.subject, subject_pack),
                              ("object", line.object, object_pack)):
        if pack.entry(lemma) is None:
            return line.note(f"chain.{role}: {lemma!r} is not a lemma with semantic_domains"
                             f" in pack {pack.pack_id!r}")
    return None


def load_cross_pack_corpus(path: Path, pack_source: PackSource,
                           corpus_id: str = CROSS_PACK_CORPUS_ID) -> TeachingCorpus:
    """Same two passes as a registered corpus, with section 3.5's differences."""
    registration = CorpusRegistration(corpus_id, path, "")
    read = read_corpus_file(path)
    notes: list[DroppedLine] = list(read.dropped)
    if not read.sha256:
        notes.append(DroppedLine(path, 0, "the cross-pack corpus file is missing: no"
                                          " cross-pack chains", Severity.WARNING))
    first: dict[ChainKey, TeachingChain] = {}
    inactive: list[InactiveChain] = []
    for line, intent in lines_with_intent(read.lines, notes):
        ids = _pack_ids(line)
        if isinstance(ids, DroppedLine):
            notes.append(ids)
            continue
        unknown = _unknown_lemma(line, pack_source(ids[0]), pack_source(ids[1]))
        if unknown is not None:
            notes.append(unknown)
            continue
        chain_id = chain_id_of(line, f"{line.subject}_{intent.value}_{line.object}")
        chain = chain_of_line(line, intent, chain_id, read.retired, notes,
                              corpus_id=corpus_id, packs=ids)
        if chain is None:
            continue
        earlier = first.get(chain.key)
        if earlier is not None:
            inactive.append(InactiveChain(chain, f"line {earlier.line} has this key first"))
            continue
        first[chain.key] = chain
    return TeachingCorpus(registration, None, MappingProxyType(first), tuple(notes),
                          tuple(inactive), read.sha256)


__all__ = ["CROSS_PACK_CORPUS_ID", "CorpusError", "load_cross_pack_corpus"]
