"""What every resolver of one request shares: the database and its deadline."""

from __future__ import annotations

from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from sqlalchemy import Connection

from store.db.database import Database

P = ParamSpec("P")
R = TypeVar("R")


class RequestContext:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.deadline = db.deadline()  # one time limit for all queries of the request

    async def run(
        self,
        query: Callable[Concatenate[Connection, P], R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        return await self.db.run(self.deadline, query, *args, **kwargs)
