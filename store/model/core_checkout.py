"""Where a CORE checkout keeps its teaching data: CORE's registry is code, not a file."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from store.model.chain_lines import CorpusError
from store.model.corpora import CorpusRegistration

# Mirrors CORE HEAD 069ceb55's TEACHING_CORPORA (chat/teaching_grounding.py), in its order.
TEACHING_CORPORA: Final = (
    ("cognition_chains_v1", "teaching/cognition_chains/cognition_chains_v1.jsonl",
     "en_core_cognition_v1"),
    ("relations_chains_v1", "teaching/relations_chains/relations_chains_v1.jsonl",
     "en_core_relations_v1"),
    ("relations_chains_v2", "teaching/relations_chains_v2/relations_chains_v2.jsonl",
     "en_core_relations_v2"),
)
CROSS_PACK_CORPUS: Final = ("cross_pack_chains_v1",
                            "teaching/cross_pack_chains/cross_pack_chains_v1.jsonl")
PACKS_SUBDIR: Final = "packs/data"


def require_core_checkout(core: Path) -> Path:
    """The checkout's root; refuses a folder that has no teaching/ or no packs/data/."""
    missing = [name for name in ("teaching", PACKS_SUBDIR) if not (core / name).is_dir()]
    if missing:
        raise CorpusError(f"{core} is not a CORE checkout: no {' and no '.join(missing)}/")
    return core


def core_registrations(core: Path) -> tuple[CorpusRegistration, ...]:
    return tuple(CorpusRegistration(corpus_id, core / relative, pack_id)
                 for corpus_id, relative, pack_id in TEACHING_CORPORA)


def core_packs_dir(core: Path) -> Path:
    return core / PACKS_SUBDIR


def core_cross_pack(core: Path) -> tuple[str, Path]:
    corpus_id, relative = CROSS_PACK_CORPUS
    return corpus_id, core / relative
