"""Small packs, corpora and registries for the teaching tests, built in tmp_path.

Values are typed out from ADR-0052 and core-facts.md, never read from the code under test.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

PACK_ID = "en_core_cognition_v1"  # the id CORE binds cognition_chains_v1 to (fixtures only)
SAMPLE_PACK_ID = "sample_en_cognition_v1"  # the repository's own 6-lemma sample pack
SAMPLE_PACK_VERSION = "1.0.0-sample"
CORPUS_ID = "cognition_chains_v1"
PROVENANCE = "adr-0052:reviewed:2026-05-18"

# ADR-0052's three surfaces, each one line with single spaces (the ADR text wraps them).
LIGHT_SURFACE = (
    "light — teaching-grounded (cognition_chains_v1): cognition.illumination; logos.core."
    " light reveals truth (cognition.truth). No session evidence yet."
)
KNOWLEDGE_SURFACE = (
    "knowledge — teaching-grounded (cognition_chains_v1): cognition.knowledge;"
    " epistemic.ground. knowledge requires evidence (cognition.evidence)."
    " No session evidence yet."
)
MEMORY_SURFACE = (
    "memory — teaching-grounded (cognition_chains_v1): cognition.memory; memory.semantic."
    " memory requires recall (operation.recall). No session evidence yet."
)

# lemma -> semantic_domains, in the order core-facts.md gives them.
ADR_DOMAINS: dict[str, list[str]] = {
    "light": ["cognition.illumination", "logos.core"],
    "truth": ["cognition.truth"],
    "knowledge": ["cognition.knowledge", "epistemic.ground"],
    "evidence": ["cognition.evidence"],
    "memory": ["cognition.memory", "memory.semantic"],
    "recall": ["operation.recall"],
}


def entry(lemma: str, domains: list[str], *, pack_id: str = PACK_ID) -> dict[str, Any]:
    return {
        "entry_id": f"{pack_id}:{lemma}",
        "surface": lemma,
        "lemma": lemma,
        "language": "en",
        "pos": "NOUN",
        "semantic_domains": domains,
        "morphology_tags": [],
        "provenance_ids": ["test"],
    }


def chain(chain_id: str, subject: str, intent: str, connective: str, obj: str,
          **extra: Any) -> dict[str, Any]:
    return {
        "chain_id": chain_id,
        "subject": subject,
        "intent": intent,
        "connective": connective,
        "object": obj,
        "domains_subject_k": 2,
        "domains_object_k": 1,
        "provenance": PROVENANCE,
        **extra,
    }


LIGHT = chain("cause_light_reveals_truth", "light", "cause", "reveals", "truth")
KNOWLEDGE = chain("cause_knowledge_requires_evidence", "knowledge", "cause", "requires",
                  "evidence")
MEMORY = chain("verification_memory_requires_recall", "memory", "verification", "requires",
               "recall")


def _jsonl(lines: list[dict[str, Any] | str]) -> bytes:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    return text.encode("utf-8")


def write_pack(packs: Path, lines: list[dict[str, Any] | str] | None = None, *,
               pack_id: str = PACK_ID, language: str = "en", version: str = "1.0.0",
               checksum: str | None = None, manifest_pack_id: str | None = None) -> Path:
    """A pack folder; `checksum` defaults to the true sha256 of the lexicon bytes."""
    if lines is None:
        lines = [entry(lemma, domains, pack_id=pack_id) for lemma, domains in ADR_DOMAINS.items()]
    folder = packs / pack_id
    folder.mkdir(parents=True, exist_ok=True)
    lexicon = _jsonl(lines)
    (folder / "lexicon.jsonl").write_bytes(lexicon)
    manifest = {
        "pack_id": manifest_pack_id or pack_id,
        "language": language,
        "version": version,
        "checksum": checksum or hashlib.sha256(lexicon).hexdigest(),
        "provenance": "test",
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def write_corpus(teaching: Path, relative: str, lines: list[dict[str, Any] | str]) -> Path:
    path = teaching / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_jsonl(lines))
    return path


def write_registry(teaching: Path, corpora: list[tuple[str, str, str]]) -> Path:
    """`corpora` as (corpus_id, path relative to teaching, pack_id), in resolution order."""
    teaching.mkdir(parents=True, exist_ok=True)
    path = teaching / "corpora.json"
    registry = {"corpora": [{"corpus_id": c, "path": p, "pack_id": k} for c, p, k in corpora]}
    path.write_text(json.dumps(registry), encoding="utf-8")
    return path


def one_corpus(tmp: Path, lines: list[dict[str, Any] | str],
               pack_lines: list[dict[str, Any] | str] | None = None) -> tuple[Path, Path, Path]:
    """packs dir, teaching dir and the corpus file for a single registered corpus."""
    packs, teaching = tmp / "packs", tmp / "teaching"
    write_pack(packs, pack_lines)
    relative = "cognition_chains/cognition_chains_v1.jsonl"
    corpus = write_corpus(teaching, relative, lines)
    write_registry(teaching, [(CORPUS_ID, relative, PACK_ID)])
    return packs, teaching, corpus


# --- a CORE-checkout-shaped tree (core-interop.md sections 1 and 3.5), built in tmp_path ----

COGNITION_PACK = "en_core_cognition_v1"
RELATIONS_PACK = "en_core_relations_v1"
RELATIONS_V2_PACK = "en_core_relations_v2"
CORE_CORPORA = {  # corpus_id -> (file relative to the checkout, bound pack), CORE's order
    "cognition_chains_v1": ("teaching/cognition_chains/cognition_chains_v1.jsonl",
                            COGNITION_PACK),
    "relations_chains_v1": ("teaching/relations_chains/relations_chains_v1.jsonl",
                            RELATIONS_PACK),
    "relations_chains_v2": ("teaching/relations_chains_v2/relations_chains_v2.jsonl",
                            RELATIONS_V2_PACK),
}
CROSS_PACK_FILE = "teaching/cross_pack_chains/cross_pack_chains_v1.jsonl"

# Invented lemmas and domains for the fixtures; only light and truth follow ADR-0052.
CHECKOUT_DOMAINS: dict[str, dict[str, list[str]]] = {
    COGNITION_PACK: {
        **ADR_DOMAINS,
        "judgment": ["cognition.judgment", "practice.discernment"],
        "wisdom": ["cognition.wisdom", "practice.insight"],
    },
    RELATIONS_PACK: {
        "parent": ["relation.parent", "kin.lineage"],
        "child": ["relation.child", "kin.lineage"],
        "identity": ["relation.identity", "self.core"],
        "truth": ["relation.truth"],
        "reality": ["relation.reality"],
    },
    RELATIONS_V2_PACK: {
        "daughter": ["relation.daughter", "kin.female"],
        "son": ["relation.son", "kin.male"],
    },
}


def write_core_checkout(
    root: Path,
    corpora: dict[str, list[dict[str, Any] | str]],
    cross_pack: list[dict[str, Any] | str] | None = None,
    packs: dict[str, list[dict[str, Any] | str]] | None = None,
) -> Path:
    """teaching/<...>.jsonl for the corpora given (others left missing), the cross-pack file
    when given, and packs/data/<pack_id>/ for every pack (CHECKOUT_DOMAINS by default)."""
    for corpus_id, lines in corpora.items():
        write_corpus(root, CORE_CORPORA[corpus_id][0], lines)
    (root / "teaching").mkdir(parents=True, exist_ok=True)
    if cross_pack is not None:
        write_corpus(root, CROSS_PACK_FILE, cross_pack)
    if packs is None:
        packs = {pack_id: [entry(lemma, domains, pack_id=pack_id)
                           for lemma, domains in lemmas.items()]
                 for pack_id, lemmas in CHECKOUT_DOMAINS.items()}
    data = root / "packs" / "data"
    data.mkdir(parents=True, exist_ok=True)
    for pack_id, lines in packs.items():
        write_pack(data, lines, pack_id=pack_id)
    return root


REPO = Path(__file__).resolve().parent.parent
# What the bundled examples are checked against: the repository's corpus file and sample pack
# (revision 0005 records it with each checked surface and names it in the surface id).
CHECKED_AGAINST_SAMPLE: list[dict[str, Any]] = [
    {"kind": "corpus", "id": CORPUS_ID, "version": None,
     "sha256": hashlib.sha256((REPO / "teaching" / "cognition_chains" /
                               "cognition_chains_v1.jsonl").read_bytes()).hexdigest()},
    {"kind": "pack", "id": SAMPLE_PACK_ID, "version": SAMPLE_PACK_VERSION,
     "sha256": json.loads((REPO / "packs" / SAMPLE_PACK_ID / "manifest.json").read_text(
         encoding="utf-8"))["checksum"]},
]


def verified_single(chain_id: str) -> dict[str, Any]:
    """The check part of the surface id of a single-form surface one chain renders."""
    return {"verification": "verified", "surface_form": "single", "hops": 0,
            "hop_chain_ids": [], "candidate_chain_ids": [chain_id],
            "checked_against": CHECKED_AGAINST_SAMPLE}
