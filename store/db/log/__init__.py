"""The transparency log over every stored row (RFC 9162): leaf entries, stored subtrees, tree
heads, the origin. Imports `schema`."""
