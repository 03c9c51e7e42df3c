"""Reviewed teaching corpora (ADR-0052): the registry, its chains, and the load-time rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson

from store.model.dropped import DroppedLine, read_records
from store.model.fields import RecordError, integer, json_list, json_object, required, string
from store.model.packs import Pack, load_pack
from store.model.predicates import is_connective

REGISTRY = "corpora.json"


class CorpusError(ValueError):
    """A registry or corpus file that cannot be used at all (as opposed to one bad line)."""


class TeachingIntent(StrEnum):
    CAUSE = "cause"
    VERIFICATION = "verification"


def parse_intent(value: object) -> TeachingIntent | None:
    """Lower-cased and stripped; CORE's `IntentTag.CAUSE` and "CAUSE" both read as cause."""
    if isinstance(value, Enum):
        value = value.value
    if not isinstance(value, str):
        return None
    try:
        return TeachingIntent(value.strip().lower())
    except ValueError:
        return None


def lemma_key(text: str) -> str:
    """How subjects and objects are matched: lower-cased and stripped."""
    return text.strip().lower()


ChainKey = tuple[str, TeachingIntent]


@dataclass(frozen=True, slots=True)
class TeachingChain:
    corpus_id: str
    chain_id: str
    subject: str  # lemma_key form
    intent: TeachingIntent
    connective: str
    object: str  # lemma_key form
    domains_subject_k: int
    domains_object_k: int
    provenance: str
    superseded_by: str | None
    source: Path
    line: int

    @property
    def key(self) -> ChainKey:
        return (self.subject, self.intent)


@dataclass(frozen=True, slots=True)
class InactiveChain:
    """A valid chain that does not resolve: overridden, retired, or shadowed by a corpus."""

    chain: TeachingChain
    reason: str


@dataclass(frozen=True, slots=True)
class CorpusRegistration:
    corpus_id: str
    path: Path
    pack_id: str


@dataclass(frozen=True, slots=True, eq=False)
class TeachingCorpus:
    registration: CorpusRegistration
    pack: Pack
    chains: Mapping[ChainKey, TeachingChain]  # the active chains only
    dropped: tuple[DroppedLine, ...]
    inactive: tuple[InactiveChain, ...]

    @property
    def corpus_id(self) -> str:
        return self.registration.corpus_id


def _plain_name(value: str, where: str) -> str:
    # Ids name folders and files; a separator or `..` would reach outside the data dirs.
    if value in {".", ".."} or "/" in value or "\\" in value:
        raise RecordError(f"{where}: {value!r} is not a plain name")
    return value


def read_registrations(teaching_dir: Path) -> tuple[CorpusRegistration, ...]:
    """`corpora.json` in resolution order: `{"corpora": [{"corpus_id", "path", "pack_id"}]}`."""
    path = teaching_dir / REGISTRY
    try:
        value = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from exc
    except orjson.JSONDecodeError as exc:
        raise CorpusError(f"{path}: not valid JSON: {exc}") from exc
    registrations: list[CorpusRegistration] = []
    try:
        items = json_list(required(json_object(value, "registry"), "corpora", "registry"),
                          "corpora")
        for i, item in enumerate(items):
            where = f"corpora[{i}]"
            obj = json_object(item, where)
            corpus_id = string(required(obj, "corpus_id", where), f"{where}.corpus_id",
                               non_empty=True)
            relative = string(required(obj, "path", where), f"{where}.path", non_empty=True)
            pack_id = string(required(obj, "pack_id", where), f"{where}.pack_id", non_empty=True)
            _plain_name(pack_id, f"{where}.pack_id")
            if Path(relative).is_absolute():
                raise RecordError(f"{where}.path: {relative!r} must be relative to {teaching_dir}")
            if any(r.corpus_id == corpus_id for r in registrations):
                raise RecordError(f"{where}.corpus_id: {corpus_id!r} is registered twice")
            registrations.append(CorpusRegistration(corpus_id, teaching_dir / relative, pack_id))
    except RecordError as exc:
        raise CorpusError(f"{path}: {exc}") from exc
    return tuple(registrations)


def _text(obj: dict[str, Any], key: str) -> str:
    return string(required(obj, key, "chain"), f"chain.{key}", non_empty=True)


def parse_chain(value: Any, corpus_id: str, source: Path, line: int) -> TeachingChain:
    """Shape only; `admission_problem` applies the rules that need the pack."""
    obj = json_object(value, "chain")
    raw_intent = _text(obj, "intent")
    intent = parse_intent(raw_intent)
    if intent is None:
        raise RecordError(f"chain.intent: {raw_intent!r} is not cause or verification")
    superseded_by = obj.get("superseded_by")
    if superseded_by is not None:
        superseded_by = string(superseded_by, "chain.superseded_by", non_empty=True)
    return TeachingChain(
        corpus_id=corpus_id,
        chain_id=_text(obj, "chain_id"),
        subject=lemma_key(_text(obj, "subject")),
        intent=intent,
        connective=_text(obj, "connective"),
        object=lemma_key(_text(obj, "object")),
        domains_subject_k=integer(required(obj, "domains_subject_k", "chain"),
                                  "chain.domains_subject_k"),
        domains_object_k=integer(required(obj, "domains_object_k", "chain"),
                                 "chain.domains_object_k"),
        provenance=_text(obj, "provenance"),
        superseded_by=superseded_by,
        source=source,
        line=line,
    )


