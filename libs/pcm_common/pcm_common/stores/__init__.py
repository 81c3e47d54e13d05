"""Store ports and one folder per backend: `vectors` (the vector-store port), `qdrant/`
(its adapters), `graph/` (the graph port, its schema and its Bolt adapter) and `redis/`
(what PCM keeps in Redis: every key name and Lua script, locks, strength overlay, routine
index, scope policies, tombstones)."""
