"""The database layer: tables, engines, the append-only writer, queries, verification."""
