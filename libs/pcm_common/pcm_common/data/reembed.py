"""Moving the vector store to another embedding model (`POST /v1/admin/reembed`, issue 37).

The job builds a store of the new model beside the serving one (`VectorStore.beside`: a
sibling Edge shard, or another collection of the Qdrant server), and while it runs every
write goes to both (`stores.dual_write`): upserts with a vector of each model. It copies
the store a page at a time in id order: the page's texts are embedded with the new model,
then, under the dual-write lock, the page is read again and written there with the new
vectors (a payload changed meanwhile is taken as it is now; a text changed meanwhile is
embedded again). Then it checks the two stores agree (anything missing or different is
copied again, anything deleted is deleted there), and switches: the new store replaces the
old one where it stands (`VectorStore.replace_with`, which removes the old vectors), and the
process embeds queries and memories with the new model from then on.

Recall reads the old store until the switch and the new one after; the switch itself holds
calls for the time of two renames (Edge) or one alias change (server).

Resumable: the record (`keys.REEMBED`) keeps the status, the models, the store's name and
the id after the last page copied; a process that stopped mid-job (a crash, a restart)
continues from there when it starts (`resume`), and its agreement check catches any write
the stop cut between the two stores. The switch is safe to repeat: a store that already
records the new model was switched.

One process runs it: the one that holds the store and serves writes (the embedded
all-in-one server, `pcm dev` / `make run`): the dual writes are that process's.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pcm_common.domain.reembed import Progress, same_payload
from pcm_common.models.embeddings import (
    LOCAL_PROVIDER,
    Embedder,
    interchangeable,
    known_dim,
    local_models,
)
from pcm_common.models.sparse import encode_document
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.dual_write import DualWriteStore
from pcm_common.stores.redis import fields, keys
from pcm_common.stores.redis.keys import TENANTS
from pcm_common.stores.vectors import ScoredPoint, VectorPoint, VectorStore

log = get_logger("reembed")

PAGE = 256
_LOCK_MS = 60_000
RUNNING = ("running", "switching")


class ReembedRunning(Exception):
    """A re-embedding job is running now (here or in another process)."""


class UnknownModel(ValueError):
    """The model asked for cannot be used (unknown, or the store's model already)."""


def check_model(model: str, current: str) -> None:
    """Raise `UnknownModel` unless the store can move to `model`: a local model, or a
    hosted one whose dimension is known (nothing is paid to find out), other than the
    store's model now."""
    local = model.startswith(f"{LOCAL_PROVIDER}/")
    if (local and model not in local_models()) or (not local and known_dim(model) is None):
        raise UnknownModel(
            f"unknown embedding model {model!r}; local ones: {', '.join(local_models())}"
        )
    if interchangeable(current, model):
        raise UnknownModel(f"the store's vectors are made with {current!r} already")


def _s(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value


class Reembedding:
    """The job (module docstring): one per process, on `Resources`."""

    def __init__(self, res: Resources, *, page: int = PAGE) -> None:
        self.res = res
        self.page = page
        self._task: asyncio.Task[None] | None = None
        self._token = uuid.uuid4().hex

    @property
    def dual(self) -> DualWriteStore:
        return self.res.dual_writes

    async def record(self) -> dict[str, str]:
        raw = await self.res.redis.hgetall(keys.REEMBED)
        return {_s(k): _s(v) for k, v in raw.items()}

    async def status(self) -> dict[str, Any]:
        """The job's record as the API answers it, with the store's model now."""
        rec = await self.record()
        model = await self.dual.embedding_model() or self.res.settings.embedding_model
        return Progress.of(rec, store_model=model).public()

    # ---- starting --------------------------------------------------------------------

    async def start(self, model: str) -> dict[str, Any]:
        """Start moving the store to `model` (or continue a job for it that stopped).
        Raises `UnknownModel` (not usable) or `ReembedRunning` (a job runs)."""
        current = await self.dual.embedding_model() or self.res.settings.embedding_model
        check_model(model, current)
        if not await self._lock():
            raise ReembedRunning()
        try:
            rec = await self.record()
            if rec.get("status") in RUNNING and rec.get("model") != model:
                # A stopped job for another model: its half-built store goes.
                await self._drop_beside(rec)
                rec = {}
            if rec.get("status") not in RUNNING:
                rec = {
                    "id": uuid.uuid4().hex,
                    "status": "running",
                    "model": model,
                    "from_model": current,
                    "name": f"reembed-{uuid.uuid4().hex[:8]}",
                    "offset": "",
                    "done": "0",
                    "total": str(await self._total()),
                    "started_at": str(time.time()),
                }
                await self.res.redis.delete(keys.REEMBED)
                await self.res.redis.hset(keys.REEMBED, mapping=fields(rec))
            await self._begin(rec)
        except BaseException:
            await self._unlock()
            raise
        return await self.status()

    async def resume(self) -> bool:
        """Continue a job a stopped process left running (called as the service starts,
        before it serves writes); False when there is none or another process runs it."""
        rec = await self.record()
        if rec.get("status") not in RUNNING or not await self._lock():
            return False
        try:
            await self.res.redis.hincrby(keys.REEMBED, "resumed", 1)
            await self._begin(rec)
        except BaseException:
            await self._unlock()
            raise
        log.info("reembed_resumed", job=rec.get("id"), offset=rec.get("offset"))
        return True

    async def _begin(self, rec: dict[str, str]) -> None:
        """Open the new store, turn dual writes on and run the rest in the background."""
        embedder = Embedder(rec["model"], batch_size=self.res.settings.embedding_batch)
        if rec["status"] == "switching" and interchangeable(
            await self.dual.inner.embedding_model() or "", rec["model"]
        ):
            # Stopped after the switch, before its record said so.
            self._task = asyncio.create_task(self._finish(rec, embedder))
            return
        dim = embedder.dim if _known_dim(embedder) else len(await embedder.embed_one("dim"))
        side = self.dual.beside(rec["name"], dim)
        await side.ensure_collection()
        await side.claim_embedding_model(rec["model"])
        self.dual.start_dual_writes(side, embedder)
        self._task = asyncio.create_task(self._run(rec, side, embedder))

    async def wait(self) -> None:
        """Until the background run ends (tests, the benchmark)."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._task)

    async def stop(self) -> None:
        """Stop running (the service stops): the record stays, `resume` continues it."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        side = self.dual.beside_store
        self.dual.stop_dual_writes()
        if side is not None:
            await side.store.close()
        await self._unlock()

    # ---- running ---------------------------------------------------------------------

    async def _run(self, rec: dict[str, str], side: VectorStore, embedder: Embedder) -> None:
        try:
            if rec["status"] == "running":
                await self._copy(rec, side, embedder)
                await self.res.redis.hset(keys.REEMBED, "status", "switching")
            # Also when continuing a switch that failed: writes made since went to the old
            # store only.
            await self._agree(side, embedder)
            await self._switch(rec)
            await self._finish(rec, embedder)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # Left running: the next start or resume continues from the checkpoint.
            log.exception("reembed_failed", job=rec.get("id"))
            await self.res.redis.hset(keys.REEMBED, "error", repr(exc)[:500])
            self.dual.stop_dual_writes()
            with contextlib.suppress(Exception):
                await side.close()
            await self._unlock()

    async def _copy(self, rec: dict[str, str], side: VectorStore, embedder: Embedder) -> None:
        offset: str | None = rec.get("offset") or None
        while True:
            await self._renew()
            page, nxt = await self.dual.inner.scroll_all(limit=self.page, offset=offset)
            vecs = await embedder.embed([_text(p) for p in page])
            async with self.dual.lock:
                await self._write_fresh(side, embedder, page, vecs)
            # The checkpoint: every point before `nxt` is in the new store.
            await self.res.redis.hset(
                keys.REEMBED, mapping={"offset": nxt or "", "updated_at": str(time.time())}
            )
            await self.res.redis.hincrby(keys.REEMBED, "done", len(page))
            if nxt is None:
                return
            offset = nxt

    async def _write_fresh(
        self,
        side: VectorStore,
        embedder: Embedder,
        page: Sequence[ScoredPoint],
        vecs: Sequence[list[float]],
    ) -> None:
        """Write `page` into the new store as the old store holds it now (call holding the
        dual-write lock): payloads read again, a text changed since embedded again."""
        fresh = await self._fresh(page)
        first = {p.id: (_text(p), v) for p, v in zip(page, vecs, strict=True)}
        stale = [p for p in fresh if _text(p) != first[p.id][0]]
        again = dict(
            zip([p.id for p in stale], await embedder.embed([_text(p) for p in stale]), strict=True)
        )
        await side.upsert(
            [
                VectorPoint(
                    p.id,
                    again.get(p.id) or first[p.id][1],
                    p.payload,
                    encode_document(_text(p)),
                )
                for p in fresh
            ]
        )

    async def _fresh(self, page: Sequence[ScoredPoint]) -> list[ScoredPoint]:
        """The points of `page` as the old store holds them now (deleted ones absent)."""
        by_tenant: dict[str, list[str]] = defaultdict(list)
        for p in page:
            by_tenant[str(p.payload.get("tenant"))].append(p.id)
        out: list[ScoredPoint] = []
        for tenant, ids in by_tenant.items():
            out += await self.dual.inner.get(tenant, ids)
        return out

    async def _agree(self, side: VectorStore, embedder: Embedder) -> None:
        """Make the new store hold what the old one does: a point missing there or with
        another payload is written again, one absent from the old store is deleted (a
        write a stopped process made in one store only)."""
        fixed = removed = 0
        offset: str | None = None
        while True:
            await self._renew()
            page, offset = await self.dual.inner.scroll_all(limit=self.page, offset=offset)
            async with self.dual.lock:
                theirs = {p.id: p for p in await _get_all(side, page)}
                differ = [
                    p
                    for p in page
                    if p.id not in theirs or not same_payload(theirs[p.id].payload, p.payload)
                ]
                if differ:
                    vecs = await embedder.embed([_text(p) for p in differ])
                    await self._write_fresh(side, embedder, differ, vecs)
                    fixed += len(differ)
            if offset is None:
                break
        offset = None
        while True:
            await self._renew()
            page, offset = await side.scroll_all(limit=self.page, offset=offset)
            async with self.dual.lock:
                ours = {p.id for p in await _get_all(self.dual.inner, page)}
                gone = [p for p in page if p.id not in ours]
                by_tenant: dict[str, list[str]] = defaultdict(list)
                for p in gone:
                    by_tenant[str(p.payload.get("tenant"))].append(p.id)
                for tenant, ids in by_tenant.items():
                    removed += await side.delete(tenant, ids)
            if offset is None:
                break
        log.info("reembed_agreed", fixed=fixed, removed=removed)

    async def _switch(self, rec: dict[str, str]) -> None:
        async with self.dual.lock:
            # Dual writes stay on until the swap is made (`DualWriteStore.switch`): a write
            # meanwhile waits, rather than landing in the old store only and being lost.
            await self.dual.switch()
            self.res.use_embedding_model(rec["model"])
        log.info("reembed_switched", job=rec.get("id"), model=rec["model"])

    async def _finish(self, rec: dict[str, str], embedder: Embedder) -> None:
        self.res.use_embedding_model(rec["model"])
        await self.res.redis.hset(
            keys.REEMBED,
            mapping={"status": "done", "finished_at": str(time.time()), "error": ""},
        )
        await self._unlock()
        log.info("reembed_done", job=rec.get("id"), model=rec["model"])

    async def _drop_beside(self, rec: dict[str, str]) -> None:
        if rec.get("name"):
            side = self.dual.beside(rec["name"], self.res.settings.embedding_dim)
            await side.drop()

    async def _total(self) -> int:
        """How many points there are (by the tenants that wrote): the progress's scale."""
        tenants = {_s(t) for t in await self.res.redis.smembers(TENANTS)}
        return sum([await self.dual.inner.count(t) for t in sorted(tenants)])

    # ---- the lock: one process runs the job ------------------------------------------

    async def _lock(self) -> bool:
        redis = self.res.redis
        if await redis.set(keys.REEMBED_LOCK, self._token, nx=True, px=_LOCK_MS):
            return True
        # This process holds it already (a stopped run, before the key expired).
        return _s(await redis.get(keys.REEMBED_LOCK)) == self._token and (
            self._task is None or self._task.done()
        )

    async def _renew(self) -> None:
        await self.res.redis.set(keys.REEMBED_LOCK, self._token, px=_LOCK_MS)

    async def _unlock(self) -> None:
        if _s(await self.res.redis.get(keys.REEMBED_LOCK)) == self._token:
            await self.res.redis.delete(keys.REEMBED_LOCK)


def _text(p: ScoredPoint) -> str:
    return str(p.payload.get("text") or "")


def _known_dim(embedder: Embedder) -> bool:
    try:
        return embedder.dim > 0
    except RuntimeError:  # a hosted model not called yet
        return False


async def _get_all(store: VectorStore, page: Sequence[ScoredPoint]) -> list[ScoredPoint]:
    by_tenant: dict[str, list[str]] = defaultdict(list)
    for p in page:
        by_tenant[str(p.payload.get("tenant"))].append(p.id)
    out: list[ScoredPoint] = []
    for tenant, ids in by_tenant.items():
        out += await store.get(tenant, ids)
    return out
