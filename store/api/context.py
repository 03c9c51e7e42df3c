"""What every resolver of one request shares: the database, its deadline, its loader."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import Connection
from strawberry.dataloader import DataLoader
from strawberry.types import Info

from store.api.prepared_pages import PagePlan, PagePlanner
from store.db import queries
from store.db.audit_store import AuditStore
from store.db.queries import journals
from store.model.corpora import TeachingRegistry
from store.model.teaching_surface import default_registry

P = ParamSpec("P")
R = TypeVar("R")


RegistryProvider = Callable[[], TeachingRegistry]
AsOfKey = tuple[str, int | None]  # a record's id and the tree size it is read as of
TurnAsOf = tuple[queries.TurnLine, int | None]


class RequestContext:
    def __init__(self, db: AuditStore, registry: RegistryProvider = default_registry) -> None:
        self.db = db
        self.registry = registry  # the corpora and packs surfaces are checked against
        self.deadline = db.deadline()  # one time limit for all queries of the request
        # A page of assessments asks for its residuals in one statement, not one per row;
        # keyed by (assessment_id, asOf): the residuals' counts are as of the assessment's read.
        self.assessment_residuals: DataLoader[AsOfKey, list[queries.StoredResidual]] = (
            DataLoader(load_fn=self._load_assessment_residuals))
        # A page of turns asks for their construction evidence, a page of assessments for
        # the turns they came from: one round of statements each, not one per row.
        self.turn_constructions: DataLoader[TurnAsOf, queries.TurnConstruction] = DataLoader(
            load_fn=self._load_turn_constructions,
            cache_key_fn=lambda key: (key[0].turn_key, key[1]))
        self.assessment_turns: DataLoader[AsOfKey, queries.StoredTurn | None] = DataLoader(
            load_fn=self._load_assessment_turns)

    # Set by PageExecutor: a listing's page built from its rows when the selection allows
    # (prepared_pages.py); None under strawberry's own executor.
    page_plans: PagePlanner | None = None

    def page_plan(self, info: Info[Any, Any], listing: queries.RecordListing[Any, Any],
                  view: type[Any]) -> PagePlan | None:
        """The plan building this list field's value from its rows, or None."""
        planner = self.page_plans
        if planner is None:
            return None
        return planner.plans.of(info._raw_info, planner.fragments, listing, view)

    async def run(
        self,
        query: Callable[Concatenate[Connection, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        return await self.db.run(self.deadline, query, *args, **kwargs)

    async def run_quick(
        self,
        query: Callable[Concatenate[Connection, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        """`run` for a read whose Python work is bounded (AuditStore.run_quick)."""
        return await self.db.run_quick(self.deadline, query, *args, **kwargs)

    def reader_for(self, search: str | None) -> Callable[..., Awaitable[Any]]:
        """How to run a page or a record read with `search` (None: none): `run_quick`, or
        `run` for a search, whose full-text statement may take long in one step of SQLite's,
        which the first try's time limit cannot cut short."""
        return self.run if search is not None else self.run_quick

    async def _load_assessment_residuals(
        self, keys: list[AsOfKey]
    ) -> list[list[queries.StoredResidual]]:
        produced: dict[AsOfKey, list[queries.StoredResidual]] = {}
        for as_of in dict.fromkeys(as_of for _, as_of in keys):  # one statement per asOf
            ids = [assessment_id for assessment_id, key_as_of in keys if key_as_of == as_of]
            found = await self.run_quick(queries.assessment_residuals, ids, as_of=as_of)
            produced.update(((assessment_id, as_of), found[assessment_id]) for assessment_id in ids)
        return [produced[key] for key in keys]

    async def _load_turn_constructions(self, keys: list[TurnAsOf]
                                       ) -> list[queries.TurnConstruction]:
        produced: dict[tuple[str, int | None], queries.TurnConstruction] = {}
        for as_of in dict.fromkeys(as_of for _, as_of in keys):  # one round per asOf
            turns = [turn for turn, key_as_of in keys if key_as_of == as_of]
            found = await self.run_quick(queries.turn_constructions, turns, as_of=as_of)
            produced.update(((key, as_of), value) for key, value in found.items())
        return [produced[(turn.turn_key, as_of)] for turn, as_of in keys]

    async def _load_assessment_turns(self, keys: list[AsOfKey]
                                     ) -> list[queries.StoredTurn | None]:
        produced: dict[AsOfKey, queries.StoredTurn | None] = {}
        for as_of in dict.fromkeys(as_of for _, as_of in keys):
            ids = [assessment_id for assessment_id, key_as_of in keys if key_as_of == as_of]
            found = await self.run_quick(queries.assessment_turns, ids, as_of=as_of)
            produced.update(((assessment_id, as_of), found[assessment_id]) for assessment_id in ids)
        return [produced[key] for key in keys]

    @functools.cached_property
    def journal_summaries(self) -> DataLoader[AsOfKey, queries.JournalSummary]:
        """A journal's turnCount, updatedAt, batchIds and batches: one read of its turns, when
        asked (made on first use: most requests ask for none)."""
        return DataLoader(load_fn=self._load_journal_summaries)

    async def _load_journal_summaries(self, keys: list[AsOfKey]
                                      ) -> list[queries.JournalSummary]:
        return [await self.run(journals.journal_summary, journal_id, as_of)
                for journal_id, as_of in keys]
