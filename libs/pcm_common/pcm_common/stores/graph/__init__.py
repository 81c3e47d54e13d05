"""The graph store: its port, the closed vocabularies of the graph (`schema`), the Bolt
adapter for Neo4j and ArcadeDB (`neo4j/`) and the embedded ArcadeDB Bolt server."""
