"""Layer 3: the query-only GraphQL API (strawberry types, Query root, Starlette app)."""
