"""A restarted ArcadeDB refuses the driver's pooled connections for good; the graph store
then builds a fresh driver (the caller's retry goes through it). Other errors keep it."""

from __future__ import annotations

from neo4j.exceptions import ClientError

from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore


def _error(code: str, message: str) -> ClientError:
    return ClientError._hydrate_neo4j(code=code, message=message)


async def test_a_connection_left_unauthenticated_renews_the_driver() -> None:
    store = Neo4jGraphStore("bolt://127.0.0.1:1", "u", "p")  # the driver connects lazily
    first = store._driver
    stale = _error("Neo.ClientError.Request.Invalid", "BEGIN not expected in state: AUTHENTICATION")
    await store._renew_if_stale(stale)
    assert store._driver is not first
    second = store._driver
    revoked = _error(
        "Neo.ClientError.Security.Unauthorized",
        "The credentials of this connection are no longer valid",
    )
    await store._renew_if_stale(revoked)
    assert store._driver is not second
    await store.close()


async def test_a_query_error_keeps_the_driver() -> None:
    store = Neo4jGraphStore("bolt://127.0.0.1:1", "u", "p")
    first = store._driver
    await store._renew_if_stale(_error("Neo.ClientError.Statement.SyntaxError", "bad query"))
    assert store._driver is first
    await store.close()
