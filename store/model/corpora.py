"""Teaching corpora bound to one pack each (ADR-0052, as CORE's loader applies it) and the
registry that resolves (subject, intent) across them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from store.model.chain_lines import (
    ChainKey,
    CorpusError,
    InactiveChain,
    TeachingChain,
    TeachingIntent,
    chain_id_of,
    chain_of_line,
    lemma_key,
    lines_with_intent,
    parse_intent,
    read_corpus_file,
)
from store.model.dropped import DroppedLine, Severity
from store.model.packs import Pack

__all__ = [
    "ChainKey", "CorpusError", "CorpusRegistration", "InactiveChain", "TeachingChain",
    "TeachingCorpus", "TeachingIntent", "TeachingRegistry", "lemma_key", "load_corpus",
    "parse_intent",
]

PackSource = Callable[[str], Pack]  # pack_id -> the pack, loaded once per registry


@dataclass(frozen=True, slots=True)
class CorpusRegistration:
    corpus_id: str
    path: Path
    pack_id: str  # "" for the cross-pack corpus, whose lines name their own packs


@dataclass(frozen=True, slots=True, eq=False)
class TeachingCorpus:
    registration: CorpusRegistration
    pack: Pack | None  # None for the cross-pack corpus
    chains: Mapping[ChainKey, TeachingChain]  # the valid, non-retired winners
    dropped: tuple[DroppedLine, ...]  # errors and warnings, FILE:LINE: reason
    inactive: tuple[InactiveChain, ...]
    sha256: str  # of the corpus file bytes; "" when the file is missing

    @property
    def corpus_id(self) -> str:
        return self.registration.corpus_id

    @property
    def cross_pack(self) -> bool:
        return self.pack is None


def load_corpus(registration: CorpusRegistration, pack: Pack) -> TeachingCorpus:
    """CORE's per-file load: retirements first, then the last valid non-retired line wins."""
    if pack.pack_id != registration.pack_id:
        raise CorpusError(
            f"corpus {registration.corpus_id!r} is bound to pack {registration.pack_id!r},"
            f" not {pack.pack_id!r}"
        )
    source = registration.path
    if not pack.entries:
        why = "is missing" if not pack.present else "has no usable lexicon lines"
        note = DroppedLine(source, 0, f"pack {pack.pack_id!r} {why}: the corpus has no chains",
                           Severity.ERROR if not pack.present else Severity.WARNING)
        return TeachingCorpus(registration, pack, MappingProxyType({}), (note,), (), "")
    read = read_corpus_file(source)
    notes: list[DroppedLine] = list(read.dropped)
    if not read.sha256:
        notes.append(DroppedLine(source, 0, f"corpus {registration.corpus_id!r}: the file is"
                                            " missing: the corpus has no chains",
                                 Severity.WARNING))
    latest: dict[ChainKey, TeachingChain] = {}
    inactive: list[InactiveChain] = []
    for line, intent in lines_with_intent(read.lines, notes):
        unknown = [(role, lemma) for role, lemma in (("subject", line.subject),
                                                      ("object", line.object))
                   if pack.entry(lemma) is None]
        if unknown:
            role, lemma = unknown[0]
            notes.append(line.note(f"chain.{role}: {lemma!r} is not a lemma with"
                                   f" semantic_domains in pack {pack.pack_id!r}"))
            continue
        chain = chain_of_line(line, intent, chain_id_of(line, f"{line.subject}_{intent.value}"),
                              read.retired, notes, corpus_id=registration.corpus_id,
                              packs=(pack.pack_id, pack.pack_id))
        if chain is None:
            continue
        earlier = latest.get(chain.key)
        if earlier is not None:
            inactive.append(InactiveChain(earlier, f"overridden by line {chain.line}"))
        latest[chain.key] = chain
    inactive.sort(key=lambda c: c.chain.line)
    return TeachingCorpus(registration, pack, MappingProxyType(latest), tuple(notes),
                          tuple(inactive), read.sha256)


@dataclass(frozen=True, slots=True, eq=False)
class TeachingRegistry:
    """Every registered corpus with its pack; `chains` resolves across corpora."""

    corpora: tuple[TeachingCorpus, ...]  # registered, in resolution order
    packs: Mapping[str, Pack]  # every pack a corpus or a cross-pack line uses
    chains: Mapping[ChainKey, TeachingChain]  # earlier corpus wins a collision
    shadowed: tuple[InactiveChain, ...]
    cross_pack: TeachingCorpus | None = None  # not registered: used when no chain resolves

    def in_pack_chain(self, subject: object, intent: object) -> TeachingChain | None:
        parsed = parse_intent(intent)
        if parsed is None or not isinstance(subject, str) or not lemma_key(subject):
            return None
        return self.chains.get((lemma_key(subject), parsed))

    def chain(self, subject: object, intent: object) -> TeachingChain | None:
        """What CORE serves for (subject, intent): an in-pack chain, else a cross-pack one."""
        found = self.in_pack_chain(subject, intent)
        if found is not None or self.cross_pack is None:
            return found
        parsed = parse_intent(intent)
        if parsed is None or not isinstance(subject, str):
            return None
        return self.cross_pack.chains.get((lemma_key(subject), parsed))

    def corpus(self, corpus_id: str) -> TeachingCorpus:
        for corpus in self.all_corpora:
            if corpus.corpus_id == corpus_id:
                return corpus
        raise KeyError(corpus_id)

    @property
    def all_corpora(self) -> tuple[TeachingCorpus, ...]:
        return self.corpora + ((self.cross_pack,) if self.cross_pack is not None else ())

    def pack_of(self, chain: TeachingChain) -> Pack:
        """The pack D(S) comes from (the bound pack of an in-pack chain)."""
        return self.packs[chain.subject_pack_id]

    def object_pack_of(self, chain: TeachingChain) -> Pack:
        return self.packs[chain.object_pack_id]

    @property
    def dropped(self) -> tuple[DroppedLine, ...]:
        from_packs = tuple(line for pack in self.packs.values() for line in pack.dropped)
        return from_packs + tuple(line for c in self.all_corpora for line in c.dropped)

    @property
    def errors(self) -> tuple[DroppedLine, ...]:
        return tuple(d for d in self.dropped if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[DroppedLine, ...]:
        return tuple(d for d in self.dropped if d.severity is Severity.WARNING)

    @property
    def inactive(self) -> tuple[InactiveChain, ...]:
        return tuple(i for c in self.all_corpora for i in c.inactive) + self.shadowed


def assemble_registry(corpora: list[TeachingCorpus], packs: Mapping[str, Pack],
                      cross_pack: TeachingCorpus | None) -> TeachingRegistry:
    """Registration order is resolution order: the first corpus with a key keeps it."""
    resolved: dict[ChainKey, TeachingChain] = {}
    shadowed: list[InactiveChain] = []
    for corpus in corpora:
        for key, chain in corpus.chains.items():
            winner = resolved.get(key)
            if winner is None:
                resolved[key] = chain
            else:
                shadowed.append(InactiveChain(
                    chain, f"shadowed by corpus {winner.corpus_id!r} (registered earlier)"))
    return TeachingRegistry(
        corpora=tuple(corpora),
        packs=MappingProxyType(dict(packs)),
        chains=MappingProxyType(resolved),
        shadowed=tuple(shadowed),
        cross_pack=cross_pack,
    )
