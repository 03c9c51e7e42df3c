"""The inputs `store-rev0010.db` was ingested from (tests/data/README.md), typed out from the
spec's shapes through tests/turn_data.py: `python tests/data/store_rev0010_inputs.py DIR`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turn_data import LIGHT_SURFACE, journal_entry, journal_line

PIPELINE = {"schema_version": "cognitive_pipeline_record_v1", "status": "recorded",
            "missing_reason": None, "trace_hash": f"{1:064x}",
            "versor_condition": 1.45208915114381e-07, "field_digest": None, "stages": [],
            "edges": []}
FIRST_VERDICTS = {"identity": {"outcome": "violated", "runtime_detail": "tone,warmth"},
                  "safety": {"outcome": "cleared", "runtime_detail": ""},
                  "ethics": {"outcome": "unassessable", "runtime_detail": ""}}


def _light(turn_id: int, **fields: Any) -> dict[str, Any]:
    return journal_entry(turn_id, f"Why does light exist? ({turn_id})", LIGHT_SURFACE,
                         "teaching", **fields)


def inputs() -> dict[str, list[dict[str, Any]]]:
    first = [_light(1, turn_cost_ms=7, checkpoint_emitted=True,
                    proposal_candidates=[{"candidate_id": "cand-1", "source_kind": "discovery"}],
                    verdicts=FIRST_VERDICTS, articulation_surface=None, walk_surface="walked",
                    pipeline_record=PIPELINE),
             _light(2, timestamp="2026-07-30T20:01:02.000001+02:00"),
             _light(3)]
    second = [journal_entry(1, "Is wisdom grounded?", "I don't know.", "none",
                            timestamp="2026-08-01T09:00:00.000000+00:00", trace_hash=None,
                            trace_integrity="legacy_unhashed"),
              journal_entry(2, "Second?", "I don't know.", "none",
                            timestamp="2026-08-01T09:00:05.000000+00:00")]
    grown = [*first, _light(4, timestamp="2026-07-31T00:00:00.000000+00:00"), _light(5)]
    return {"journal-a.jsonl": first, "journal-b.jsonl": second,
            "journal-a-grown.jsonl": grown}


# Accepted at revision 0010 (a timestamp without an offset): refused on ingest since.
RUNTIME_LINE = {"grounding_source": "none", "epistemic_state": "undetermined",
                "normative_clearance": "cleared", "prompt": "hi", "surface": "hello",
                "timestamp": "2026-07-30T18:00:00"}


def main(out: Path) -> None:
    for name, entries in inputs().items():
        (out / name).write_text("".join(journal_line(e) + "\n" for e in entries),
                                encoding="utf-8")
    (out / "runtime.jsonl").write_text(json.dumps(RUNTIME_LINE) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
