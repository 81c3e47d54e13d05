"""Store ports and one folder per backend: `vectors` (the vector-store port), `qdrant/`
(its adapters), `graph/` (the graph port, its schema and its Bolt adapter) and `redis/`
(what PCM keeps in Redis: locks, strength overlay, routine index, scope policies,
tombstones)."""
