"""Validation once per parsed document, found again by the document's identity.

strawberry's ValidationCache keys its LRU by the document itself, and graphql-core's AST
nodes are frozen dataclasses: their hash walks the whole tree, node by node, on every request
— more work than anything else a small operation costs in Python. ParserCache hands the same
DocumentNode back for the same query text, so the validation of that object is found by its
identity instead: the same errors (or none) for the same (schema, document, rules), as the
LRU gives, without hashing the tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from graphql import DocumentNode, GraphQLError, GraphQLSchema
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document

CACHED_DOCUMENTS = 128  # as ValidationCache's default; past it the cache starts afresh

# (id(schema), id(document), the rules) -> (the schema, the document, its errors); both are
# kept, so neither id is reused while it is cached.
_VALIDATED: dict[tuple[int, int, tuple[Any, ...]],
                 tuple[GraphQLSchema, DocumentNode, list[GraphQLError]]] = {}


def validated(schema: GraphQLSchema, document: DocumentNode, rules: tuple[Any, ...]
              ) -> list[GraphQLError]:
    """graphql-core's validation errors of `document`, computed once per document object."""
    key = (id(schema), id(document), rules)
    found = _VALIDATED.get(key)
    if found is not None and found[0] is schema and found[1] is document:
        return found[2]
    errors = validate_document(schema, document, rules)
    if len(_VALIDATED) >= CACHED_DOCUMENTS:
        _VALIDATED.clear()
    _VALIDATED[key] = (schema, document, errors)
    return errors


class ValidatedDocuments(SchemaExtension):
    """ValidationCache, keyed by the parsed document's identity (see the module)."""

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        assert context.graphql_document is not None  # strawberry validates a parsed document
        context.pre_execution_errors = validated(
            context.schema._schema, context.graphql_document, tuple(context.validation_rules))
        yield
