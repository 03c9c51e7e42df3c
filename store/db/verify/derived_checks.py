"""`verify`'s derived tables: the tallies and sighting counts must be exactly what the stored
rows add up to, batch by batch, and the turn fields what each turn's line says (recomputed
from the rows, never trusted)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import Connection

from store.db.verify.problems import Problem
from store.db.write.sighting_counts import recomputed_sighting_counts, stored_sighting_counts
from store.db.write.tallies import recomputed_tallies, stored_tallies
from store.db.write.turn_fields import turn_field_problems

__all__ = ["sighting_count_problems", "tally_problems", "turn_field_problems"]


def tally_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """The derived tallies must be exactly what the ledgered rows add up to, batch by batch
    (the batches after `after_batch`)."""
    stored = stored_tallies(connection, after_batch)
    for batch_id, expected in recomputed_tallies(connection, after_batch):
        found = stored.pop(batch_id, [])
        if found != expected:
            yield Problem(None, "residual_tallies", f"batch {batch_id}",
                          f"{len(found)} tally rows do not match the {len(expected)} the "
                          "batch's residuals and occurrences add up to")
    for batch_id, found in stored.items():
        yield Problem(None, "residual_tallies", f"batch {batch_id}",
                      f"{len(found)} tally rows for a batch without residuals")


def sighting_count_problems(connection: Connection, after_batch: int = 0) -> Iterator[Problem]:
    """The derived sighting counts must be exactly the running counts the sightings make,
    row for row (both streams in key order: batch, record), the batches after `after_batch`."""
    expected, stored = (recomputed_sighting_counts(connection, after_batch),
                        stored_sighting_counts(connection, after_batch))
    want, have = next(expected, None), next(stored, None)
    while want is not None or have is not None:
        if have is None or (want is not None and want[:2] < have[:2]):
            assert want is not None
            yield Problem(None, "sighting_counts", f"batch {want[0]} {want[1]}",
                          f"row is missing ({want[2]} {want[1]} has {want[4]} sightings by "
                          "this batch)")
            want = next(expected, None)
        elif want is None or have[:2] < want[:2]:
            yield Problem(None, "sighting_counts", f"batch {have[0]} {have[1]}",
                          "row names no record this batch sighted (added out of band)")
            have = next(stored, None)
        else:
            if have != want:
                yield Problem(None, "sighting_counts", f"batch {have[0]} {have[1]}",
                              f"row says {have[2]} seq {have[3]}, {have[4]} sightings; the "
                              f"sightings say {want[2]} seq {want[3]}, {want[4]}")
            want, have = next(expected, None), next(stored, None)
