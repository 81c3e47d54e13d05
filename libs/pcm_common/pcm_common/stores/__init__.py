"""Store ports (abstract drivers) and one adapter per backend."""