def admission_problem(chain: TeachingChain, pack: Pack) -> str | None:
    """Why ADR-0052 refuses `chain` against its bound pack, or None when it is admitted."""
    for role, lemma in (("subject", chain.subject), ("object", chain.object)):
        entry = pack.entry(lemma)
        if entry is None:
            return f"chain.{role}: {lemma!r} is not a lemma of pack {pack.pack_id!r}"
        if not entry.semantic_domains:
            return f"chain.{role}: {lemma!r} has no semantic_domains in pack {pack.pack_id!r}"
    if not is_connective(chain.connective):
        return f"chain.connective: {chain.connective!r} is not recognised by humanize_predicate"
    return None


def _read_lines(registration: CorpusRegistration, pack: Pack
                ) -> tuple[list[TeachingChain], list[DroppedLine]]:
    source = registration.path

    def admitted_chain(value: Any, number: int) -> TeachingChain:
        chain = parse_chain(value, registration.corpus_id, source, number)
        problem = admission_problem(chain, pack)
        if problem is not None:
            raise RecordError(problem)
        return chain

    try:
        stream = source.open("rb")
    except OSError as exc:
        raise CorpusError(
            f"corpus {registration.corpus_id!r}: cannot read {source}: {exc.strerror}"
        ) from exc
    with stream:
        return read_records(stream, source, admitted_chain)


def load_corpus(registration: CorpusRegistration, pack: Pack) -> TeachingCorpus:
    """Admit, then last line wins per (subject, intent), then apply supersession."""
    if pack.pack_id != registration.pack_id:
        raise CorpusError(
            f"corpus {registration.corpus_id!r} is bound to pack {registration.pack_id!r},"
            f" not {pack.pack_id!r}"
        )
    admitted, dropped = _read_lines(registration, pack)
    inactive: list[InactiveChain] = []
    latest: dict[ChainKey, TeachingChain] = {}
    for chain in admitted:
        earlier = latest.get(chain.key)
        if earlier is not None:
            inactive.append(InactiveChain(earlier, f"overridden by line {chain.line}"))
        latest[chain.key] = chain
    # Only admitted lines retire, and a line naming its own chain_id does not retire itself.
    retirers: dict[str, list[TeachingChain]] = {}
    for chain in admitted:
        if chain.superseded_by is not None:
            retirers.setdefault(chain.superseded_by, []).append(chain)
    active: dict[ChainKey, TeachingChain] = {}
    for key, chain in latest.items():
        by = next((r for r in retirers.get(chain.chain_id, ()) if r is not chain), None)
        if by is not None:
            inactive.append(InactiveChain(
                chain, f"retired by chain {by.chain_id!r} (line {by.line}, superseded_by)"))
        else:
            active[key] = chain
    inactive.sort(key=lambda c: c.chain.line)
    return TeachingCorpus(
        registration=registration,
        pack=pack,
        chains=MappingProxyType(active),
        dropped=tuple(dropped),
        inactive=tuple(inactive),
    )


@dataclass(frozen=True, slots=True, eq=False)
class TeachingRegistry:
    """Every registered corpus with its pack; `chains` resolves across corpora."""

    corpora: tuple[TeachingCorpus, ...]
    packs: Mapping[str, Pack]
    chains: Mapping[ChainKey, TeachingChain]  # earlier corpus wins a collision
    shadowed: tuple[InactiveChain, ...]

    def chain(self, subject: str, intent: object) -> TeachingChain | None:
        parsed = parse_intent(intent)
        if parsed is None or not isinstance(subject, str):
            return None
        return self.chains.get((lemma_key(subject), parsed))

    def corpus(self, corpus_id: str) -> TeachingCorpus:
        for corpus in self.corpora:
            if corpus.corpus_id == corpus_id:
                return corpus
        raise KeyError(corpus_id)

    def pack_of(self, chain: TeachingChain) -> Pack:
        return self.corpus(chain.corpus_id).pack

    @property
    def dropped(self) -> tuple[DroppedLine, ...]:
        from_packs = tuple(line for pack in self.packs.values() for line in pack.dropped)
        return from_packs + tuple(line for c in self.corpora for line in c.dropped)

    @property
    def inactive(self) -> tuple[InactiveChain, ...]:
        return tuple(i for c in self.corpora for i in c.inactive) + self.shadowed


def load_teaching_registry(teaching_dir: Path, packs_dir: Path) -> TeachingRegistry:
    """Load `corpora.json`, each bound pack once, and each corpus, in registration order.

    Raises CorpusError or PackError when a file cannot be used at all; bad lines are
    dropped and listed in `dropped`.
    """
    packs: dict[str, Pack] = {}
    corpora: list[TeachingCorpus] = []
    for registration in read_registrations(teaching_dir):
        pack = packs.get(registration.pack_id)
        if pack is None:
            pack = packs[registration.pack_id] = load_pack(packs_dir / registration.pack_id)
        corpora.append(load_corpus(registration, pack))
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
        packs=MappingProxyType(packs),
        chains=MappingProxyType(resolved),
        shadowed=tuple(shadowed),
    )
