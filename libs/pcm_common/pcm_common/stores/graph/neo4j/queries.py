"""The Cypher the Bolt adapter runs, on Neo4j 5 and ArcadeDB alike: batched writes,
prunes and deletes, reads, recall's entity links, and the per-tenant counts. Labels and
relationship types come from the closed sets of `stores.graph.schema`, never caller text."""

from __future__ import annotations

from pcm_common.stores.graph.schema import ENTITY_LABEL, MEMORY_LABEL, MENTIONS

# Batched writes: every statement UNWINDs rows that are unique within it (one row per
# memory, entity, mention or relation), so no row depends on another row's write in the
# same statement; that keeps the result identical on Neo4j and ArcadeDB.
# Rows are [type, key, name] lists: smaller to pack and send than maps.
MERGE_ENTITIES = f"""
UNWIND $entities AS row
MERGE (e:{ENTITY_LABEL} {{tenant: $tenant, type: row[0], key: row[1]}})
  ON CREATE SET e.name = row[2]
RETURN count(e) AS n
"""

# One row per memory with its entities as [type, key] pairs: the memory node is looked up
# once, not once per mention, and the rows carry no repeated ids or field names.
MERGE_MEMORY_MENTIONS = f"""
UNWIND $mems AS row
MERGE (m:{MEMORY_LABEL} {{tenant: $tenant, id: row.mid}})
WITH m, row
UNWIND row.ents AS te
MATCH (e:{ENTITY_LABEL} {{tenant: $tenant, type: te[0], key: te[1]}})
MERGE (m)-[x:{MENTIONS} {{tenant: $tenant}}]->(e)
RETURN count(x) AS n
"""

# The common batch in one statement (one round trip): the memories the graph already holds
# (only those need a prune; collected before anything is written), then the entities, the
# memories and their mentions. A mention names its entity by position in $entities, a list
# index instead of an index lookup. The collect() is an aggregation barrier, so every entity
# exists before any mention; `aligned` checks that it kept the rows' order (both backends
# do). If it did not, no mention is written and no row comes back, and the caller writes
# the keyed statements above instead. Needs at least one entity: an empty UNWIND before the
# collect would leave no row to carry on.
WRITE_NODES = f"""
UNWIND $mids AS mid
OPTIONAL MATCH (o:{MEMORY_LABEL} {{tenant: $tenant, id: mid}})
WITH collect(o.id) AS old
UNWIND $entities AS row
MERGE (e:{ENTITY_LABEL} {{tenant: $tenant, type: row[0], key: row[1]}})
  ON CREATE SET e.name = row[2]
WITH old, collect(e) AS es, collect(row) = $entities AS aligned
UNWIND CASE WHEN aligned THEN $mems ELSE [] END AS row
MERGE (m:{MEMORY_LABEL} {{tenant: $tenant, id: row[0]}})
WITH old, es, m, row
UNWIND row[1] AS i
WITH old, m, es[i] AS e
MERGE (m)-[x:{MENTIONS} {{tenant: $tenant}}]->(e)
RETURN old, count(x) AS n
"""

# {rel} is a validated member of RELATION_TYPES (stores.graph.schema), never caller text.
# One row per relation with every memory of the batch that states it (row.mids).
# `SET r.tenant = $tenant` writes an unchanged value to take Neo4j's write lock before
# memory_ids is read, so two writers adding memories at once cannot lose an update
# (ArcadeDB's optimistic MVCC raises a retryable conflict instead). The WHERE makes a
# redelivery a no-op: memory_ids, strength and last_seen stay as they were.
MERGE_RELATIONS = """
UNWIND $rels AS row
MATCH (a:{entity} {{tenant: $tenant, type: row.st, key: row.sk}})
MATCH (b:{entity} {{tenant: $tenant, type: row.tt, key: row.tk}})
MERGE (a)-[r:{rel} {{tenant: $tenant}}]->(b)
  ON CREATE SET r.memory_ids = [], r.first_seen = $now, r.last_seen = $now, r.strength = 0.0
SET r.tenant = $tenant
WITH r, [x IN row.mids WHERE NOT x IN r.memory_ids] AS added
WHERE size(added) > 0
WITH r, r.memory_ids + added AS ids
SET r.memory_ids = ids, r.last_seen = $now, r.strength = toFloat(size(ids)) / (size(ids) + 1)
RETURN count(r) AS n
"""

