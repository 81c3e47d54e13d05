"""`GraphStore` over Bolt: a Neo4j 5 server or the embedded ArcadeDB Bolt server."""
