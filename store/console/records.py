"""Record pages: every stored field, links both ways between records, and the record's
inclusion proof (console/proofs.py)."""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

from sqlalchemy import Connection
from starlette.datastructures import QueryParams
from starlette.requests import Request

from store.console.construction_links import assessment_turn, residual_turns, turn_construction
from store.console.glossary import explain
from store.console.page_json import Links
from store.console.parameters import ParameterError
from store.console.proofs import proof_context, signed_json
from store.console.record_keys import RECORD_KINDS, not_found, record_key, then
from store.db import queries
from store.db.queries.browsing import batch_by_id, journal_neighbours
from store.model.journal_digest import journal_digest

if TYPE_CHECKING:
    from store.console.pages import Console, Head

K = TypeVar("K", str, int)
R = TypeVar("R")
OCCURRENCES_SHOWN = 20

def _field(name: str, value: Any, href: str | None = None, *, pre: bool = False,
           keep_as_of: bool = True, explain_as: str | None = None) -> dict[str, Any]:
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        text = json.dumps([v.as_dict() if hasattr(v, "as_dict") else
                           dataclasses.asdict(v) if dataclasses.is_dataclass(v)
                           and not isinstance(v, type) else v
                           for v in value], ensure_ascii=False)
    elif hasattr(value, "name") and hasattr(value, "value"):  # a domain enum: GraphQL's name
        text = value.name
    else:
        text = str(value)
    return {"name": name, "text": text, "href": href, "pre": pre, "keep_as_of": keep_as_of,
            "title": explain(explain_as or name, getattr(value, "value", value))}


def _as_stored(record: Any, *names: str) -> list[dict[str, Any]]:
    """Fields shown as the record holds them: no link, no special form."""
    return [_field(name, getattr(record, name)) for name in names]


def _list_href(path: str, **params: str | None) -> str | None:
    """The list filtered by `params`; None (no link) for a null value."""
    if any(value is None for value in params.values()):
        return None
    return f"/{path}?{urlencode(params)}"


def _residual(connection: Connection, key: str, head: Head, request: Request
              ) -> dict[str, Any]:
    stored = _stored(queries.residual_by_id, connection, key, head, "residual")
    r = stored.residual
    after = request.query_params.get("after")
    page = queries.list_occurrences(connection, key, OCCURRENCES_SHOWN, after, as_of=head.as_of)
    base = request.scope.get("root_path", "")
    return {
        "fields": [
            _field("residual_id", r.residual_id),
            _field("residual_kind", r.residual_kind, _list_href("residuals",
                                                                kind=r.residual_kind.name)),
            _field("source_axis", r.source_axis, _list_href("residuals",
                                                            axis=r.source_axis.name)),
            _field("candidate_organ", r.candidate_organ,
                   _list_href("residuals", organ=r.candidate_organ)),
            _field("family_id", r.family_id, _list_href("residuals", familyId=r.family_id)),
            _field("residual_code", r.residual_code, _list_href("residuals",
                                                                code=r.residual_code)),
            _field("evidence_spans", r.evidence_spans),
            _field("explanation", r.explanation),
            _field("occurrences", stored.occurrence_count),
            _field("batch_id", stored.batch_id, f"/batches/{stored.batch_id}"),
            _field("seq", stored.seq),
        ],
        "related": [{
            "title": f"Occurrences ({stored.occurrence_count}): the assessments that produced it",
            "headings": ["assessment", "problem", "ordinal", "batch", "ingested at"],
            "rows": [[
                {"text": o.assessment.assessment_id[:16] + "…",
                 "href": f"/assessments/{o.assessment.assessment_id}"},
                {"text": o.assessment.problem_text or "—"},
                {"text": str(o.ordinal)},
                {"text": str(o.assessment.batch.batch_id),
                 "href": f"/batches/{o.assessment.batch.batch_id}"},
                {"text": o.assessment.batch.ingested_at}] for o in page.items],
            "more": None if not page.has_next_page else
            f"{base}/residuals/{key}?{urlencode(_kept(head, after=page.end_cursor or ''))}",
        }, residual_turns(connection, key, head.as_of)],
    }


