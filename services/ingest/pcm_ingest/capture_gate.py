"""The predictive capture gate (mnemos SurprisalGate; issue 36, item 4): the salience of
each automatic capture that passed the word-list pre-filter (`domain.capture`), measured
against what predicted it (`domain.salience`):

- the session's recent captures (`stores.redis.capture_buffer`, by the hook's
  `metadata.session_id`, else the owner's stream);
- the nearest stored memories of the same owner (one batched dense search);
- the generic prior of a coding session (`salience.PRIOR`, embedded once);
- with `PCM_CAPTURE_PREDICT_MODEL`, a model's guess of the next message from the session's
  recent captures, through litellm (`ModelPredictor`); a guess that fails or is late is
  left out, never the capture.

A capture below the threshold is skipped and buffered for consolidation; every judged
capture joins its session's context. Explicit stores never come here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pcm_common.domain import salience as sal
from pcm_common.domain import visibility
from pcm_common.ports import WritePorts
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.capture_buffer import Buffered, CaptureBuffer, Recent, stream_of
from pcm_common.stores.vectors import Filter, SearchQuery
from pcm_ingest.schemas import MemoryIn, StoreResult
from pcm_ingest.settings import IngestSettings

log = get_logger("ingest.capture_gate")

# The write firewall's view of texts: each as it may be kept (redacted), None when blocked.
Screen = Callable[[list[str]], Awaitable[list[str | None]]]

_PREDICT_PROMPT = (
    "You watch a developer's session with a coding agent. From the session's recent "
    "messages, predict the developer's next message. Answer with that message only."
)


class ModelPredictor:
    """A chat model's guess of the next capture (`pcm_common.models.gateway`)."""

    def __init__(self, model: str, timeout_s: float, options: dict[str, Any]) -> None:
        # litellm loads here, at start-up, only when a model is set (not inside the
        # prediction's timeout: the import alone takes seconds).
        from pcm_common.models import gateway

        self.complete = gateway.complete
        self.model = model
        self.timeout_s = timeout_s
        self.options = options

    async def predict(self, recent: Sequence[str]) -> str:
        history = "\n".join(f"- {t[:500]}" for t in reversed(recent))  # oldest first
        return await self.complete(
            self.model,
            [
                {"role": "system", "content": _PREDICT_PROMPT},
                {"role": "user", "content": f"Recent messages:\n{history}"},
            ],
            temperature=0.0,
            timeout=self.timeout_s,
            **self.options,
        )


@dataclass(frozen=True)
class GateSettings:
    threshold: float = sal.THRESHOLD
    neighbours: int = 3
    predict_timeout_s: float = 5.0


@dataclass(frozen=True)
class Judged:
    salience: sal.Salience
    kept: bool