# Withdraw memories from relations they no longer state (all of them when a memory's keep
# list is empty). Endpoints are always mentioned by the memory, so the walk starts at its
# node. Grouping by r applies each relationship's change once even when several memories
# of the batch withdraw from it.
PRUNE_RELATIONS = f"""
UNWIND $items AS it
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: it.mid}})-[:{MENTIONS}]->(a:{ENTITY_LABEL})
MATCH (a)-[r]->(b:{ENTITY_LABEL})
WHERE r.tenant = $tenant AND it.mid IN r.memory_ids
  AND NOT (type(r) + '|' + a.type + '|' + a.key + '|' + b.type + '|' + b.key) IN it.keep
WITH r, collect(DISTINCT it.mid) AS gone
SET r.tenant = $tenant
WITH r, [x IN r.memory_ids WHERE NOT x IN gone] AS ids
SET r.memory_ids = ids, r.strength = toFloat(size(ids)) / (size(ids) + 1)
WITH r, ids
WHERE size(ids) = 0
DELETE r
RETURN count(*) AS n
"""

PRUNE_MENTIONS = f"""
UNWIND $items AS it
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: it.mid}})-[x:{MENTIONS}]->(e:{ENTITY_LABEL})
WHERE NOT (e.type + '|' + e.key) IN it.keep
DELETE x
RETURN DISTINCT e.type AS type, e.key AS key
"""

DELETE_ORPHANS = f"""
UNWIND $cands AS c
MATCH (e:{ENTITY_LABEL} {{tenant: $tenant, type: c.type, key: c.key}})
WHERE NOT EXISTS {{ MATCH (e)<-[:{MENTIONS}]-(:{MEMORY_LABEL}) }}
DETACH DELETE e
RETURN count(*) AS n
"""

DELETE_MEMORIES = f"""
UNWIND $mids AS mid
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: mid}})
DETACH DELETE m
RETURN count(*) AS n
"""

ENTITIES_OF = f"""
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})-[:{MENTIONS}]->(e:{ENTITY_LABEL})
RETURN e.name AS name, e.type AS type, e.key AS key
ORDER BY type, key
"""

# Relations leaving the memory's entities (type(r) names the family; MENTIONS is not one).
RELATIONS_OF = f"""
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})-[:{MENTIONS}]->(a:{ENTITY_LABEL})
MATCH (a)-[r]->(b:{ENTITY_LABEL})
WHERE r.tenant = $tenant AND b.tenant = $tenant
RETURN a.name AS a_name, a.type AS a_type, type(r) AS rel, b.name AS b_name, b.type AS b_type
ORDER BY rel, a_name, b_name
LIMIT $limit
"""

# The memories sharing the most of one memory's entities, with the keys they share; the
# memory itself comes too (it shares them all) and is dropped by the caller. One walk from
# the memory's node: at 100k memories an entity such as a weekday is mentioned by 10k of
# them, and this walk cost ~15 ms on ArcadeDB where MEMORIES_FOR by the entities' keys and
# an ENTITIES_OF per linked memory cost ~100 (the inspector's graph view). No id tiebreak
# and no tenant test on `m`: each loads every linked memory's record (twice the time), and
# a mention only ever joins a tenant's memory to that tenant's entity (MERGE_MEMORY_MENTIONS).
NEIGHBOURS = f"""
MATCH (s:{MEMORY_LABEL} {{tenant: $tenant, id: $mid}})-[:{MENTIONS}]->(e:{ENTITY_LABEL})
WITH e, e.key AS k
MATCH (e)<-[:{MENTIONS}]-(m:{MEMORY_LABEL})
WITH m, collect(k) AS shares
ORDER BY size(shares) DESC
LIMIT $limit
RETURN m.id AS id, shares
"""

FOUND_KEYS = f"""
MATCH (e:{ENTITY_LABEL})
WHERE e.tenant = $tenant AND e.key IN $keys
RETURN count(DISTINCT e.key) AS n
"""

