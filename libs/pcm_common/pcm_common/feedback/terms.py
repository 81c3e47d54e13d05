"""The feedback terms a recall adds to its candidates' scores (`domain.feedback.bias`).

Each replica keeps the tenant's terms in memory as one matrix of cue vectors and reloads
them only when the tenant's version counter moves: a recall costs one GET, plus one matrix
product over the tenant's cues (at most `max_cues`, 2,000 by default: ~0.3 ms).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from pcm_common.domain import feedback
from pcm_common.stores.redis.feedback import CueTerms, FeedbackStore, unpack_vector

_TENANTS_CACHED = 256


@dataclass
class _Loaded:
    version: int
    users: list[str | None]
    cues: np.ndarray  # one unit row per cue
    terms: list[dict[str, float]]
    memory: dict[str, float] = field(default_factory=dict)


def _load(
    version: int, cues: list[CueTerms], memory: dict[str, str], rule: feedback.FeedbackRule
) -> _Loaded:
    rows = [unpack_vector(c.cue) for c in cues]
    mat = np.vstack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
    if rows:
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        mat = mat / np.where(norms > 0, norms, 1.0)
    return _Loaded(
        version=version,
        users=[c.user_id for c in cues],
        cues=mat,
        terms=[c.terms for c in cues],
        memory={m: feedback.memory_delta(s, rule) for m, s in memory.items()},
    )


class FeedbackTerms:
    def __init__(self, store: FeedbackStore, rule: feedback.FeedbackRule) -> None:
        self.store = store
        self.rule = rule
        self._cache: OrderedDict[str, _Loaded] = OrderedDict()

    async def _current(self, tenant: str) -> _Loaded | None:
        version = await self.store.version(tenant)
        if version == 0:
            return None  # no feedback ever: nothing to read
        held = self._cache.get(tenant)
        if held is None or held.version != version:
            held = _load(*await self.store.load(tenant), rule=self.rule)
            self._cache[tenant] = held
        self._cache.move_to_end(tenant)
        while len(self._cache) > _TENANTS_CACHED:
            self._cache.popitem(last=False)
        return held

    async def bias(
        self, tenant: str, user_id: str | None, query_vec: list[float]
    ) -> dict[str, float]:
        """Memory id -> its feedback term for this query and user (nonzero ones only)."""
        held = await self._current(tenant)
        if held is None:
            return {}
        per_memory: dict[str, list[tuple[float, float]]] = {}
        if len(held.users):
            q = np.asarray(query_vec, dtype=np.float32)
            q = q / (np.linalg.norm(q) or 1.0)
            if q.shape[0] == held.cues.shape[1]:
                cosines = held.cues @ q
                for i in np.flatnonzero(cosines > self.rule.near):
                    if held.users[i] != user_id:
                        continue  # one user's feedback steers that user's recalls only
                    w = feedback.cue_weight(float(cosines[i]), self.rule)
                    for mid, delta in held.terms[i].items():
                        per_memory.setdefault(mid, []).append((w, delta))
        out: dict[str, float] = {}
        for mid in per_memory.keys() | held.memory.keys():
            b = feedback.bias(per_memory.get(mid, []), held.memory.get(mid, 0.0), self.rule)
            if b != 0.0:
                out[mid] = b
        return out
