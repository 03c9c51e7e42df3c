"""Reading typed fields out of decoded JSON, with errors that name the offending field."""

from __future__ import annotations

from typing import Any

from store.errors import InputError


class RecordError(InputError):
    """A JSON value that is not a valid record; the message names the field."""


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def required(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise RecordError(f"{where}: missing field {key!r}")
    return obj[key]


def string(value: Any, where: str, *, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise RecordError(f"{where}: expected a string, got {describe(value)}")
    if non_empty and not value:
        raise RecordError(f"{where}: must not be empty")
    return value


def integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{where}: expected an integer, got {describe(value)}")
    return value


def json_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(f"{where}: expected an object, got {describe(value)}")
    return value


def json_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(f"{where}: expected a list, got {describe(value)}")
    return value


def strings(value: Any, where: str) -> tuple[str, ...]:
    if type(value) is list and all(type(item) is str for item in value):
        return tuple(value)  # the common case, without a field name built per item
    return tuple(string(item, f"{where}[{i}]") for i, item in enumerate(json_list(value, where)))
