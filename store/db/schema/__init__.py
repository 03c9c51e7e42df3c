"""What a store is: its tables, record kinds, content ids, append-only guards, engines and
schema version. Every other room of `store.db` imports from here; this room imports none."""