class CaptureGate:
    def __init__(
        self,
        ports: WritePorts,
        buffer: CaptureBuffer,
        settings: GateSettings,
        predictor: ModelPredictor | None = None,
    ) -> None:
        self.ports = ports
        self.buffer = buffer
        self.settings = settings
        self.predictor = predictor
        self._prior: list[list[float]] | None = None

    async def prior(self) -> list[list[float]]:
        if self._prior is None:
            self._prior = await self.ports.embedder.embed(list(sal.PRIOR))
        return self._prior

    async def judge(
        self,
        tenant: str,
        items: Sequence[MemoryIn],
        which: Sequence[int],
        now: datetime,
        screen: Screen,
    ) -> dict[int, Judged]:
        """The salience of items `which` (automatic captures), in request order; the
        skipped ones are buffered, and all join their session's context, as the write
        firewall lets them be kept (`screen`: a blocked text is kept nowhere)."""
        if not which:
            return {}
        texts = [items[i].text for i in which]
        (vectors, prior), kept_texts = await asyncio.gather(
            asyncio.gather(self.ports.embedder.embed(texts), self.prior()), screen(texts)
        )
        nearest = await self._nearest(tenant, [items[i] for i in which], vectors)
        out: dict[int, Judged] = {}
        contexts: dict[str, list[Recent]] = {}
        buffered: list[Buffered] = []
        for n, i in enumerate(which):
            item = items[i]
            stream = stream_of(visibility.owner(_owner(item)), _session(item))
            if stream not in contexts:
                contexts[stream] = await self.buffer.recent(tenant, stream)
            recent = contexts[stream]
            vec = vectors[n]
            sims = [sal.cosine(vec, p) for p in prior]
            sims += [sal.cosine(vec, r.vector) for r in recent]
            sims += [score for _, score in nearest[n]]
            predicted = [*sal.PRIOR, *(r.text for r in recent), *(t for t, _ in nearest[n])]
            guess = await self._guess(recent)
            if guess:
                gvec = await self.ports.embedder.embed_one(guess)
                sims.append(sal.cosine(vec, gvec))
                predicted.append(guess)
            s = sal.measure(item.text, sims, predicted)
            kept = s.keeps(self.settings.threshold)
            out[i] = Judged(s, kept)
            safe = kept_texts[n]
            if safe is None:
                continue
            recent.insert(0, Recent(safe, vec))  # the next capture of the batch sees it
            await self.buffer.remember(tenant, stream, [Recent(safe, vec)], _owner(item))
            if not kept:
                buffered.append(_buffered(item, safe, s.value, now))
            log.info("capture_salience", tenant=tenant, index=i, salience=s.value, kept=kept)
        await self.buffer.buffer(tenant, buffered)
        return out

    async def _nearest(
        self, tenant: str, items: Sequence[MemoryIn], vectors: list[list[float]]
    ) -> list[list[tuple[str, float]]]:
        """The nearest stored memories of each item's owner: (text, cosine)."""
        if self.settings.neighbours <= 0:
            return [[] for _ in items]
        queries = [
            SearchQuery(
                tenant,
                vec,
                limit=self.settings.neighbours,
                flt=Filter(must=visibility.peers(_owner(item)), must_not={"state": "superseded"}),
            )
            for item, vec in zip(items, vectors, strict=True)
        ]
        found = await self.ports.vectors.search_many(queries, fields=["text"])
        return [[(str(h.payload.get("text", "")), h.score) for h in hits] for hits in found]

    async def _guess(self, recent: Sequence[Recent]) -> str:
        if self.predictor is None or not recent:
            return ""
        try:
            return (
                await asyncio.wait_for(
                    self.predictor.predict([r.text for r in recent]),
                    self.settings.predict_timeout_s,
                )
            ).strip()
        except Exception as exc:  # no guess: the capture is judged without it
            log.warning("capture_prediction_failed", error=repr(exc)[:200])
            return ""


def _owner(item: MemoryIn) -> dict[str, Any]:
    return {
        "user_id": item.user_id,
        "scope": item.scope.value,
        "workspace": item.workspace,
        "project": item.project,
    }


def _session(item: MemoryIn) -> str | None:
    sid = (item.metadata or {}).get("session_id")
    return str(sid) if isinstance(sid, str | int) and str(sid) else None


def _buffered(item: MemoryIn, text: str, value: float, now: datetime) -> Buffered:
    user, scope, workspace, project = visibility.owner(_owner(item))
    return Buffered(
        text=text,
        user_id=user or None,
        scope=scope,
        workspace=workspace,
        project=project,
        created_at=(item.created_at or now).isoformat(),
        salience=value,
        session=_session(item),
    )


def build_gate(ports: WritePorts, settings: IngestSettings) -> CaptureGate | None:
    """The predictive capture gate the settings ask for, or None (off)."""
    if not (settings.capture_gate and settings.capture_salience):
        return None
    buffer = CaptureBuffer(
        ports.redis,
        context_size=settings.capture_context_size,
        context_ttl_s=settings.capture_context_ttl_s,
        buffer_ttl_s=settings.capture_buffer_ttl_s,
        buffer_max=settings.capture_buffer_max,
    )
    predictor = (
        ModelPredictor(
            settings.capture_predict_model,
            settings.capture_predict_timeout_s,
            settings.capture_predict_options,
        )
        if settings.capture_predict_model
        else None
    )
    gate = GateSettings(
        threshold=settings.capture_salience_threshold,
        neighbours=settings.capture_neighbours,
        predict_timeout_s=settings.capture_predict_timeout_s,
    )
    return CaptureGate(ports, buffer, gate, predictor)


def with_salience(results: list[StoreResult], values: dict[int, float]) -> list[StoreResult]:
    if not values:
        return results
    return [r.model_copy(update={"salience": values.get(i)}) for i, r in enumerate(results)]
