"""What every resolver of one request shares: the database, its deadline, its loaders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from sqlalchemy import Connection
from strawberry.dataloader import DataLoader

from store.db import queries
from store.db.database import Database

P = ParamSpec("P")
R = TypeVar("R")


class RequestContext:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.deadline = db.deadline()  # one time limit for all queries of the request
        self.occurrence_counts: DataLoader[str, int] = DataLoader(load_fn=self._load_counts)
        self.surface_occurrence_counts: DataLoader[str, int] = DataLoader(
            load_fn=self._load_surface_counts)

    async def run(
        self,
        query: Callable[Concatenate[Connection, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        return await self.db.run(self.deadline, query, *args, **kwargs)

    async def _load_counts(self, residual_ids: list[str]) -> list[int]:
        # One grouped query for every residual a page asks about, not one per residual.
        counts = await self.run(queries.occurrence_counts, residual_ids)
        return [counts[residual_id] for residual_id in residual_ids]

    async def _load_surface_counts(self, surface_ids: list[str]) -> list[int]:
        counts = await self.run(queries.surface_occurrence_counts, surface_ids)
        return [counts[surface_id] for surface_id in surface_ids]
