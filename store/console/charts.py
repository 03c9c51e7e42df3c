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


def _opening(title: str, height: int, css: str = "chart") -> str:
    # No role="img": an image's content is presentational, and its bars are links (axe's
    # nested-interactive). The <svg> is a labelled graphics document; each link is named by
    # its own <title>.
    return (f'<svg class="{css}" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
            f'height="{height}" aria-label="{escape(title)}"><title>{escape(title)}</title>')


def bar_chart(title: str, bars: Sequence[Bar], unit: str = "records") -> Markup:
    """Horizontal bars, largest first as given; at most MAX_BARS (the rest summed in one)."""
    shown = list(bars[:MAX_BARS])
    rest = bars[MAX_BARS:]
    if rest:
        shown.append(Bar(f"{len(rest)} more", sum(b.count for b in rest)))
    top = max((b.count for b in shown), default=0) or 1
    height = ROW * max(len(shown), 1) + 4
    parts = [_opening(title, height)]
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


@dataclass(frozen=True, slots=True)
class Column:
    """One bar of a histogram: its bucket's label (a day, an hour), count and link."""

    label: str
    count: int
    href: str | None
    title: str  # said on hover and to a screen reader


COLUMN_MAX = 56  # a bar's widest: one day alone is a bar, not a block across the chart


def histogram(title: str, columns: Sequence[Column], empty: str = "nothing stored") -> Markup:
    """Vertical bars, oldest left, each a link with its title; each bar's count above it and,
    when few enough to read, its label below (else the first and last only)."""
    shown = list(columns)
    height, floor = 150, 118
    top = max((c.count for c in shown), default=0) or 1
    step = (WIDTH - 20) / max(len(shown), 1)
    width = min(max(step - 2, 1), COLUMN_MAX)
    every_label = len(shown) <= 6
    parts = [_opening(title, height, "chart histogram")]
    if not shown:
        parts.append(f'<text x="0" y="16" class="empty">{escape(empty)}</text>')
    for i, column in enumerate(shown):
        bar = max(1, round(96 * column.count / top))
        x = 10 + i * step + (step - width) / 2
        middle = x + width / 2
        body = [f"<title>{escape(column.title)}</title>",
                f'<rect x="{x:.1f}" y="{floor - bar}" width="{width:.1f}" height="{bar}" '
                'class="bar"/>']
        if len(shown) <= 24:
            body.append(f'<text x="{middle:.1f}" y="{floor - bar - 4}" class="count-above">'
                        f"{column.count:,}</text>")
        if every_label:
            body.append(f'<text x="{middle:.1f}" y="{height - 14}" class="label-under">'
                        f"{escape(column.label)}</text>")
        joined = "".join(body)
        parts.append(f'<a href="{escape(column.href)}">{joined}</a>' if column.href
                     else f"<g>{joined}</g>")
    if shown and not every_label:
        parts.append(f'<text x="10" y="{height - 14}" class="label-start">'
                     f"{escape(shown[0].label)}</text>"
                     f'<text x="{WIDTH - 10}" y="{height - 14}" class="label-end">'
                     f"{escape(shown[-1].label)}</text>")
    parts.append("</svg>")
    return Markup("".join(parts))


def timeline_columns(points: Sequence[tuple[str, int, int]], base: str = ""
                     ) -> list[Column]:
    """The overview's rows added per day (the newest 60 days), each linking to its batches."""
    return [Column(day, rows, base + _day_href(day),
                   f"{day}: {batches:,} batch{'es' if batches != 1 else ''}, {rows:,} new rows")
            for day, batches, rows in points[-60:]]


def timeline(points: Sequence[tuple[str, int, int]], base: str = "") -> Markup:
    """Rows added per day (vertical bars, oldest left), each with its day and batch count."""
    return histogram("rows ingested per day", timeline_columns(points, base), "no batch yet")


def _day_href(day: str) -> str:
    return (f"/batches?ingestedFrom={day}T00:00:00Z&ingestedTo={day}T23:59:59.999999Z")