def _kept(head: Head, **params: str) -> dict[str, str]:
    return params | ({} if head.as_of is None else {"asOf": str(head.as_of)})


def _stored(get: Callable[[Connection, K, int | None], R | None], connection: Connection,
            key: K, head: Head, noun: str) -> R:
    """The record keyed `key` as of the page's head; not found: the page says so."""
    found = get(connection, key, head.as_of)
    if found is None:
        raise not_found(f"no {noun} {key}" + then(head))
    return found


def _assessment(connection: Connection, key: str, head: Head, request: Request
                ) -> dict[str, Any]:
    stored = _stored(queries.assessment_by_id, connection, key, head, "assessment")
    a = stored.assessment
    produced = queries.assessment_residuals(connection, [key], as_of=head.as_of)[key]
    turn = assessment_turn(connection, key, head.as_of)
    return {
        "fields": [
            _field("assessment_id", stored.assessment_id),
            _field("problem_text", stored.problem_text, pre=True),
            _field("source_ref", stored.source_ref),
            _field("turn", None if turn is None else turn.turn_key,
                   None if turn is None else f"/turns/{turn.turn_key}"),
            _field("candidate_organ", a.candidate_organ,
                   _list_href("assessments", organ=a.candidate_organ)),
            _field("family_id", stored.family_id),
            _field("runnable", a.runnable),
            _field("missing_bindings", list(a.missing_bindings)),
            _field("unresolved_hazards", list(a.unresolved_hazards)),
            _field("explanation", a.explanation),
            _field("evidence_spans", a.evidence_spans),
            _field("batch_id", stored.batch.batch_id, f"/batches/{stored.batch.batch_id}"),
            _field("seq", stored.seq),
        ],
        "related": [{
            "title": f"Residuals it produced ({len(produced)})",
            "headings": ["residual", "kind", "axis", "code"],
            "rows": [[{"text": r.residual.residual_id[:16] + "…",
                       "href": f"/residuals/{r.residual.residual_id}"},
                      {"text": r.residual.residual_kind.name},
                      {"text": r.residual.source_axis.name},
                      {"text": r.residual.residual_code}] for r in produced],
        }],
    }


def _diff(stored: str, expected: str) -> list[tuple[str, str]]:
    """The stored text against the expected one, character by character."""
    marks: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=expected, b=stored, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            marks.append(("same", stored[b0:b1]))
            continue
        if a1 > a0:
            marks.append(("del", expected[a0:a1]))
        if b1 > b0:
            marks.append(("ins", stored[b0:b1]))
    return marks


def _surface(connection: Connection, key: str, head: Head, request: Request
             ) -> dict[str, Any]:
    s = _stored(queries.surface_by_id, connection, key, head, "surface")
    sightings = queries.list_surface_occurrences(connection, key, OCCURRENCES_SHOWN,
                                                 request.query_params.get("after"),
                                                 as_of=head.as_of)
    context: dict[str, Any] = {
        "fields": [
            _field("surface_id", s.surface_id),
            _field("grounding_source", s.grounding_source,
                   _list_href("surfaces", groundingSource=s.grounding_source.name)),
            _field("surface", s.surface, pre=True),
            _field("verification", s.verification,
                   _list_href("surfaces", verification=s.verification.name)),
            _field("expected_surface", s.expected_surface, pre=True),
            _field("subject", s.subject, _list_href("surfaces", subject=s.subject)),
            _field("intent", s.intent, _list_href("surfaces", intent=s.intent)),
            _field("corpus_id", s.corpus_id, _list_href("surfaces", corpusId=s.corpus_id)),
            _field("chain_id", s.chain_id, _list_href("surfaces", chainId=s.chain_id)),
            *_as_stored(s, "chain_provenance", "pack_id", "pack_version", "connective", "object",
                        "subject_domains", "object_domains", "surface_form", "hops",
                        "hop_chain_ids", "candidate_chain_ids", "surface_prefix",
                        "checked_against"),
            _field("occurrences", s.occurrence_count),
            _field("batch_id", s.batch_id, f"/batches/{s.batch_id}"),
            _field("seq", s.seq),
        ],
        "related": [
            {"title": "Checked against (checkedAgainst): the corpus and pack files the "
                      "verification read",
             "headings": ["kind", "id", "sha256", "version"],
             "rows": [[{"text": f.kind}, {"text": f.id}, {"text": f.sha256},
                       {"text": f.version or "—"}] for f in s.checked_against]},
            {"title": f"Sightings ({s.occurrence_count}): the turns that emitted it",
             "headings": ["turn", "session", "turn id", "prompt", "batch"],
             "rows": [[{"text": (o.turn_key or "")[:16] + "…" if o.turn_key else "—",
                        "href": f"/turns/{o.turn_key}" if o.turn_key else None},
                       {"text": o.session_id or "—"}, {"text": o.turn_id or "—"},
                       {"text": o.prompt or "—"},
                       {"text": str(o.batch.batch_id), "href": f"/batches/{o.batch.batch_id}"}]
                      for o in sightings.items]},
        ],
    }
    if s.verification.name == "MISMATCH" and s.surface is not None and s.expected_surface:
        context.update(diff=_diff(s.surface, s.expected_surface), stored_text=s.surface,
                       expected_text=s.expected_surface)
    return context


