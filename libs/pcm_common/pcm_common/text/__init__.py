"""Text utilities: one-line and brief quoting, NUL and blank checks, token counting."""
