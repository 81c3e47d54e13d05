"""The export format (`GET /v1/export`, `POST /v1/import`, issue 37): JSON Lines, a header
line then one line per memory.

    {"kind": "header", "format": "pcm-export", "version": 1, "embedding_model": "...",
     "dim": 384, "vectors": true, "count": 1234, "filters": {...}, "exported_at": "..."}
    {"kind": "memory", "memory": {<the stored record>}, "vector": [0.01, ...]}

`memory` is the record as stored (`MemoryRecord`: text, every payload field, `history` with
the earlier versions and `version`), without its tenant (an import gives it the importing
key's) and without what the store derives from it (calendar keys, the figures keyword,
the judge's token features: remade when it is written again). `vector` (only when asked
for) is the dense vector as stored, made with the header's `embedding_model`. Episode
records are not exported: they are derived from the memories, and the consolidation job
makes them again where the memories are imported.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pcm_common.domain.clock import utcnow
from pcm_common.domain.memory import DERIVED_FIELDS
from pcm_common.judge.features import FEATURES_FIELD
from pcm_common.stores.vectors import ScoredPoint

FORMAT = "pcm-export"
VERSION = 1
# Payload fields an export leaves out: the tenant, and what the store derives again.
LEFT_OUT = DERIVED_FIELDS | {FEATURES_FIELD, "tenant"}


class ExportHeader(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: Literal["header"] = "header"
    format: Literal["pcm-export"] = "pcm-export"
    version: int = Field(default=VERSION, ge=1, le=VERSION)
    embedding_model: str | None = Field(default=None, max_length=200)
    dim: int | None = Field(default=None, ge=1, le=65_536)
    vectors: bool = False
    count: int | None = Field(default=None, ge=0)
    filters: dict[str, Any] = Field(default_factory=dict)
    exported_at: datetime = Field(default_factory=utcnow)


class ExportLine(BaseModel):
    """One memory of an export."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["memory"] = "memory"
    memory: dict[str, Any]
    vector: list[float] | None = Field(default=None, max_length=65_536)


def export_line(point: ScoredPoint, with_vector: bool) -> str:
    """One point as its export line (JSON, no newline)."""
    memory = {k: v for k, v in point.payload.items() if k not in LEFT_OUT}
    line = ExportLine(memory=memory, vector=point.vector if with_vector else None)
    return line.model_dump_json(exclude_none=True)
