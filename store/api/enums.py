"""The domain's enums as GraphQL enums, declared once: their GraphQL names are their class
names, their values the members' names (MISSING_ROLE), standing for the stored values
(missing_role)."""

from __future__ import annotations

from enum import Enum

import strawberry

from store.db.queries import LISTINGS, Order
from store.model.construction import ConstructionStatus
from store.model.journal_digest import TraceIntegrity
from store.model.surface_records import SurfaceForm, SurfaceVerification
from store.model.taxonomy import ResidualKind, ResidualSourceAxis
from store.model.teaching_surface import GroundingSource
from store.model.turns import NormativeClearance, TurnKind

# (enum, its GraphQL description): registered with strawberry in place when this loads.
GRAPHQL_ENUMS: tuple[tuple[type[Enum], str], ...] = (
    (ResidualKind, "ADR-0225's closed residual kinds."),
    (ResidualSourceAxis, "The structural layer a residual comes from."),
    (Order, "The order of a list: OLDEST_FIRST (append order, the default), NEWEST_FIRST, "
            "MOST_SEEN (most sightings first, ties oldest first: residuals and surfaces only), "
            "or TIME_ASC and TIME_DESC (turns only: by CORE's own timestamp, ties in append "
            "order, turns without a time last); or by a column a list shows, ascending or "
            "descending (<COLUMN>_ASC, <COLUMN>_DESC), ties in append order (oldest first, "
            "newest first), records without a value last, texts in byte order of their UTF-8 "
            "on both backends (SQLite's BINARY, PostgreSQL's COLLATE \"C\": \"Zebra\" before "
            "\"apples\" before \"émigré\"), false before true: "
            + "; ".join(f"{name} by " + ", ".join(column for column, _ in listing.column_orders)
                        for name, listing in LISTINGS.items() if listing.column_orders)
            + " (another list refuses them). A cursor pages only the order it came from."),
    (GroundingSource, "Where a turn's surface was grounded: CORE's closed grounding_source "
                      "set."),
    (SurfaceVerification, "How a teaching surface compared with its re-derivation from corpora "
                          "and packs."),
    (SurfaceForm, "Which chain template a teaching surface has: single (ADR-0052), composed "
                  "(ADR-0062, one hop), transitive (ADR-0083, two or more hops) or cross-pack "
                  "(ADR-0067)."),
    (NormativeClearance, "CORE's normative_clearance: suppressed, violated, unassessable or "
                         "cleared."),
    (TurnKind, "Where a turn record came from: a Workbench journal line, a ChatRuntime output "
               "or a TurnEvent."),
    (TraceIntegrity, "CORE's trace_integrity: PIPELINE_TRACE when the turn has a trace_hash, "
                     "else LEGACY_UNHASHED."),
    (ConstructionStatus, "What a journal turn's construction_evidence came to, as CORE's "
                         "seam reports it (construction_evidence_v1): recorded (its assessments "
                         "projected) or missing_evidence (nothing projected; the reason says "
                         "why)."),
)

for _enum, _description in GRAPHQL_ENUMS:
    strawberry.enum(_enum, name=_enum.__name__, description=_description)
