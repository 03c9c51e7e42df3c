"""A response is written byte for byte as strawberry writes it (`json.dumps(data,
separators=(",", ":"))`), whether orjson or json.dumps writes it (store/api/response_json.py)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from store.api.response_json import PlainResponse, response_json

# What a plain response holds: texts (any code point, surrogates and DEL included), ints (past
# 64 bits too), bools, nulls, lists and dicts with text keys.
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


def strawberry_bytes(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def as_bytes(encoded: str | bytes) -> bytes:
    return encoded if isinstance(encoded, bytes) else encoded.encode()


@given(st.dictionaries(st.text(), VALUES, max_size=4))
def test_a_plain_response_is_written_as_strawberry_writes_it(data: dict[str, Any]) -> None:
    assert as_bytes(response_json(PlainResponse(data))) == strawberry_bytes(data)


def test_what_orjson_would_write_otherwise_goes_through_json_dumps() -> None:
    for value, expected in [
        ("é", b'"\\u00e9"'),  # orjson: UTF-8
        ("\x7f", b'"\\u007f"'),  # orjson: DEL as it is
        ("\ud800", b'"\\ud800"'),  # orjson: refused
        (2**64, b"18446744073709551616"),  # orjson: refused
        ("a/b\x01\n", b'"a/b\\u0001\\n"'),  # the same either way
    ]:
        data = {"data": {"v": value}}
        assert as_bytes(response_json(PlainResponse(data))) == b'{"data":{"v":' + expected + b"}}"


def test_any_other_response_is_json_dumps() -> None:
    data = {"data": {"f": 1e16}}  # orjson would write 1e16, json.dumps 1e+16
    assert response_json(data) == '{"data":{"f":1e+16}}'
