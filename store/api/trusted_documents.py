"""Trusted documents: the GraphQL operations a first-party client ships, and nothing else.

One `.graphql` file holds one operation (with the fragments it uses); its id is
`sha256:` + the hex SHA-256 of the file's exact bytes. A server started with
`--trusted-documents DIR` runs a request only when its `query` is one of those texts
byte for byte, or when it names one by `documentId` instead of sending it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from graphql import GraphQLError, GraphQLSchema, OperationDefinitionNode, parse, validate

from store.errors import InputError

DOCUMENT_ID = re.compile(r"sha256:[0-9a-f]{64}")


class TrustedDocumentsError(InputError):
    """A directory of trusted documents that cannot be used, as `PATH: reason`."""


class DocumentRefused(InputError):
    """A request this server will not run: `forbidden` (403: not a trusted document), else
    malformed (422: not a well-formed request)."""

    def __init__(self, message: str, *, forbidden: bool) -> None:
        super().__init__(message)
        self.forbidden = forbidden


@dataclass(frozen=True)
class TrustedDocument:
    document_id: str
    operation_name: str
    text: str


class TrustedDocuments:
    def __init__(self, documents: list[TrustedDocument]) -> None:
        self.by_id = {document.document_id: document for document in documents}
        self.by_text = {document.text: document for document in documents}

    def admit(self, query: str | None, document_id: str | None) -> str:
        """The text to run: `query` if it is a trusted document's exact text, or the document
        `document_id` names; DocumentRefused (malformed, or not trusted) otherwise."""
        if document_id is None:
            if query is not None and query in self.by_text:
                return query
            raise DocumentRefused("this server runs only its trusted documents: send a "
                                  "documentId from its manifest (or that document's exact "
                                  "text as query)", forbidden=True)
        if query is not None:
            raise DocumentRefused("send either query or documentId, not both", forbidden=False)
        if not DOCUMENT_ID.fullmatch(document_id):
            raise DocumentRefused("documentId: must be sha256:<64 lower-case hex digits>",
                                  forbidden=False)
        document = self.by_id.get(document_id)
        if document is None:
            raise DocumentRefused(f"documentId {document_id}: not a trusted document of "
                                  "this server", forbidden=True)
        return document.text

    def manifest(self) -> dict[str, str]:
        """`{"sha256:<hex>": "OperationName"}` in id order: what a client ships."""
        return {key: self.by_id[key].operation_name for key in sorted(self.by_id)}


def document_id(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_trusted_documents(directory: Path, schema: GraphQLSchema) -> TrustedDocuments:
    """Every `*.graphql` file in `directory`, each one operation valid against `schema`."""
    if not directory.is_dir():
        raise TrustedDocumentsError(f"{directory}: no such directory")
    paths = sorted(directory.glob("*.graphql"))
    if not paths:
        raise TrustedDocumentsError(f"{directory}: no .graphql files")
    documents = [_read_document(path, schema) for path in paths]
    names: dict[str, Path] = {}
    for path, document in zip(paths, documents, strict=True):
        if document.operation_name in names:  # the manifest's values must name one document
            raise TrustedDocumentsError(f"{path}: operation {document.operation_name} is also "
                                        f"in {names[document.operation_name]}")
        names[document.operation_name] = path
    return TrustedDocuments(documents)


def _read_document(path: Path, schema: GraphQLSchema) -> TrustedDocument:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise TrustedDocumentsError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise TrustedDocumentsError(f"{path}: not UTF-8 (byte {exc.start})") from None
    try:
        document = parse(text)
    except GraphQLError as exc:
        raise TrustedDocumentsError(f"{path}:{_place(exc)} {exc.message}") from None
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if len(operations) != 1:
        raise TrustedDocumentsError(f"{path}: {len(operations)} operations; a trusted document "
                                    "holds exactly one (and the fragments it uses)")
    if operations[0].name is None:
        raise TrustedDocumentsError(f"{path}: the operation has no name; the manifest names it")
    errors = validate(schema, document)
    if errors:
        raise TrustedDocumentsError(f"{path}:{_place(errors[0])} {errors[0].message}")
    return TrustedDocument(document_id(text), operations[0].name.value, text)


def _place(error: GraphQLError) -> str:
    """`LINE:COLUMN:` of the error's first location, or nothing."""
    if not error.locations:
        return ""
    return f"{error.locations[0].line}:{error.locations[0].column}:"
