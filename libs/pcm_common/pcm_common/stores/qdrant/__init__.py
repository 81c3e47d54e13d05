"""Vector-store adapters over Qdrant: `server` (qdrant-client against a Qdrant server),
`edge/` (the in-process Qdrant Edge shard, the embedded default) and what both share
(`common`)."""
