"""The append-only writer: an input read into rows (in a second process for a large file),
their keys looked up, the rows, their leaves and the tree head inserted in one transaction.
Imports `schema` and `log`."""
