"""Importing an export (`POST /v1/import`, `pcm_common.data.export_format`): the memories are
stored with their ids, text, history, strength, state and links, as they were, into the
importing key's tenant.

- Idempotent: a memory whose id the tenant holds already is left as it is, so importing the
  same file twice stores nothing new; an id another tenant holds is refused (`id_taken`),
  never replaced.
- The target's rules hold: the scope's capture mode (`capture_refused`, or the capture
  skipped as a write would be), the write firewall on the text, the earlier versions'
  texts, the metadata and the names (`secret_detected` refuses the memory, PII is
  redacted). Retention and caps apply at the sweeper's next governance run.
- Vectors are kept when the export was made with the store's embedding model and carries
  them, and the firewall left the text as it was; otherwise the text is embedded again.
- Each stored memory's `pcm.memory.written` event is published as a write's is (noted in
  the outbox first), so the graph-extractor rebuilds its facts and the sweeper judges it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from pcm_common.data.export_format import ExportHeader, ExportLine
from pcm_common.domain.figures import extract_figures
from pcm_common.domain.memory import GraphInfo, MemoryRecord, text_hash
from pcm_common.messaging.events import STREAM_WRITTEN, MemoryChanged, MemoryWritten
from pcm_common.messaging.outbox import cross_out, note, owe, pay
from pcm_common.models.sparse import encode_document
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis.keys import TENANTS
from pcm_common.stores.vectors import VectorPoint, usable_vector
from pcm_ingest.firewall import SecretDetected
from pcm_ingest.schemas import MemoryIn
from pcm_ingest.service import CaptureRefused, IngestService

log = get_logger("ingest.import")

# What a write names of a record: the fields `MemoryIn` validates.
_WRITE_FIELDS = (
    "text",
    "user_id",
    "scope",
    "workspace",
    "project",
    "created_at",
    "importance",
    "pinned",
    "source",
    "episode",
    "metadata",
)

# Payload objects the pipeline writes, whose fields the record's model may not all name.
# (Not `metadata`: the firewall's redaction replaces it whole. Not `graph`: rebuilt here.)
_PIPELINE_OBJECTS = ("surprisal", "strength", "affect")


class ImportRefusal(BaseModel):
    line: int  # the memory's line in the request body (0 is the first line)
    id: str
    error: str  # capture_refused | secret_detected | id_taken
    detail: Any = None


class ImportOut(BaseModel):
    imported: int  # memories stored
    existing: int  # already in this tenant: left as they are
    skipped: int  # automatic captures the scope's capture mode or capture gate skips
    reembedded: int  # stored with a vector made here (another model, none sent, redacted)
    redacted: int  # stored with PII redacted by the firewall
    refused: list[ImportRefusal]


class BadImport(ValueError):
    """A line that is not a memory of the export format: the request is refused whole."""


@dataclass
class _Item:
    line: int
    record: MemoryRecord
    write: MemoryIn
    vector: list[float] | None
    # The earlier versions (`history` in the payload); None: the record had none.
    history: list[dict[str, Any]] | None = None
    # The objects of the exported payload (surprisal, strength, ...): fields the record's
    # model does not name (the judge's `kin_ids`) are kept from them.
    nested: dict[str, dict[str, Any]] | None = None
    # The repeats' times as exported (validated as the record's `repeats`).
    repeats: list[str] | None = None

    def payload(self) -> dict[str, Any]:
        """The record's payload, with the earlier versions and the exported objects' other
        fields kept."""
        out = self.record.to_payload()
        for name, exported in (self.nested or {}).items():
            if isinstance(out.get(name), dict):
                out[name] = {**exported, **out[name]}
        if self.history is not None:
            out["history"] = self.history
        if self.repeats is not None:  # (as written: the model writes its times otherwise)
            out["repeats"] = self.repeats
        return out


def parse(tenant: str, lines: Sequence[str]) -> tuple[ExportHeader, list[_Item]]:
    """The header (the first line, if it is one) and the memories; raises `BadImport` at
    the first line that is neither."""
    header = ExportHeader()
    items: list[_Item] = []
    for n, raw in enumerate(lines):
        try:
            if n == 0 and '"header"' in raw:
                header = ExportHeader.model_validate_json(raw)
                continue
            line = ExportLine.model_validate_json(raw)
            memory = {**line.memory, "tenant": tenant}
            record = MemoryRecord.from_payload(memory)
            # (A stored record names no workspace or project as "".)
            asked = {k: memory[k] for k in _WRITE_FIELDS if memory.get(k) not in (None, "")}
            write = MemoryIn.model_validate(asked)
        except ValidationError as exc:
            problems = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
            raise BadImport(f"line {n}: {'; '.join(problems)[:300]}") from None
        except (ValueError, TypeError) as exc:
            raise BadImport(f"line {n}: {str(exc)[:300]}") from None
        # Derived from the text, never taken from the file: duplicates are found by them.
        record.text_hash, record.figures = text_hash(record.text), extract_figures(record.text)
        kept = memory.get("history")
        history = [dict(h) for h in kept if isinstance(h, dict)] if isinstance(kept, list) else None
        nested = {k: v for k in _PIPELINE_OBJECTS if isinstance(v := line.memory.get(k), dict)}
        repeats = line.memory.get("repeats")
        kept_repeats = (
            repeats
            if isinstance(repeats, list) and all(isinstance(r, str) for r in repeats)
            else None
        )
        items.append(_Item(n, record, write, line.vector, history, nested, kept_repeats))
    return header, items


class Importer:
    def __init__(self, svc: IngestService, res: Resources) -> None:
        self.svc = svc
        self.res = res

    async def run(self, tenant: str, header: ExportHeader, items: list[_Item]) -> ImportOut:
        out = ImportOut(imported=0, existing=0, skipped=0, reembedded=0, redacted=0, refused=[])
        owners = await self.res.vectors.tenants_of([i.record.id for i in items])
        fresh: list[_Item] = []
        for item in items:
            owner = owners.get(item.record.id)
            if owner == tenant:
                out.existing += 1
            elif owner is not None:
                out.refused.append(_refusal(item, "id_taken", "another tenant holds this id"))
            else:
                fresh.append(item)
        fresh = await self._admitted(tenant, fresh, out)
        fresh = await self._screened(tenant, fresh, out)
        if fresh:
            await self._store(tenant, header, fresh, out)
        out.refused.sort(key=lambda r: r.line)
        log.info("memories_imported", tenant=tenant, **out.model_dump(exclude={"refused"}))
        return out

    async def _admitted(self, tenant: str, items: list[_Item], out: ImportOut) -> list[_Item]:
        """The items the scope's capture mode keeps (`IngestService.admit`)."""
        try:
            skipped = await self.svc.admit(tenant, [i.write for i in items])
        except CaptureRefused as exc:
            refused = {int(str(r["index"])): r for r in exc.items}
            for n, r in refused.items():
                out.refused.append(_refusal(items[n], "capture_refused", r))
            items = [i for n, i in enumerate(items) if n not in refused]
            skipped = await self.svc.admit(tenant, [i.write for i in items])
        out.skipped += len(skipped)
        return [i for n, i in enumerate(items) if n not in skipped]

    async def _screened(self, tenant: str, items: list[_Item], out: ImportOut) -> list[_Item]:
        """The items the firewall lets through, redacted in place: a blocked finding in
        the text, an earlier version, the metadata or a name refuses the item."""
        writes, owner = [], []
        for n, item in enumerate(items):
            writes.append(item.write)
            owner.append(n)
            for h in item.history or []:
                writes.append(MemoryIn.model_construct(text=str(h.get("text") or "-")))
                owner.append(n)
        try:
            screened, redacted = await self.svc.screen(tenant, writes)
        except SecretDetected as exc:
            blocked: dict[int, list[Any]] = {}
            for bad in exc.items:
                blocked.setdefault(owner[int(str(bad["index"]))], []).append(bad.get("kinds"))
            for n, kinds in blocked.items():
                out.refused.append(_refusal(items[n], "secret_detected", kinds))
            return await self._screened(
                tenant, [i for n, i in enumerate(items) if n not in blocked], out
            )
        changed = {owner[k] for k in redacted}
        for k, n in enumerate(owner):
            if k in redacted:
                _apply(items[n], writes[k], screened[k])
        out.redacted += len(changed)
        for n in changed:
            items[n].vector = None  # the text it was made of is not the one stored
        return items

    async def _store(
        self, tenant: str, header: ExportHeader, items: list[_Item], out: ImportOut
    ) -> None:
        """Vectors (kept or made here), the points, then their events."""
        model = await self.res.vectors.embedding_model() or self.res.settings.embedding_model
        dim = self.res.settings.embedding_dim
        same = header.embedding_model == model
        todo = [i for i in items if not (same and usable_vector(i.vector, dim))]
        made = await self.res.embedder.embed([i.record.text for i in todo])
        for item, vec in zip(todo, made, strict=True):
            item.vector = vec
        out.reembedded += len(todo)
        for item in items:
            item.record.graph = GraphInfo()  # the facts are rebuilt in this graph
            item.record.tenant = tenant
        points = [
            VectorPoint(
                id=i.record.id,
                vector=list(i.vector or []),
                payload=i.payload(),
                sparse=encode_document(i.record.text),
            )
            for i in items
        ]
        records = [i.record for i in items]
        pinned = [
            MemoryChanged(tenant=tenant, memory_id=r.id, change="pinned")
            for r in records
            if r.pinned
        ]
        await self.res.redis.sadd(TENANTS, tenant)
        await note(self.res.redis, tenant, [r.id for r in records])
        await owe(self.res.redis, pinned)
        await self.res.vectors.upsert(points)
        out.imported += len(points)
        await self.res.bus.publish_many(STREAM_WRITTEN, [MemoryWritten.of(r) for r in records])
        await cross_out(self.res.redis, tenant, [r.id for r in records])
        await pay(self.res, pinned)


def _apply(item: _Item, asked: MemoryIn, screened: MemoryIn) -> None:
    """A redaction the firewall made, written into the record (its text or metadata) or
    into the earlier version it screened."""
    if asked is item.write:
        rec = item.record
        if screened.text != rec.text:
            rec.text, rec.text_hash = screened.text, text_hash(screened.text)
            rec.figures = extract_figures(screened.text)
        rec.metadata = screened.metadata
        return
    for h in item.history or []:
        if str(h.get("text") or "-") == asked.text:
            h["text"] = screened.text


def _refusal(item: _Item, error: str, detail: Any) -> ImportRefusal:
    return ImportRefusal(line=item.line, id=item.record.id, error=error, detail=detail)
