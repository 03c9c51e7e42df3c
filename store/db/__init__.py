"""The database layer, in rooms by job; imports point one way, down this list:

- `schema/`  tables, record kinds, content ids, guards, engines, schema version
- `log/`     the transparency log over the stored rows
- `write/`   the append-only writer
- `verify/`  recompute and compare everything stored
- `queries/` every SELECT the API, the console and the CLI run
- `audit_store.AuditStore`: the facade that opens a store and runs all of the above
"""