def _journal_check(line: str, stated: str | None) -> dict[str, Any]:
    try:
        value = json.loads(line)
        computed = journal_digest(line, value) if isinstance(value, dict) else None
    except (ValueError, Exception):  # a line the store kept verbatim but cannot re-read
        computed = None
    if stated is None:
        return {"line": line, "holds": False, "message": "no journal_digest on this line"}
    if computed == stated:
        return {"line": line, "holds": True,
                "message": f"journal_digest checks: the line hashes to {computed}, as stated"}
    return {"line": line, "holds": False,
            "message": f"journal_digest does NOT check: the line states {stated}, its content "
                       f"hashes to {computed}"}


def _turn(connection: Connection, key: str, head: Head, request: Request) -> dict[str, Any]:
    t = _stored(queries.turn_by_key, connection, key, head, "turn")
    s = t.surface
    construction, constructed = turn_construction(connection, t, head.as_of)
    context: dict[str, Any] = {
        "fields": [
            _field("turn_key", t.turn_key),
            _field("kind", t.kind),
            _field("turn_id", t.turn_id),
            _field("prompt", t.prompt, pre=True),
            _field("timestamp", t.timestamp),
            _field("grounding_source", t.grounding_source,
                   _list_href("turns", groundingSource=t.grounding_source.name)),
            _field("epistemic_state", t.epistemic_state,
                   _list_href("turns", epistemicState=t.epistemic_state)),
            *_as_stored(t, "normative_clearance", "normative_detail", "verdict_identity",
                        "verdict_safety", "verdict_ethics", "refusal_emitted", "hedge_injected",
                        "trace_hash", "trace_integrity", "journal_digest"),
            _field("surface_id", s.surface_id, f"/surfaces/{s.surface_id}"),
            _field("surface verification", s.verification, explain_as="verification"),
            _field("chain_id", s.chain_id, _list_href("surfaces", chainId=s.chain_id)),
            _field("corpus_id", s.corpus_id, _list_href("surfaces", corpusId=s.corpus_id)),
            _field("pack_id", s.pack_id),
            _field("checked_against", s.checked_against),
            _field("construction_status", construction.status),
            _field("construction_missing_reason", construction.missing_reason),
            _field("batch_id", t.batch_id, f"/batches/{t.batch_id}"),
            _field("seq", t.seq),
        ],
        "related": constructed if t.kind == "workbench_journal" else [],
        "neighbours": journal_neighbours(connection, key, head.as_of),
    }
    if t.journal_digest is not None or t.kind == "workbench_journal":
        context["journal"] = _journal_check(t.line, t.journal_digest)
    else:
        context["fields"].append(_field("line", t.line, pre=True))
    return context


