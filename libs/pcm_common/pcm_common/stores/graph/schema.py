"""Closed vocabularies of the knowledge graph (whitepaper §2.6).

Relation family names become Cypher relationship types, which cannot be query parameters,
so they are interpolated into query text: only names from these closed sets may ever reach
a query. Extractors map model output onto them with the ``canonical_*`` helpers.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

MEMORY_LABEL = "Memory"
ENTITY_LABEL = "Entity"
MENTIONS = "MENTIONS"  # Memory -> Entity; never an entity-to-entity family

# The closed sets as types (for schema-validated model output) and as sets (for checks).
EntityType = Literal[
    "Person",
    "Organization",
    "Place",
    "Event",
    "Activity",
    "Work",
    "Product",
    "Animal",
    "Technology",
    "Project",
    "Concept",
    "Decision",
    "Time",
]
RelationType = Literal[
    "KNOWS",
    "FAMILY_OF",
    "WORKS_AT",
    "MEMBER_OF",
    "LIVES_IN",
    "VISITED",
    "LOCATED_IN",
    "DOES",
    "ATTENDED",
    "LIKES",
    "DISLIKES",
    "PREFERS",
    "OWNS",
    "USES",
    "CREATED",
    "WORKS_ON",
    "DEPENDS_ON",
    "PART_OF",
    "REPLACES",
    "DECIDED",
    "CAUSED",
    "PLANS",
    "STUDIES",
    "HAPPENED_ON",
    # Classification ("Rex is a poodle", "Kafka is our event bus"); with it the closed set
    # has 25 families, as the whitepaper says (it names only some of them).
    "IS_A",
]

ENTITY_TYPES: frozenset[str] = frozenset(get_args(EntityType))
RELATION_TYPES: frozenset[str] = frozenset(get_args(RelationType))

# Belt and braces for interpolation: even a set member must look like an identifier.
_IDENT = re.compile(r"^[A-Z][A-Z_]*$")
_ENTITY_BY_FOLD = {t.casefold(): t for t in ENTITY_TYPES}


def is_relation_type(name: str) -> bool:
    return name in RELATION_TYPES and _IDENT.fullmatch(name) is not None


def require_relation_type(name: str) -> str:
    """Return ``name`` if it is a known relation family, else raise ValueError."""
    if not is_relation_type(name):
        raise ValueError(f"unknown relation type {name!r}")
    return name


def require_entity_type(name: str) -> str:
    if name not in ENTITY_TYPES:
        raise ValueError(f"unknown entity type {name!r}")
    return name


def canonical_relation_type(text: str) -> str | None:
    """Map free text such as 'works at' or 'works-at' onto a family, or None."""
    name = re.sub(r"[\s\-]+", "_", text.strip()).upper()
    return name if is_relation_type(name) else None


def canonical_entity_type(text: str) -> str | None:
    """Map 'person' / 'PERSON' onto 'Person', or None when not in the closed set."""
    return _ENTITY_BY_FOLD.get(text.strip().casefold())
