"""journal_digest: CORE's recipe (core-interop.md §5 "Digest"), checked on the spec's vectors."""

from __future__ import annotations

import hashlib
import json
from io import BytesIO

import orjson
import pytest
from turn_data import (
    UNHASHED_DIGEST,
    WORKED_CANONICAL,
    WORKED_DIGEST,
    WORKED_LINE,
    with_digest,
    worked_entry,
)

from store.model.fields import RecordError
from store.model.journal_digest import canonical_text, derived_trace_integrity, journal_digest
from store.model.jsonl import iter_json_lines
from store.model.turns import parse_turn_line

# The worked example with floats in pipeline_record as real entries hold them (§5), sorted.
FLOATS_CANONICAL = WORKED_CANONICAL.replace(
    '"pipeline_record":null',
    '"pipeline_record":{"drift":0.0,"status":"recorded","tolerance":1e-06,'
    '"versor_condition":1.45208915114381e-07}',
)
FLOATS_DIGEST = "sha256:48195a0bc301cc72a58b749939edd5015ec2090118f98dce212d6abd0fca904b"


def parse(text: str):
    return parse_turn_line(orjson.loads(text), text)


def test_worked_example_canonical_form_is_the_spec_text():
    assert len(WORKED_CANONICAL.encode("utf-8")) == 1022
    assert canonical_text(worked_entry()) == WORKED_CANONICAL


def test_worked_example_digest():
    assert journal_digest(WORKED_CANONICAL, orjson.loads(WORKED_CANONICAL)) == WORKED_DIGEST


def test_unhashed_variant_digest_with_trace_integrity_written():
    entry = worked_entry() | {"trace_hash": None, "trace_integrity": "legacy_unhashed"}
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert journal_digest(text, entry) == UNHASHED_DIGEST


def test_unhashed_variant_digest_with_trace_integrity_derived():
    entry = worked_entry() | {"trace_hash": None}
    del entry["trace_integrity"]
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert journal_digest(text, entry) == UNHASHED_DIGEST


def test_derived_trace_integrity():
    assert derived_trace_integrity("abc") == "pipeline_trace"
    assert derived_trace_integrity("") == "legacy_unhashed"
    assert derived_trace_integrity("  ") == "legacy_unhashed"
    assert derived_trace_integrity(None) == "legacy_unhashed"


def test_written_line_verifies_by_the_raw_line_method():
    assert journal_digest(WORKED_LINE, orjson.loads(WORKED_LINE)) == WORKED_DIGEST
    assert parse(WORKED_LINE).journal_digest == WORKED_DIGEST


@pytest.mark.parametrize(
    "render",
    [
        lambda entry: json.dumps(entry, ensure_ascii=False),  # spaces, insertion order
        lambda entry: json.dumps(dict(reversed(entry.items())), ensure_ascii=False),
        lambda entry: json.dumps(entry, sort_keys=True, separators=(",", ":")),  # \u2014
    ],
    ids=["spaces", "reversed-keys", "ascii-escaped"],
)
def test_non_canonical_rendering_verifies_by_reserialising(render):
    text = render(worked_entry() | {"journal_digest": WORKED_DIGEST})
    assert text != WORKED_LINE
    assert journal_digest(text, orjson.loads(text)) == WORKED_DIGEST
    assert parse(text).journal_digest == WORKED_DIGEST


def test_line_without_trace_integrity_verifies_by_reserialising():
    entry = worked_entry() | {"trace_hash": None, "journal_digest": UNHASHED_DIGEST}
    del entry["trace_integrity"]
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    record = parse(text)
    assert record.trace_integrity == "legacy_unhashed"
    assert record.journal_digest == UNHASHED_DIGEST


def test_floats_keep_python_repr():
    assert hashlib.sha256(FLOATS_CANONICAL.encode("utf-8")).hexdigest() == FLOATS_DIGEST[7:]
    line = with_digest(FLOATS_CANONICAL, FLOATS_DIGEST)
    assert journal_digest(line, orjson.loads(line)) == FLOATS_DIGEST
    assert parse(line).journal_digest == FLOATS_DIGEST
    spaced = json.dumps(json.loads(line))  # non-canonical: only re-serialising can verify it
    assert journal_digest(spaced, orjson.loads(spaced)) == FLOATS_DIGEST


def test_changed_prompt_is_rejected_naming_journal_digest():
    line = WORKED_LINE.replace("Why does light exist?", "Why does light exist!")
    with pytest.raises(RecordError, match=r"^journal_digest: the line says sha256:9290.*"
                                          r" its content hashes to sha256:"):
        parse(line)


def test_changed_digest_is_rejected_naming_journal_digest():
    line = WORKED_LINE.replace(WORKED_DIGEST, WORKED_DIGEST[:-1] + "3")
    with pytest.raises(RecordError, match=r"^journal_digest: the line says .*1783, its content"
                                          r" hashes to sha256:9290"):
        parse(line)


@pytest.mark.parametrize(
    "digest", ["sha256:" + "A" * 64, "sha256:abc", "92906304" * 8, "md5:" + "0" * 64]
)
def test_malformed_digest_is_rejected(digest):
    line = WORKED_LINE.replace(WORKED_DIGEST, digest)
    with pytest.raises(RecordError, match=r"^journal_digest: .* is not sha256: and 64"):
        parse(line)


def test_empty_or_missing_digest_is_accepted_and_stored_as_none():
    assert parse(with_digest(WORKED_CANONICAL, "")).journal_digest is None
    assert parse(WORKED_CANONICAL).journal_digest is None


def test_non_string_digest_is_rejected():
    entry = worked_entry() | {"journal_digest": None}
    text = json.dumps(entry)
    with pytest.raises(RecordError, match=r"^journal_digest: expected a string, got null"):
        parse(text)


def test_line_as_the_jsonl_reader_yields_it_verifies():
    stream = BytesIO(b"\n" + WORKED_LINE.encode("utf-8") + b"\r\n")
    (line,) = iter_json_lines(stream)
    assert parse_turn_line(line.value, line.text).journal_digest == WORKED_DIGEST
