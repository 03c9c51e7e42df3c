"""Turn lines for the turn tests, typed out from core-interop.md §4-§5 (never from CORE files).

The worked example (§5) and its digests are the spec's, character for character.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

DISCLOSURE = "I don't know — insufficient grounding for that yet."
LIGHT_SURFACE = (
    "light — teaching-grounded (cognition_chains_v1): cognition.illumination; logos.core."
    " light reveals truth (cognition.truth). No session evidence yet."
)
TRACE_HASH = "757ca0b4ed41a52bd37717d88cc35b18e5bf9254a610e89983c55ae60078659d"

# §5's worked example: its canonical form, exactly 1022 bytes (one line in the spec).
WORKED_CANONICAL = (
    '{"articulation_surface":"I don\'t know — insufficient grounding for that yet.",'
    '"checkpoint_emitted":false,"construction_evidence":null,"epistemic_state":"decoded",'
    '"field_evidence":null,"grounding_source":"teaching","hedge_injected":false,'
    '"leeway_evidence":null,"meta_rh_evidence":null,"normative_clearance":"violated",'
    '"pipeline_record":null,"practice_evidence":null,"prompt":"Why does light exist?",'
    '"proposal_candidates":[],"refusal_emitted":false,'
    '"surface":"light — teaching-grounded (cognition_chains_v1): cognition.illumination;'
    ' logos.core. light reveals truth (cognition.truth). No session evidence yet.",'
    '"timestamp":"2026-01-01T00:00:00+00:00",'
    '"trace_hash":"757ca0b4ed41a52bd37717d88cc35b18e5bf9254a610e89983c55ae60078659d",'
    '"trace_integrity":"pipeline_trace","turn_cost_ms":0,"turn_id":1,'
    '"verdicts":{"ethics":{"outcome":"violated","runtime_detail":"acknowledge_uncertainty"},'
    '"identity":null,"safety":{"outcome":"cleared","runtime_detail":""}},'
    '"walk_surface":"I don\'t know — insufficient grounding for that yet."}'
)
WORKED_DIGEST = "sha256:92906304f66849986355d8a9558d2e0aea0a55d62a37a59aac78affbad501782"
UNHASHED_DIGEST = "sha256:e640edb062d91b71a18e0979117ebf2f3b3e7abf97f0a7abd410a52278cb82d6"


def worked_entry() -> dict[str, Any]:
    """§5's worked example as CORE holds it before writing: all optional fields null."""
    return {
        "turn_id": 1,
        "timestamp": "2026-01-01T00:00:00+00:00",
        "trace_hash": TRACE_HASH,
        "prompt": "Why does light exist?",
        "surface": LIGHT_SURFACE,
        "articulation_surface": DISCLOSURE,
        "walk_surface": DISCLOSURE,
        "grounding_source": "teaching",
        "epistemic_state": "decoded",
        "normative_clearance": "violated",
        "verdicts": {
            "identity": None,
            "safety": {"outcome": "cleared", "runtime_detail": ""},
            "ethics": {"outcome": "violated", "runtime_detail": "acknowledge_uncertainty"},
        },
        "refusal_emitted": False,
        "hedge_injected": False,
        "checkpoint_emitted": False,
        "proposal_candidates": [],
        "turn_cost_ms": 0,
        "leeway_evidence": None,
        "pipeline_record": None,
        "field_evidence": None,
        "construction_evidence": None,
        "meta_rh_evidence": None,
        "practice_evidence": None,
        "trace_integrity": "pipeline_trace",
    }


def with_digest(canonical: str, digest: str) -> str:
    """The written line: the canonical form with journal_digest in its sorted place."""
    anchor = '"hedge_injected":false,'
    assert canonical.count(anchor) == 1
    return canonical.replace(anchor, f'{anchor}"journal_digest":"{digest}",')


WORKED_LINE = with_digest(WORKED_CANONICAL, WORKED_DIGEST)


HEDGE = "Grounded but not geometrically certified — "


def journal_entry(turn_id: int, prompt: str, surface: str, grounding_source: str,
                  **fields: Any) -> dict[str, Any]:
    """A Workbench journal entry with the 16 required fields and the optional ones null."""
    entry: dict[str, Any] = {
        "turn_id": turn_id,
        "timestamp": f"2026-07-30T18:01:0{turn_id % 10}.123456+00:00",
        "trace_hash": f"{turn_id:064x}",
        "prompt": prompt,
        "surface": surface,
        "articulation_surface": DISCLOSURE,
        "walk_surface": DISCLOSURE,
        "grounding_source": grounding_source,
        "epistemic_state": "decoded",
        "normative_clearance": "violated",
        "verdicts": {
            "identity": None,
            "safety": {"outcome": "cleared", "runtime_detail": ""},
            "ethics": {"outcome": "violated", "runtime_detail": "acknowledge_uncertainty"},
        },
        "refusal_emitted": False,
        "hedge_injected": False,
        "checkpoint_emitted": False,
        "proposal_candidates": [],
        "turn_cost_ms": 12,
        "leeway_evidence": None,
        "pipeline_record": None,
        "field_evidence": None,
        "construction_evidence": None,
        "meta_rh_evidence": None,
        "practice_evidence": None,
        "trace_integrity": "pipeline_trace",
    }
    entry.update(fields)
    return entry


def canonical(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def journal_line(entry: dict[str, Any]) -> str:
    """The line CORE's TurnJournal.append writes: canonical JSON with its journal_digest."""
    digest = "sha256:" + hashlib.sha256(canonical(entry).encode("utf-8")).hexdigest()
    return canonical({**entry, "journal_digest": digest})