MEMORIES_FOR = f"""
MATCH (e:{ENTITY_LABEL})
WHERE e.tenant = $tenant AND e.key IN $keys
MATCH (m:{MEMORY_LABEL})-[:{MENTIONS}]->(e)
WHERE m.tenant = $tenant
RETURN m.id AS id, count(DISTINCT e.key) AS hits
ORDER BY hits DESC, id
LIMIT $limit
"""

# Recall's single round trip: per query entity found, its document frequency and, when not
# too broad, the memories that mention it, with the other asked entities those memories
# mention too. One row per asked key (a key the tenant lacks gives a null entity). The keys
# are UNWOUND into an equality pattern rather than filtered with `e.key IN $keys`: on
# ArcadeDB the IN form plans the MENTIONS expansion badly (Neo4j is indifferent).
# Why: docs/decisions/0022-graph-lookup-query-shape.md.
ENTITY_MENTIONS = f"""
UNWIND $keys AS k
OPTIONAL MATCH (e:{ENTITY_LABEL} {{tenant: $tenant, key: k}})
OPTIONAL MATCH (m:{MEMORY_LABEL})-[:{MENTIONS}]->(e)
WITH e, collect(m.id) AS mids
"""
# The walks below start from `w`, null for an entity too broad to walk: an OPTIONAL MATCH
# from null expands nothing, where a size test in its WHERE ran after the whole expansion
# (docs/decisions/0022-graph-lookup-query-shape.md).
CO_MENTIONS = f"""
WITH e, mids, CASE WHEN size(mids) <= $max_df THEN e END AS w
OPTIONAL MATCH (w)<-[:{MENTIONS}]-(c:{MEMORY_LABEL})-[:{MENTIONS}]->(o:{ENTITY_LABEL})
WHERE o.key IN $keys AND o <> w
WITH e, mids, collect(DISTINCT CASE WHEN c IS NULL THEN null ELSE [c.id, o.type, o.key] END) AS co
"""
LINKS_RETURN = """
RETURN e.key AS key, e.type AS type, size(mids) AS df,
       CASE WHEN size(mids) <= $max_df THEN mids ELSE [] END AS mids, co"""
ENTITY_LINKS = ENTITY_MENTIONS + CO_MENTIONS + LINKS_RETURN
# The same, plus each entity's memories that also mention an entity of one of $types
# (bounded by $typed_max_df: a broad entity's memories would be a long walk). A separate
# text so that queries without a type word keep the cheaper plan.
ENTITY_LINKS_TYPED = (
    ENTITY_MENTIONS
    + CO_MENTIONS
    + f"""
WITH e, mids, co, CASE WHEN size(mids) <= $typed_max_df THEN e END AS w
OPTIONAL MATCH (w)<-[:{MENTIONS}]-(t:{MEMORY_LABEL})-[:{MENTIONS}]->(x:{ENTITY_LABEL})
WHERE x.type IN $types AND x.key <> w.key
WITH e, mids, co, collect(DISTINCT t.id) AS typed
"""
    + LINKS_RETURN
    + ", typed"
)

MEMORY_IDS = f"""
MATCH (m:{MEMORY_LABEL})
WHERE m.tenant = $tenant AND m.id > $after
RETURN m.id AS id
ORDER BY id
LIMIT $limit
"""

EXISTING = f"""
UNWIND $mids AS mid
MATCH (m:{MEMORY_LABEL} {{tenant: $tenant, id: mid}})
RETURN m.id AS id
"""

STATS = {
    "memories": f"MATCH (m:{MEMORY_LABEL} {{tenant: $tenant}}) RETURN count(m) AS n",
    "entities": f"MATCH (e:{ENTITY_LABEL} {{tenant: $tenant}}) RETURN count(e) AS n",
    "mentions": (
        f"MATCH (:{MEMORY_LABEL} {{tenant: $tenant}})-[x:{MENTIONS}]->(:{ENTITY_LABEL}) "
        "RETURN count(x) AS n"
    ),
    "relations": (
        f"MATCH (:{ENTITY_LABEL} {{tenant: $tenant}})-[r]->(:{ENTITY_LABEL}) "
        "WHERE r.tenant = $tenant RETURN count(r) AS n"
    ),
}