def _batch(connection: Connection, key: int, head: Head, request: Request) -> dict[str, Any]:
    from store.console.lists import LIST_KINDS, parsed_filter

    found = _stored(batch_by_id, connection, key, head, "batch")
    b = found.batch
    within = {"batchIdFrom": str(b.batch_id), "batchIdTo": str(b.batch_id)}
    stored = []  # the records of each kind this batch stored first: a count each, bounded
    for name in ("residuals", "assessments", "surfaces", "turns"):
        kind = LIST_KINDS[name]
        count = kind.count(connection, parsed_filter(kind, QueryParams(within)), head.as_of)
        stored.append([{"text": name}, {"text": f"{count:,}", "value": count},
                       {"text": "list", "href": _list_href(name, **within)}])
    return {
        "fields": [
            *_as_stored(b, *(f.name for f in dataclasses.fields(b))),
            _field("tree head", "—" if found.tree_size is None else
                   f"size {found.tree_size:,}, root {found.root_hash}",
                   None if found.tree_size is None else f"/?asOf={found.tree_size}",
                   keep_as_of=False),
            _field("tree head size", found.tree_size),
            _field("tree head root (hex)", found.root_hash),
        ],
        "related": [{
            "title": "What it stored",
            "headings": ["records", "first stored by this batch", "list"],
            "rows": stored,
        }],
    }


_READERS: dict[str, Callable[[Connection, Any, Head, Request], dict[str, Any]]] = {
    "residuals": _residual, "assessments": _assessment, "surfaces": _surface, "turns": _turn,
    "batches": _batch,
}


def record_reader(kind: str) -> Callable[[Connection, Request, Head, Console], dict[str, Any]]:
    heading = RECORD_KINDS[kind][2]

    def read(connection: Connection, request: Request, head: Head,
             console: Console) -> dict[str, Any]:
        for name in request.query_params:
            if name not in ("asOf", "after"):
                raise ParameterError(name[:80], "not a parameter of a record page; it takes "
                                     "asOf (and after, for its sightings)")
        key = record_key(kind, request.path_params["key"])
        context = _READERS[kind](connection, key, head, request)
        return {"title": f"{heading} {str(key)[:12]}", "heading": heading, "key": key,
                "list_name": kind, "list_title": kind.capitalize(),
                "neighbours": None, "related": [],
                **context, **proof_context(connection, request, head, console, kind, key)}

    return read


def record_json(context: dict[str, Any], links: Links) -> dict[str, Any]:
    """A record page as JSON: its stored fields as the page shows them (text, and the link
    each carries), the related tables, the journal line's check, and the inclusion proof with
    the signed proof on offer."""
    def field_href(f: dict[str, Any]) -> str | None:
        if not f["href"]:
            return None
        return links.at(f["href"]) if f["keep_as_of"] else links.plain(f["href"])

    neighbours = context.get("neighbours")
    bundle = context["bundle"]
    kept = bundle["kept"]
    return {
        "kind": context["list_name"], "heading": context["heading"], "key": context["key"],
        "fields": [{"name": f["name"], "value": f["text"], "href": field_href(f)}
                   for f in context["fields"]],
        "journalNeighbours": None if not neighbours else {
            "journal": neighbours.journal,
            "previous": None if neighbours.previous is None
            else links.at(f"/turns/{neighbours.previous}"),
            "next": None if neighbours.next is None else links.at(f"/turns/{neighbours.next}")},
        "journalLine": context.get("journal"),
        "diff": None if not context.get("diff") else {
            "stored": context["stored_text"], "expected": context["expected_text"],
            "marks": [{"op": op, "text": text} for op, text in context["diff"]]},
        "related": [{"title": section["title"], "columns": section["headings"],
                     "rows": [[{"text": cell["text"],
                                "href": links.at(cell["href"]) if cell.get("href") else None}
                               for cell in row] for row in section["rows"]],
                     "more": section.get("more")} for section in context["related"]],
        "inclusionProof": dataclasses.asdict(context["proof"]),
        "proofFile": context["proof_href"],
        "signedCheckpoint": signed_json(context["signed"]),
        "signedProof": {"href": bundle["href"], "command": bundle["command"],
                        "reason": bundle["reason"], "elsewhere": bundle["elsewhere"],
                        "checkpointId": None if kept is None else kept.checkpoint_id,
                        "checkpointTreeSize": None if kept is None else kept.tree_size},
    }
