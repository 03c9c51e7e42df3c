"""GraphQL view of the teaching corpora and packs a server checks surfaces against."""

from __future__ import annotations

import strawberry

from store.model.corpora import TeachingCorpus, TeachingRegistry


@strawberry.type(description="One corpus as loaded: compare its sha256 and its pack's with a "
                             "stored surface's checkedAgainst.")
class RegisteredCorpus:
    corpus_id: str
    sha256: str = strawberry.field(description="Of the corpus file bytes; empty when missing.")
    cross_pack: bool = strawberry.field(
        description="The unregistered cross-pack corpus (ADR-0067), used when no chain "
        "resolves in a pack.")
    pack_id: str | None = strawberry.field(description="The bound pack; null for cross-pack.")
    pack_version: str | None
    pack_checksum: str | None = strawberry.field(description="sha256 of its lexicon.jsonl.")
    chains: int = strawberry.field(description="Chains that load (valid and not retired).")

    @classmethod
    def of(cls, corpus: TeachingCorpus) -> RegisteredCorpus:
        pack = corpus.pack
        present = pack is not None and pack.present
        return cls(
            corpus_id=corpus.corpus_id,
            sha256=corpus.sha256,
            cross_pack=corpus.cross_pack,
            pack_id=pack.pack_id if pack is not None else None,
            pack_version=pack.version if present and pack is not None else None,
            pack_checksum=pack.checksum if present and pack is not None else None,
            chains=len(corpus.chains),
        )


@strawberry.type(description="The teaching corpora and packs this server checks against, in "
                             "resolution order (serve --core, or --packs and --teaching).")
class TeachingRegistryView:
    corpora: list[RegisteredCorpus]
    resolved_chains: int = strawberry.field(
        description="(subject, intent) keys that resolve across the registered corpora.")

    @classmethod
    def of(cls, registry: TeachingRegistry) -> TeachingRegistryView:
        corpora = [*registry.corpora, *([registry.cross_pack] if registry.cross_pack else [])]
        return cls(corpora=[RegisteredCorpus.of(c) for c in corpora],
                   resolved_chains=len(registry.chains))
