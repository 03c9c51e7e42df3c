"""GraphQL filter inputs: any-of lists per field, and the batch ranges every filter takes.

Each input has the same fields as the query layer's filter of the same name, which it becomes.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import strawberry

from store.api.surface_types import GroundingSourceEnum, SurfaceFormEnum, SurfaceVerificationEnum
from store.api.turn_types import NormativeClearanceEnum
from store.api.types import ResidualKindEnum, ResidualSourceAxisEnum
from store.db import queries

ANY_OF = "Any-of lists, ANDed across fields; null or [] = no constraint."
RANGES = ("Batch and ingest-time ranges are inclusive at both ends and bound the batch that "
          "first stored a record.")


def _fields_of(filter_input: Any) -> dict[str, Any]:
    """A filter input's fields by name: the query layer's filter has the same ones."""
    return {f.name: getattr(filter_input, f.name) for f in dataclasses.fields(filter_input)}


@strawberry.input(description="Inclusive bounds on the batch that stored a record.")
class BatchRange:
    batch_id_from: int | None = strawberry.field(
        default=None, description="Stored by this batch or a later one.")
    batch_id_to: int | None = strawberry.field(
        default=None, description="Stored by this batch or an earlier one.")
    ingested_from: datetime | None = strawberry.field(
        default=None, description="Stored by a batch ingested at or after this ISO 8601 "
        "time (UTC if it has no offset), e.g. 2026-05-01T00:00:00Z.")
    ingested_to: datetime | None = strawberry.field(
        default=None, description="Stored by a batch ingested at or before this time.")


@strawberry.input(description=f"{ANY_OF} {RANGES} A residual's batch is the one that first "
                  "stored it; with a range, residualFacets' occurrences are the sightings "
                  "recorded in the batches of the range.")
class ResidualFilter(BatchRange):
    organ: list[str] | None = None
    family_id: list[str] | None = None
    kind: list[ResidualKindEnum] | None = None
    axis: list[ResidualSourceAxisEnum] | None = None
    code: list[str] | None = None

    def to_query(self) -> queries.ResidualFilter:
        return queries.ResidualFilter(**_fields_of(self))


@strawberry.input(description=f"{ANY_OF} {RANGES}")
class AssessmentFilter(BatchRange):
    organ: list[str] | None = None
    family_id: list[str] | None = None
    runnable: bool | None = None
    source_ref: list[str] | None = None
    batch_id: list[int] | None = None

    def to_query(self) -> queries.AssessmentFilter:
        return queries.AssessmentFilter(**_fields_of(self))


@strawberry.input(description=f"{ANY_OF} {RANGES} A surface's batch is the one that first "
                  "stored it.")
class SurfaceFilter(BatchRange):
    grounding_source: list[GroundingSourceEnum] | None = None
    corpus_id: list[str] | None = None
    chain_id: list[str] | None = None
    intent: list[str] | None = None
    subject: list[str] | None = None
    verification: list[SurfaceVerificationEnum] | None = None

    def to_query(self) -> queries.SurfaceFilter:
        return queries.SurfaceFilter(**_fields_of(self))


@strawberry.input(description=f"{ANY_OF} {RANGES} Verification, corpus, chain and form are "
                  "the emitted surface's; the batch range is the turn's own batch.")
class TurnFilter(BatchRange):
    grounding_source: list[GroundingSourceEnum] | None = None
    verification: list[SurfaceVerificationEnum] | None = None
    epistemic_state: list[str] | None = None
    normative_clearance: list[NormativeClearanceEnum] | None = None
    corpus_id: list[str] | None = None
    chain_id: list[str] | None = None
    surface_form: list[SurfaceFormEnum] | None = None

    def to_query(self) -> queries.TurnFilter:
        return queries.TurnFilter(**_fields_of(self))


FILTER_INPUTS: tuple[tuple[type[Any], type[Any]], ...] = (
    (ResidualFilter, queries.ResidualFilter),
    (AssessmentFilter, queries.AssessmentFilter),
    (SurfaceFilter, queries.SurfaceFilter),
    (TurnFilter, queries.TurnFilter),
)


def check_filter_inputs(pairs: tuple[tuple[type[Any], type[Any]], ...] = FILTER_INPUTS) -> None:
    """Each input has exactly its query filter's fields (`to_query` passes them by name):
    a field added on one side only fails here, when the module loads."""
    problems = []
    for api_input, query_filter in pairs:
        given = {f.name for f in dataclasses.fields(api_input)}
        taken = {f.name for f in dataclasses.fields(query_filter)}
        if given != taken:
            problems.append(f"{api_input.__name__}: only in the GraphQL input "
                            f"{sorted(given - taken)}, only in the query filter "
                            f"{sorted(taken - given)}")
    if problems:
        raise TypeError("; ".join(problems))


check_filter_inputs()
