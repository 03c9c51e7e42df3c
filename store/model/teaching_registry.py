"""Loading a whole teaching registry, from a `corpora.json` file or from a CORE checkout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from store.model.chain_lines import CorpusError
from store.model.core_checkout import (
    core_cross_pack,
    core_packs_dir,
    core_registrations,
    require_core_checkout,
)
from store.model.corpora import (
    CorpusRegistration,
    TeachingCorpus,
    TeachingRegistry,
    assemble_registry,
    load_corpus,
)
from store.model.cross_pack import load_cross_pack_corpus
from store.model.fields import RecordError, json_list, json_object, required, string
from store.model.packs import Pack, load_bound_pack

REGISTRY = "corpora.json"


def _plain_name(value: str, where: str) -> str:
    # Ids name folders and files; a separator or `..` would reach outside the data dirs.
    if value in {".", ".."} or "/" in value or "\\" in value:
        raise RecordError(f"{where}: {value!r} is not a plain name")
    return value


def _relative(obj: dict[str, Any], where: str, teaching_dir: Path) -> Path:
    relative = string(required(obj, "path", where), f"{where}.path", non_empty=True)
    if Path(relative).is_absolute():
        raise RecordError(f"{where}.path: {relative!r} must be relative to {teaching_dir}")
    return teaching_dir / relative


def read_registrations(teaching_dir: Path
                       ) -> tuple[tuple[CorpusRegistration, ...], tuple[str, Path] | None]:
    """`corpora.json`: `{"corpora": [{"corpus_id", "path", "pack_id"}], "cross_pack":
    [{"corpus_id", "path"}]}` (cross_pack optional, at most one), corpora in resolution order."""
    path = teaching_dir / REGISTRY
    try:
        value = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from exc
    except orjson.JSONDecodeError as exc:
        raise CorpusError(f"{path}: not valid JSON: {exc}") from exc
    registrations: list[CorpusRegistration] = []
    cross: list[tuple[str, Path]] = []
    try:
        root = json_object(value, "registry")
        for i, item in enumerate(json_list(required(root, "corpora", "registry"), "corpora")):
            where = f"corpora[{i}]"
            obj = json_object(item, where)
            corpus_id = string(required(obj, "corpus_id", where), f"{where}.corpus_id",
                               non_empty=True)
            pack_id = string(required(obj, "pack_id", where), f"{where}.pack_id", non_empty=True)
            _plain_name(pack_id, f"{where}.pack_id")
            if any(r.corpus_id == corpus_id for r in registrations):
                raise RecordError(f"{where}.corpus_id: {corpus_id!r} is registered twice")
            registrations.append(CorpusRegistration(corpus_id,
                                                    _relative(obj, where, teaching_dir), pack_id))
        for i, item in enumerate(json_list(root.get("cross_pack", []), "cross_pack")):
            where = f"cross_pack[{i}]"
            obj = json_object(item, where)
            corpus_id = string(required(obj, "corpus_id", where), f"{where}.corpus_id",
                               non_empty=True)
            if cross or any(r.corpus_id == corpus_id for r in registrations):
                raise RecordError(f"{where}: one cross-pack corpus, with its own corpus_id")
            cross.append((corpus_id, _relative(obj, where, teaching_dir)))
    except RecordError as exc:
        raise CorpusError(f"{path}: {exc}") from exc
    return tuple(registrations), (cross[0] if cross else None)


def load_registry(registrations: tuple[CorpusRegistration, ...], packs_dir: Path,
                  cross_pack: tuple[str, Path] | None = None) -> TeachingRegistry:
    """Each pack once, each corpus in registration order, then the cross-pack corpus.

    Raises CorpusError or PackError when a file cannot be used at all; bad lines are
    listed in `dropped` (errors and warnings).
    """
    packs: dict[str, Pack] = {}

    def pack_source(pack_id: str) -> Pack:
        pack = packs.get(pack_id)
        if pack is None:
            pack = packs[pack_id] = load_bound_pack(packs_dir / pack_id)
        return pack

    corpora: list[TeachingCorpus] = [load_corpus(r, pack_source(r.pack_id))
                                     for r in registrations]
    cross = None
    if cross_pack is not None:
        corpus_id, path = cross_pack
        cross = load_cross_pack_corpus(path, pack_source, corpus_id)
    return assemble_registry(corpora, packs, cross)


def load_teaching_registry(teaching_dir: Path, packs_dir: Path) -> TeachingRegistry:
    """Registry-file mode: `teaching_dir/corpora.json`, packs at `packs_dir/<pack_id>/`."""
    registrations, cross_pack = read_registrations(teaching_dir)
    return load_registry(registrations, packs_dir, cross_pack)


def load_core_registry(core: Path | str) -> TeachingRegistry:
    """CORE-checkout mode: CORE's own registry, packs at `core/packs/data/<pack_id>/`."""
    root = require_core_checkout(Path(core))
    return load_registry(core_registrations(root), core_packs_dir(root), core_cross_pack(root))
