"""Verification: everything a store holds that can be recomputed, recomputed: leaves, tree heads,
tallies, references, content ids, the schema. Imports `schema`, `log` and `write`."""
