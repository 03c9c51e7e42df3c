"""CSV cells a spreadsheet would run as a formula, neutralized as OWASP's CSV Injection page
recommends: a text cell whose first character is `=`, `+`, `-`, `@`, a tab or a carriage
return gets a single quote in front (`'=1+1`), which Excel, LibreOffice Calc and Google Sheets
read as "this cell is text". The quote is part of the cell for any other reader: `export
--csv-raw` writes cells as stored. (The store holds no U+0000, ASVS 1.2.10's other one.)"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def neutralized(cell: str) -> str:
    """`cell`, with the quote in front if a spreadsheet would run it."""
    return QUOTE + cell if cell.startswith(FORMULA_STARTS) else cell


def neutralized_rows(rows: Iterable[Sequence[Any]], positions: Sequence[int]
                     ) -> Iterator[Sequence[Any]]:
    """`rows` with the text cells at `positions` neutralized (None and other values as they
    are)."""
    for row in rows:
        cells = list(row)
        for i in positions:
            if isinstance(cells[i], str) and cells[i].startswith(FORMULA_STARTS):
                cells[i] = QUOTE + cells[i]
        yield cells
