"""Domain model and pure functions (no I/O)."""
