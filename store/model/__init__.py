"""The domain: pure, deterministic, no database and no GraphQL."""
