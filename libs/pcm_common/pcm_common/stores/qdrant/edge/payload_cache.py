"""Payloads of recently read points, kept in process for the Qdrant Edge adapter.

Why: turning a stored payload into Python objects is most of what a read costs the engine,
and a recall reads 100-250 payloads (docs/decisions/0004-edge-payload-cache.md). An Edge
shard is opened by one process only (its WAL is file-locked), so every write passes through
the adapter that owns this cache: it can be kept exact with no expiry.

How it stays exact:
- only what the engine returned is kept: a written point is dropped (`drop`, under the
  adapter's write lock, after the engine's write) and read again on its next miss. Writing
  the new values into the cache instead would not be exact: the engine returns some
  floats one unit in the last place off what was written;
- a read that misses registers its ids (`lookup`), reads the engine, then `fill`s; a write
  to one of those ids in between marks it stale and it is not filled (the reader's copy
  may predate the write).

Readers get a shallow copy of each payload: nested values are shared with the cache and
must not be changed in place (nothing in PCM does; payload changes go through writes).

An entry is a whole payload, or the fields of it that a read asked for (the judge reads
its family members' few fields, ~6 times each, and converting them from the engine was
most of that read): a read is served by an entry that holds every field it asks for.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pcm_common.stores.vectors import only_fields

Fields = frozenset[str] | None  # an entry's fields; None: the whole payload


def _covers(held: Fields, asked: Iterable[str] | None) -> bool:
    return held is None or (asked is not None and held.issuperset(asked))


@dataclass(eq=False)
class Pending:
    """A read's misses between `lookup` and `fill`: ids written meanwhile go to `stale`."""

    ids: frozenset[str]
    stale: set[str] = field(default_factory=set)


class PayloadCache:
    """At most `capacity` payloads by point id (canonical UUID string), least recently
    used evicted first; capacity 0 keeps nothing."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(0, capacity)
        self._entries: OrderedDict[str, tuple[dict[str, Any], Fields]] = OrderedDict()
        self._pending: set[Pending] = set()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.capacity > 0

    def __len__(self) -> int:
        return len(self._entries)

    # ---- reads -----------------------------------------------------------------------

    def lookup(
        self, ids: Sequence[str], fields: Sequence[str] | None = None
    ) -> tuple[dict[str, dict[str, Any]], Pending]:
        """Cached payloads of `ids` (shallow copies, cut to `fields`; None: whole) and the
        misses, registered so that a write to one of them before `fill` keeps the read's
        copy out."""
        if not self.capacity:  # off (the default): no bookkeeping on every read
            return {}, Pending(frozenset(ids))
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            for i in ids:
                entry = self._entries.get(i)
                if entry is not None and _covers(entry[1], fields):
                    self._entries.move_to_end(i)
                    found[i] = dict(only_fields(entry[0], fields))
            missing = frozenset(i for i in ids if i not in found)
            pending = Pending(missing)
            if missing:
                self._pending.add(pending)
            self.hits += len(found)
            self.misses += len(missing)
        return found, pending

    def fill(
        self,
        pending: Pending,
        fetched: Mapping[str, dict[str, Any]],
        fields: Sequence[str] | None = None,
    ) -> None:
        """Keep what a read fetched from the engine for its misses (the dicts themselves:
        hand the reader copies), except the ids written meanwhile; `fields`: what the read
        asked the engine for (None: whole payloads). An entry that holds more (filled by
        another read meanwhile) is kept. Always called after `lookup` (with nothing
        fetched when the read failed)."""
        if not self.capacity:
            return
        held: Fields = None if fields is None else frozenset(fields)
        with self._lock:
            self._pending.discard(pending)
            for i, payload in fetched.items():
                if i not in pending.ids or i in pending.stale:
                    continue
                entry = self._entries.get(i)
                if entry is not None and held is not None and _covers(entry[1], held):
                    continue
                self._store(i, payload, held)

    # ---- writes (called under the adapter's write lock, after the engine's write) ----

    def drop(self, ids: Iterable[str]) -> None:
        """Written points (upserted, patched, deleted): the next read takes them from the
        engine."""
        if not self.capacity:
            return
        with self._lock:
            for i in ids:
                self._touch(i)
                self._entries.pop(i, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            for p in self._pending:
                p.stale |= p.ids

    # ---- internals (hold the lock) ------------------------------------------------------

    def _touch(self, point_id: str) -> None:
        for p in self._pending:
            if point_id in p.ids:
                p.stale.add(point_id)

    def _store(self, point_id: str, payload: dict[str, Any], fields: Fields) -> None:
        self._entries[point_id] = (payload, fields)
        self._entries.move_to_end(point_id)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
