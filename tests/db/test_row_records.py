"""Row records: a record read off a result row by column name, converted and nested as its
declaration says (store/db/queries/row_records.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from store.db.queries.row_records import (
    flat_record,
    json_records,
    json_tuple,
    json_tuple_or_null,
    optional,
)


@dataclass(frozen=True, slots=True)
class Owner:
    name: str
    active: bool | None


@dataclass(frozen=True, slots=True)
class Item:
    item_id: str
    tags: tuple[str, ...]
    aliases: tuple[str, ...] | None
    owner: Owner


OWNER = flat_record(Owner, active=optional(bool))
ITEM = flat_record(Item, tags=json_tuple, aliases=json_tuple_or_null, owner=OWNER.at("owner_"))


def row(**columns: object) -> SimpleNamespace:
    return SimpleNamespace(_mapping=columns)


def test_columns_are_read_by_name_converted_and_nested() -> None:
    read = ITEM(row(item_id="i1", tags='["a","b"]', aliases=None, owner_name="ann",
                    owner_active=1, name="not the owner's"))
    assert read == Item("i1", ("a", "b"), None, Owner("ann", True))


def test_nulls_stay_null_or_become_empty_as_declared() -> None:
    read = ITEM(row(item_id="i2", tags=None, aliases="[]", owner_name="bo", owner_active=None))
    assert read == Item("i2", (), (), Owner("bo", None))


def test_a_blank_is_null_only_when_declared() -> None:
    assert optional(str.upper, blank_is_null=True)("") is None
    assert optional(str.upper)("") == ""
    assert optional(str.upper)(None) is None


def test_json_records_become_records() -> None:
    assert json_records(Owner)('[{"name": "cy", "active": false}]') == (Owner("cy", False),)
    assert json_records(Owner)(None) == ()


def test_a_missing_column_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="owner_active"):
        ITEM(row(item_id="i3", tags="[]", aliases=None, owner_name="di"))


def test_a_field_the_record_lacks_is_refused_when_declared() -> None:
    with pytest.raises(TypeError, match="Owner has no field colour to read"):
        flat_record(Owner, colour=str)


def test_columns_read_by_place_build_the_same_records() -> None:
    columns = ("owner_active", "item_id", "aliases", "owner_name", "tags", "name")
    build = ITEM.by_position(columns)
    read = build((0, "i4", '["x"]', "ed", '["a"]', "not the owner's"))
    assert read == Item("i4", ("a",), ("x",), Owner("ed", False))
    assert type(read) is Item and type(read.owner) is Owner
    assert ITEM.by_position(list(columns)) is build  # written once per column list
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.item_id = "changed"  # type: ignore[misc]


@dataclass(frozen=True)
class Checked:
    """No slots, and a check at construction: made by its class, so the check runs."""

    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError(f"value: must not be negative, got {self.value}")


def test_a_record_that_checks_itself_is_checked_when_read_by_place() -> None:
    build = flat_record(Checked).by_position(("value",))
    assert build((3,)) == Checked(3)
    with pytest.raises(ValueError, match="must not be negative, got -1"):
        build((-1,))


def test_a_column_missing_from_the_list_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="owner_active"):
        ITEM.by_position(("item_id", "tags", "aliases", "owner_name"))
