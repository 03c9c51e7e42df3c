"""The assessment id recipe, shared by the writer and `verify`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.model.canonical import content_id


def assessment_id(problem_text: str | None, source_ref: str | None,
                  assessment: Mapping[str, Any]) -> str:
    """Names an assessment in its context: the same assessment of another problem differs.

    `assessment` is ContractAssessment.as_dict()'s shape (a stored row decodes to it)."""
    return content_id(
        {
            "problem_text": problem_text,
            "source_ref": source_ref,
            "assessment": dict(assessment),
        }
    )
