"""What PCM keeps in Redis besides the streams: every key name (`keys`) and Lua script
(`scripts`), key locks, the strength overlay, the routine index, scope policies,
tombstones and the lifecycle jobs' last runs."""

from collections.abc import Mapping

from redis.typing import EncodableT, FieldT

# A hash's fields as redis-py's `hset(mapping=...)` takes them: its field type is a union,
# and a dict's key type is invariant, so a `dict[str, str]` does not pass for one.
Fields = dict[FieldT, EncodableT]


def fields(values: Mapping[str, str]) -> Fields:
    """`values` as `Fields` (a copy)."""
    return {k: v for k, v in values.items()}
