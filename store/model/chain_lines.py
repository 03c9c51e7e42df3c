"""One teaching corpus file read the way CORE reads it (core-interop.md section 2): pass 1
collects retirements, pass 2 normalises each line; the pack rules are the caller's."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

from store.errors import InputError
from store.model.canonical import sha256_hex
from store.model.dropped import DroppedLine, Severity
from store.model.fields import describe
from store.model.jsonl import iter_json_lines
from store.model.predicates import is_connective


class CorpusError(InputError):
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
    connective: str  # stripped, case kept
    object: str  # lemma_key form
    domains_subject_k: int
    domains_object_k: int
    provenance: str  # str() of the value: null reads "None", a missing one ""
    superseded_by: str | None
    source: Path
    line: int
    subject_pack_id: str  # where D(S) comes from: the bound pack, or a cross-pack line's own
    object_pack_id: str

    @property
    def key(self) -> ChainKey:
        return (self.subject, self.intent)


@dataclass(frozen=True, slots=True)
class InactiveChain:
    """A valid chain that does not resolve: overridden, or shadowed by a corpus."""

    chain: TeachingChain
    reason: str


@dataclass(frozen=True, slots=True)
class NormalisedLine:
    """Pass 2's view of one object line: the four text fields normalised, nothing checked."""

    source: Path
    line: int
    obj: dict[str, Any]
    subject: str
    intent: str
    connective: str
    object: str

    def note(self, reason: str, severity: Severity = Severity.ERROR) -> DroppedLine:
        return DroppedLine(self.source, self.line, reason, severity)


@dataclass(frozen=True, slots=True)
class CorpusFile:
    path: Path
    sha256: str  # of the file bytes; "" when the file is missing
    lines: tuple[NormalisedLine, ...]
    retired: dict[str, int]  # chain_id -> the first line whose superseded_by names it
    dropped: tuple[DroppedLine, ...]  # lines that are not JSON objects


TEXT_FIELDS = ("subject", "intent", "connective", "object")


def _normalise(obj: dict[str, Any], source: Path, number: int) -> NormalisedLine:
    texts: dict[str, str] = {}
    for key in TEXT_FIELDS:
        value = obj.get(key, "")
        if not isinstance(value, str):
            # CORE calls .strip() on it and its load dies: nothing of the corpus is served.
            raise CorpusError(f"{source}:{number}: chain.{key}: expected a string,"
                              f" got {describe(value)} (CORE aborts loading this corpus)")
        texts[key] = value.strip() if key == "connective" else lemma_key(value)
    return NormalisedLine(source, number, obj, **texts)


def read_corpus_file(path: Path) -> CorpusFile:
    """Both passes' shared reading; a missing file is an empty corpus (CORE's step 1)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return CorpusFile(path, "", (), {}, ())
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from exc
    objects: list[tuple[int, dict[str, Any]]] = []
    dropped: list[DroppedLine] = []
    retired: dict[str, int] = {}
    for line in iter_json_lines(io.BytesIO(data)):
        if line.error is not None:
            dropped.append(DroppedLine(path, line.number, line.error))
        elif not isinstance(line.value, dict):
            dropped.append(DroppedLine(path, line.number,
                                       f"expected an object, got {describe(line.value)}"))
        else:
            objects.append((line.number, line.value))
            # Pass 1: every object retires, even one pass 2 drops, even its own chain.
            by = line.value.get("superseded_by")
            if isinstance(by, str) and by.strip():
                retired.setdefault(by.strip(), line.number)
    lines = tuple(_normalise(obj, path, number) for number, obj in objects)
    return CorpusFile(path, sha256_hex(data), lines, retired, tuple(dropped))


def missing_fields(line: NormalisedLine) -> DroppedLine | None:
    empty = [key for key in TEXT_FIELDS if not getattr(line, key)]
    if empty:
        return line.note(f"chain: missing or empty {', '.join(empty)}")
    return None


def intent_of(line: NormalisedLine) -> TeachingIntent | DroppedLine:
    intent = parse_intent(line.intent)
    if intent is None:
        return line.note(f"chain.intent: {line.intent!r} is not cause or verification:"
                         " CORE skips the line", Severity.WARNING)
    return intent


def chain_id_of(line: NormalisedLine, default: str) -> str:
    """str() of a truthy value, not stripped; else the default id."""
    value = line.obj.get("chain_id")
    return str(value) if value else default


def retired_note(line: NormalisedLine, chain_id: str, retired: dict[str, int]
                 ) -> DroppedLine | None:
    by = retired.get(chain_id)
    if by is None:
        return None
    return line.note(f"chain {chain_id!r} is retired (superseded_by on line {by}):"
                     " CORE skips the line", Severity.WARNING)


def k_value(line: NormalisedLine, key: str, default: int) -> int | DroppedLine:
    """Python's int(): numeric strings accepted, floats truncated, null or other text drops."""
    value = line.obj.get(key, default)
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return line.note(f"chain.{key}: {value!r} is not a whole number")


def k_pair(line: NormalisedLine) -> tuple[int, int] | DroppedLine:
    """(domains_subject_k, domains_object_k), defaults 2 and 1."""
    ks = k_value(line, "domains_subject_k", 2)
    if isinstance(ks, DroppedLine):
        return ks
    ko = k_value(line, "domains_object_k", 1)
    return ko if isinstance(ko, DroppedLine) else (ks, ko)


def provenance_of(line: NormalisedLine) -> str:
    return str(line.obj.get("provenance", ""))


def connective_note(line: NormalisedLine) -> DroppedLine | None:
    if is_connective(line.connective):
        return None
    shown = line.connective.replace("_", " ")
    return line.note(f"chain.connective: {line.connective!r} is not one of humanize_predicate's"
                     f" 26: loaded, shown as {shown!r}", Severity.WARNING)


def chain_of_line(line: NormalisedLine, intent: TeachingIntent, chain_id: str,
                  retired: dict[str, int], notes: list[DroppedLine], *, corpus_id: str,
                  packs: tuple[str, str]) -> TeachingChain | None:
    """The rules every corpus file shares after its own lemma checks (spec section 2):
    retirement, k, the connective warning; None (and a note) for a dropped line."""
    found = retired_note(line, chain_id, retired)
    if found is not None:
        notes.append(found)
        return None
    ks_ko = k_pair(line)
    if isinstance(ks_ko, DroppedLine):
        notes.append(ks_ko)
        return None
    connective = connective_note(line)
    if connective is not None:
        notes.append(connective)
    superseded_by = line.obj.get("superseded_by")
    return TeachingChain(
        corpus_id=corpus_id, chain_id=chain_id, subject=line.subject, intent=intent,
        connective=line.connective, object=line.object, domains_subject_k=ks_ko[0],
        domains_object_k=ks_ko[1], provenance=provenance_of(line),
        superseded_by=superseded_by.strip() if isinstance(superseded_by, str) else None,
        source=line.source, line=line.line, subject_pack_id=packs[0], object_pack_id=packs[1],
    )


def lines_with_intent(lines: Iterable[NormalisedLine], notes: list[DroppedLine]
                      ) -> Iterator[tuple[NormalisedLine, TeachingIntent]]:
    """The lines that have the four fields and a cause/verification intent (pass 2's first
    rules, shared by every corpus file); each other line leaves a note."""
    for line in lines:
        problem = missing_fields(line)
        if problem is not None:
            notes.append(problem)
            continue
        intent = intent_of(line)
        if isinstance(intent, DroppedLine):
            notes.append(intent)
            continue
        yield line, intent
