"""Synthetic CORE frames from a seed, for benchmarks (importable: `from frames import ...`).

The mix: the four families' organs and the two family-less ones; labels from ADR-0225's
table (mapped) and labels outside it (unmapped, projected to the fallback); 1-3 spans per
assessment cut from the generated problem text, so `problem_text[start:end] == text`;
some runnable assessments; some problems repeated verbatim (their rows are "present").
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from store.model.taxonomy import FAMILY_BY_ORGAN, FAMILYLESS_ORGANS, LABEL_MAP

ORGANS = (*sorted(FAMILY_BY_ORGAN), *sorted(FAMILYLESS_ORGANS))
MAPPED_LABELS = tuple(sorted(LABEL_MAP))
UNMAPPED_LABELS = (
    "unbound_base_quantity",      # CORE emits it; not in the ADR table
    "tariff_period_unbound",
    "remainder_total_ambiguous",
    "Quantity_Unbound",           # lookup is exact: case differs, so unmapped
    "quantity_unbound ",          # ... and so does a trailing space
)

NAMES = ("Tom", "Sam", "Ann", "Lia", "Bob", "Kim", "Raj", "Eva", "Noor", "Ivan")
VERBS = ("gained", "lost", "bought", "sold", "received", "gave away", "ate", "found")
OBJECTS = ("apples", "pears", "marbles", "stickers", "litres of water", "degrees", "coins",
           "books", "kilograms of rice", "tickets")
TAILS = ("", " on Monday", " at the market", " in the morning", " after school")
QUESTIONS = ("How many are left?", "How many now?", "What fraction remains?",
             "What percent is that?", "How much did it change?")

RUNNABLE_SHARE = 0.12
REPEAT_SHARE = 0.05
UNMAPPED_SHARE = 0.15


def _problem(rng: random.Random, index: int) -> str:
    name, other = rng.sample(NAMES, 2)
    first = (f"{name} had {rng.randint(2, 999)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}.")
    second = f"{name} {rng.choice(VERBS)} {rng.randint(1, 99)} to {other}."
    if rng.random() < 0.3:
        second += f" Then {other} {rng.choice(VERBS)} {rng.randint(1, 50)} percent of them."
    return f"{first} {second} {rng.choice(QUESTIONS)} (case {index})"


def _spans(rng: random.Random, text: str) -> list[dict[str, Any]]:
    """1-3 word spans of `text`, in no global order, possibly overlapping."""
    words, position = [], 0
    for word in text.split(" "):
        start = text.index(word, position)
        position = start + len(word)
        stripped = word.rstrip(".?,")
        if stripped:
            words.append((stripped, start))
    spans = []
    for _ in range(rng.randint(1, 3)):
        word, start = rng.choice(words)
        spans.append({"text": word, "start": start, "end": start + len(word),
                      "sentence_index": rng.choice((None, None, None, 0, 1))})
    return spans


def _labels(rng: random.Random) -> list[str]:
    return [rng.choice(UNMAPPED_LABELS) if rng.random() < UNMAPPED_SHARE
            else rng.choice(MAPPED_LABELS) for _ in range(rng.randint(1, 3))]


def _assessment(rng: random.Random, text: str) -> dict[str, Any]:
    organ = rng.choice(ORGANS)
    spans = _spans(rng, text)
    if rng.random() < RUNNABLE_SHARE:
        return {"candidate_organ": organ, "missing_bindings": [], "unresolved_hazards": [],
                "runnable": True, "explanation": f"{organ}: runnable.",
                "evidence_spans": spans}
    labels = _labels(rng)
    cut = rng.randint(0, len(labels))
    missing, hazards = labels[:cut], labels[cut:]
    return {"candidate_organ": organ, "missing_bindings": missing,
            "unresolved_hazards": hazards, "runnable": False,
            "explanation": "diagnostic candidate is not runnable: " + ", ".join(labels),
            "evidence_spans": spans}


def residual_occurrences(frame: dict[str, Any]) -> int:
    """How many residual occurrences the frame yields: distinct codes of refused assessments."""
    return sum(len(dict.fromkeys((*a["missing_bindings"], *a["unresolved_hazards"])))
               for a in frame["contract_assessments"] if not a["runnable"])


def generate_frames(count: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """`count` frames, the same for the same seed."""
    rng = random.Random(seed)
    recent: list[dict[str, Any]] = []
    for index in range(count):
        if recent and rng.random() < REPEAT_SHARE:
            yield rng.choice(recent)
            continue
        text = _problem(rng, index)
        frame = {"source_ref": f"bench:{seed}:{index}", "problem_text": text,
                 "contract_assessments": [_assessment(rng, text)
                                          for _ in range(rng.randint(1, 3))]}
        recent.append(frame)
        if len(recent) > 1000:
            recent.pop(0)
        yield frame


def write_frames(path: Path, occurrences: int, seed: int = 0) -> tuple[int, int]:
    """Frames until they hold at least `occurrences` residual occurrences, as JSONL at `path`;
    returns (frames, occurrences written)."""
    frames = total = 0
    with path.open("wb") as out:
        for frame in generate_frames(10**12, seed):
            if total >= occurrences:
                break
            out.write(orjson.dumps(frame) + b"\n")
            frames += 1
            total += residual_occurrences(frame)
    return frames, total
