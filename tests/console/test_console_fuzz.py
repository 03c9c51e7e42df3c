"""Whatever a browser sends the console (names and values of query parameters, path segments),
the answer is a page: 200, 304, 400 naming a parameter, or 404; never a 500 or a traceback."""

from __future__ import annotations

import base64
import html
import re
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pages_html import problem
from starlette.testclient import TestClient

pytestmark = pytest.mark.slow

PATHS = ("/", "/residuals", "/assessments", "/surfaces", "/turns", "/batches", "/log")
NAMES = ("kind", "axis", "organ", "familyId", "code", "runnable", "sourceRef", "batchId",
         "groundingSource", "verification", "epistemicState", "normativeClearance",
         "corpusId", "chainId", "surfaceForm", "intent", "subject", "recordType", "source",
         "batchIdFrom", "batchIdTo", "ingestedFrom", "ingestedTo", "order", "first", "last",
         "after", "before", "asOf", "from", "root", "below")
VALUES = st.one_of(
    st.sampled_from(["MISSING_ROLE", "ROLE", "TEACHING", "MISMATCH", "true", "false",
                     "MOST_SEEN", "NEWEST_FIRST", "0", "18", "83", "-1", "9" * 30, "1e3",
                     "2026-05-01", "2026-05-01T00:00:00Z", "", "null", "[]", "\x00"]),
    st.integers(min_value=-2**70, max_value=2**70).map(str),
    st.binary(max_size=24).map(lambda b: base64.urlsafe_b64encode(b).decode()),
    st.text(max_size=40),
)
PARAMS = st.lists(st.tuples(st.one_of(st.sampled_from(NAMES), st.text(max_size=12)), VALUES),
                  max_size=5)


def spelled(name: str) -> str:
    """A parameter name as an error page shows it: C0/C1 control characters as \\xNN."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda c: f"\\x{ord(c.group()):02x}", name)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(PATHS), params=PARAMS)
def test_any_parameters_give_a_page_never_a_500(console: TestClient, path: str,
                                                params: list[tuple[str, str]]) -> None:
    query = urlencode([(n.encode("utf-8", "surrogatepass"), v.encode("utf-8", "surrogatepass"))
                       for n, v in params])
    answer = console.get(f"{path}?{query}")
    assert answer.status_code in (200, 400), (path, params, answer.text[:300])
    assert "Traceback" not in answer.text
    if answer.status_code == 400:
        named = re.search(r"The parameter <code>(.*?)</code> is the problem", answer.text,
                          flags=re.S)
        assert named is not None, (params, problem(answer.text))
        # A control character in a name is spelled \xNN on the page, never echoed raw.
        assert html.unescape(named.group(1)) in {spelled(n) for n, _ in params} | {"filter"}
        assert problem(answer.text).startswith(html.unescape(named.group(1)) + ": ")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["residuals", "assessments", "surfaces", "turns", "batches",
                             "proofs/residuals", "proofs/turns", "export"]),
       key=st.one_of(st.text(min_size=1, max_size=70), st.sampled_from(["0" * 64, "1", "x.csv",
                                                                         "residuals.csv"])))
def test_any_record_path_gives_a_page_or_a_404(console: TestClient, kind: str,
                                               key: str) -> None:
    answer = console.get(f"/{kind}/{quote(key, safe='')}")
    assert answer.status_code in (200, 400, 404), (kind, key, answer.text[:300])
    assert "Traceback" not in answer.text
