"""How many objects an operation may resolve, estimated from its document before it runs.

Nested pages multiply: `residuals(first: 500) { nodes { occurrences(first: 500) { nodes {
... } } } }` may resolve 500 x 500 objects, and graphql-core completes every one of them on
the event loop, past any SQL time limit. The estimate counts each object a selection can
produce: a list in a page (`edges`, `nodes`) holds `first` (or `last`) items (default
DEFAULT_PAGE_SIZE, at most MAX_PAGE_SIZE); a list without a page (facet values, evidence
spans, an assessment's residuals) counts as one item; aliases and fragments count each time
they are selected; an inclusion or consistency proof counts as PROOF_COST objects, and so
does `changes` (its consistency proof), whose `entries` hold toSize - fromSize leaves when
both are given as numbers, else MAX_CHANGES (issue 32: 30 aliased `changes { entries }` must
not resolve 30,000 entries past the limit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FloatValueNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLField,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    NullValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValueNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
    is_leaf_type,
    is_list_type,
)

from store.db.queries import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from store.db.queries.ledger import MAX_CHANGES

DEFAULT_MAX_OBJECTS = 20_000  # ~1.5 s of result building at ~15,000 objects/s: within 5 s
# A proof reads and hashes ~2 log2(n) tree nodes: ~60 ms on a 250,000-leaf store, the time
# ~900 objects take; counted lower, as the proofs of one request run in parallel threads.
PROOF_COST = 400
_FIELD_COST = {"inclusionProof": PROOF_COST, "consistencyProof": PROOF_COST,
               "changes": PROOF_COST}
_PAGE_ARGUMENTS = ("first", "last")


class _Walk:
    """One document's fragments and variables, for the recursive count."""

    def __init__(self, schema: GraphQLSchema, document: DocumentNode,
                 variables: Mapping[str, Any], defaults: Mapping[str, ValueNode]) -> None:
        self.schema = schema
        self.fragments = {d.name.value: d for d in document.definitions
                          if isinstance(d, FragmentDefinitionNode)}
        self.variables = variables
        self.defaults = defaults

    def count(self, selections: SelectionSetNode | None, parent: GraphQLNamedType,
              each: int, page: int) -> int:
        """Objects below `selections`, selected on `each` objects of type `parent`; lists
        directly below hold `page` items."""
        if selections is None:
            return 0
        total = 0
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                total += self._field(selection, parent, each, page)
            else:
                inner = self._fragment(selection)
                if inner is not None:
                    selection_set, condition = inner
                    total += self.count(selection_set, condition or parent, each, page)
        return total

    def _field(self, node: FieldNode, parent: GraphQLNamedType, each: int, page: int) -> int:
        fields = parent.fields if isinstance(parent, GraphQLObjectType) else {}
        definition = fields.get(node.name.value)  # None: __typename or introspection
        if definition is None or is_leaf_type(get_named_type(definition.type)):
            return 0
        items = each * (page if is_list_type(get_nullable_type(definition.type)) else 1)
        own = items * _FIELD_COST.get(node.name.value, 1)
        return own + self.count(node.selection_set, get_named_type(definition.type), items,
                                self._page_size(node, definition))

    def _fragment(self, node: Any) -> tuple[SelectionSetNode, GraphQLNamedType | None] | None:
        if isinstance(node, InlineFragmentNode):
            condition = node.type_condition
        elif isinstance(node, FragmentSpreadNode) and node.name.value in self.fragments:
            fragment = self.fragments[node.name.value]
            node, condition = fragment, fragment.type_condition
        else:
            return None
        named = None if condition is None else self.schema.get_type(condition.name.value)
        return node.selection_set, named

    def _page_size(self, node: FieldNode, definition: GraphQLField) -> int:
        """How many items the lists of this field's value hold: 1 unless it is a page."""
        if node.name.value == "changes":
            return self._changes_size(node)
        if not any(name in definition.args for name in _PAGE_ARGUMENTS):
            return 1
        given = [self._int(argument.value) for argument in node.arguments or ()
                 if argument.name.value in _PAGE_ARGUMENTS]
        sizes = [DEFAULT_PAGE_SIZE if value is None else value for value in given]
        # Over the cap is refused by the resolver, with its own message: count the cap.
        return min(max(sizes or [DEFAULT_PAGE_SIZE]), MAX_PAGE_SIZE)

    def _changes_size(self, node: FieldNode) -> int:
        """The entries `changes` may list: toSize - fromSize when both are known numbers,
        at most MAX_CHANGES (a page's bound)."""
        given = {argument.name.value: self._int(argument.value)
                 for argument in node.arguments or ()}
        start, end = given.get("fromSize"), given.get("toSize")
        if start is None or end is None:
            return MAX_CHANGES
        return max(0, min(end - start, MAX_CHANGES))

    def _int(self, node: ValueNode) -> int | None:
        """An Int argument's value (None: not given); a value that is no Int counts as the
        cap, since coercion refuses it anyway."""
        if isinstance(node, VariableNode):
            name = node.name.value
            if name not in self.variables:
                default = self.defaults.get(name)
                return None if default is None else self._int(default)
            value = self.variables[name]
        elif isinstance(node, (IntValueNode, FloatValueNode)):
            value = float(node.value)
        elif isinstance(node, NullValueNode):
            return None
        else:
            return MAX_PAGE_SIZE
        if value is None:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                float(value).is_integer()):
            return max(int(value), 0)
        return MAX_PAGE_SIZE


def estimate_objects(schema: GraphQLSchema, document: DocumentNode,
                     operation_name: str | None, variables: Mapping[str, Any] | None) -> int:
    """The most objects the operation can resolve; with no name, the largest of the
    document's operations (whichever one the executor picks)."""
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)
                  and (operation_name is None or (d.name and d.name.value == operation_name))]
    root = schema.query_type
    if root is None:
        return 0
    return max((_operation_objects(schema, document, operation, root, variables or {})
                for operation in operations), default=0)


def _operation_objects(schema: GraphQLSchema, document: DocumentNode,
                       operation: OperationDefinitionNode, root: GraphQLObjectType,
                       variables: Mapping[str, Any]) -> int:
    definitions = operation.variable_definitions or ()
    defaults = {d.variable.name.value: d.default_value for d in definitions
                if d.default_value is not None}
    return _Walk(schema, document, variables, defaults).count(operation.selection_set, root, 1, 1)
