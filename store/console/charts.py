"""Charts drawn on the server as inline SVG: no script, no library, nothing fetched; each bar a
link (to the filtered list), its exact count and explanation in a <title> shown on hover.
Colours come from the console's style sheet (classes), so the CSP needs no inline style."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH = 500
LABEL = 230
ROW = 22
MAX_BARS = 12


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    count: int
    href: str | None = None
    explanation: str | None = None


def _title(bar: Bar, unit: str) -> str:
    text = f"{bar.label}: {bar.count:,} {unit}"
    return f"{text}. {bar.explanation}" if bar.explanation else text


def bar_chart(title: str, bars: Sequence[Bar], unit: str = "records") -> Markup:
    """Horizontal bars, largest first as given; at most MAX_BARS (the rest summed in one)."""
    shown = list(bars[:MAX_BARS])
    rest = bars[MAX_BARS:]
    if rest:
        shown.append(Bar(f"{len(rest)} more", sum(b.count for b in rest)))
    top = max((b.count for b in shown), default=0) or 1
    height = ROW * max(len(shown), 1) + 4
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {height}" '
             f'width="{WIDTH}" height="{height}" aria-label="{escape(title)}">'
             f"<title>{escape(title)}</title>"]
    if not shown:
        parts.append('<text x="0" y="16" class="empty">nothing stored</text>')
    for i, bar in enumerate(shown):
        y = i * ROW + 2
        length = max(1, round((WIDTH - LABEL - 70) * bar.count / top))
        label = bar.label if len(bar.label) <= 28 else bar.label[:27] + "…"
        body = (f"<title>{escape(_title(bar, unit))}</title>"
                f'<text x="{LABEL - 6}" y="{y + 14}" class="label">{escape(label)}</text>'
                f'<rect x="{LABEL}" y="{y + 3}" width="{length}" height="{ROW - 6}" '
                f'class="bar"/>'
                f'<text x="{LABEL + length + 4}" y="{y + 14}" class="count">'
                f"{bar.count:,}</text>")
        parts.append(f'<a href="{escape(bar.href)}">{body}</a>' if bar.href
                     else f"<g>{body}</g>")
    parts.append("</svg>")
    return Markup("".join(parts))


def timeline(points: Sequence[tuple[str, int, int]], base: str = "") -> Markup:
    """Rows added per day (vertical bars, oldest left), each with its day and batch count."""
    shown = list(points[-60:])
    height, floor = 140, 118
    top = max((p[2] for p in shown), default=0) or 1
    step = (WIDTH - 20) / max(len(shown), 1)
    parts = [f'<svg class="chart timeline" role="img" viewBox="0 0 {WIDTH} {height}" '
             f'width="{WIDTH}" height="{height}" aria-label="rows ingested per day">'
             "<title>rows ingested per day</title>"]
    if not shown:
        parts.append('<text x="0" y="16" class="empty">no batch yet</text>')
    for i, (day, batches, rows) in enumerate(shown):
        bar = max(1, round(100 * rows / top))
        x = 10 + i * step
        parts.append(
            f'<a href="{escape(base + _day_href(day))}"><title>{escape(day)}: {batches:,} '
            f"batch{'es' if batches != 1 else ''}, {rows:,} new rows</title>"
            f'<rect x="{x:.1f}" y="{floor - bar}" width="{max(step - 2, 1):.1f}" '
            f'height="{bar}" class="bar"/></a>')
    if shown:
        parts.append(f'<text x="10" y="{height - 4}" class="label-start">'
                     f"{escape(shown[0][0])}</text>"
                     f'<text x="{WIDTH - 10}" y="{height - 4}" class="label-end">'
                     f"{escape(shown[-1][0])}</text>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _day_href(day: str) -> str:
    return (f"/batches?ingestedFrom={day}T00:00:00Z&ingestedTo={day}T23:59:59.999999Z")
