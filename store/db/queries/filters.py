"""Filters: any-of lists per field, ANDed across fields, and batch ranges, as SQL conditions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Table,
    false,
)

from store.db.queries.ranges import BatchRange
from store.db.schema.tables import contract_assessments as assessments_t
from store.db.schema.tables import contract_residuals as residuals_t
from store.db.schema.tables import surface_records as surfaces_t
from store.db.schema.tables import turns as turns_t
from store.model.surface_records import SurfaceForm, SurfaceVerification
from store.model.taxonomy import (
    FAMILY_BY_ORGAN,
    ResidualKind,
    ResidualSourceAxis,
)
from store.model.teaching_surface import GroundingSource
from store.model.turns import NormativeClearance


@dataclass(frozen=True, slots=True)
class ResidualFilter(BatchRange):
    """Each field is a list matched as any-of; fields are ANDed. None or [] = no constraint.
    The batch range is on the batch that first stored the residual."""

    organ: Sequence[str] | None = None
    family_id: Sequence[str] | None = None
    kind: Sequence[ResidualKind] | None = None
    axis: Sequence[ResidualSourceAxis] | None = None
    code: Sequence[str] | None = None

    def conditions(self, table: Table = residuals_t) -> list[ColumnElement[bool]]:
        """On contract_residuals, or on residual_tallies (same column names)."""
        pairs: list[tuple[Any, Sequence[Any] | None]] = [
            (table.c.candidate_organ, self.organ),
            (table.c.family_id, self.family_id),
            (table.c.residual_kind, enum_values(self.kind)),
            (table.c.source_axis, enum_values(self.axis)),
            (table.c.residual_code, self.code),
        ]
        return [*(any_of(column, values) for column, values in pairs if values),
                *self.batch_conditions(table.c.batch_id)]


@dataclass(frozen=True, slots=True)
class AssessmentFilter(BatchRange):
    """Any-of lists, ANDed; `runnable` None = both. `family_id` goes through the organ map."""

    organ: Sequence[str] | None = None
    family_id: Sequence[str] | None = None
    runnable: bool | None = None
    source_ref: Sequence[str] | None = None
    batch_id: Sequence[int] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        found: list[ColumnElement[bool]] = []
        if self.organ:
            found.append(any_of(assessments_t.c.candidate_organ, self.organ))
        if self.family_id:
            # Families are a domain mapping, not a column: filter by the organs they name.
            wanted = set(self.family_id)
            organs = [o for o, f in FAMILY_BY_ORGAN.items() if f in wanted]
            found.append(assessments_t.c.candidate_organ.in_(organs))
        if self.runnable is not None:
            found.append(assessments_t.c.runnable.is_(self.runnable))
        if self.source_ref:
            found.append(any_of(assessments_t.c.source_ref, self.source_ref))
        if self.batch_id:
            found.append(assessments_t.c.batch_id.in_(list(self.batch_id)))
        return [*found, *self.batch_conditions(assessments_t.c.batch_id)]


@dataclass(frozen=True, slots=True)
class SurfaceFilter(BatchRange):
    """Each field is a list matched as any-of; fields are ANDed. None or [] = no constraint.
    The batch range is on the batch that first stored the surface."""

    grounding_source: Sequence[GroundingSource] | None = None
    corpus_id: Sequence[str] | None = None
    chain_id: Sequence[str] | None = None
    intent: Sequence[str] | None = None
    subject: Sequence[str] | None = None
    verification: Sequence[SurfaceVerification] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        pairs: list[tuple[Any, Sequence[Any] | None]] = [
            (surfaces_t.c.grounding_source, enum_values(self.grounding_source)),
            (surfaces_t.c.corpus_id, self.corpus_id),
            (surfaces_t.c.chain_id, self.chain_id),
            (surfaces_t.c.intent, self.intent),
            (surfaces_t.c.subject, self.subject),
            (surfaces_t.c.verification, enum_values(self.verification)),
        ]
        return [*(any_of(column, values) for column, values in pairs if values),
                *self.batch_conditions(surfaces_t.c.batch_id)]


def storable(value: str) -> bool:
    """PostgreSQL text cannot hold U+0000 (its driver refuses such a parameter outright), so a
    value containing it matches nothing, on either backend, instead of failing the query."""
    return "\x00" not in value


def any_of(column: Any, values: Sequence[Any]) -> ColumnElement[bool]:
    condition: ColumnElement[bool] = column.in_(
        [v for v in values if not isinstance(v, str) or storable(v)])
    return condition


def equals(column: Any, value: str) -> ColumnElement[bool]:
    return column == value if storable(value) else false()


def enum_values(members: Sequence[Any] | None) -> list[str] | None:
    # Enum members are stored by their lower-case value.
    return None if not members else [getattr(m, "value", m) for m in members]


@dataclass(frozen=True, slots=True)
class TurnFilter(BatchRange):
    """Any-of lists, ANDed; on turns joined to the surface record each turn emitted. The
    batch range is on the turn's own batch."""

    grounding_source: Sequence[GroundingSource] | None = None
    verification: Sequence[SurfaceVerification] | None = None
    epistemic_state: Sequence[str] | None = None
    normative_clearance: Sequence[NormativeClearance] | None = None
    corpus_id: Sequence[str] | None = None
    chain_id: Sequence[str] | None = None
    surface_form: Sequence[SurfaceForm] | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        pairs: list[tuple[Any, Sequence[Any] | None]] = [
            (turns_t.c.grounding_source, enum_values(self.grounding_source)),
            (surfaces_t.c.verification, enum_values(self.verification)),
            (turns_t.c.epistemic_state, self.epistemic_state),
            (turns_t.c.normative_clearance, enum_values(self.normative_clearance)),
            (surfaces_t.c.corpus_id, self.corpus_id),
            (surfaces_t.c.chain_id, self.chain_id),
            (surfaces_t.c.surface_form, enum_values(self.surface_form)),
        ]
        return [*(any_of(column, values) for column, values in pairs if values),
                *self.batch_conditions(turns_t.c.batch_id)]


def filter_order(filter_type: type[Any] | None) -> int:
    """Where `filter_type` stands among the filters, in the order they are defined (this
    module's first): what export kinds and GraphQL filter inputs are listed in. None last."""
    defined = BatchRange.__subclasses__()
    return defined.index(filter_type) if filter_type in defined else len(defined)
