"""Export then import into a fresh store gives the same recall answers (issue 37), on a
part of the LoCoMo dev set: `bench.roundtrip` (the full run: `python -m bench.roundtrip`,
docs/benchmarks.md) with two servers of their own, each on a fresh Qdrant store and Redis
database, sharing the graph server under two tenant names.

Dense search only (`PCM_HYBRID=false`): the hybrid search's lexical ranks come from the
engine's BM25 statistics, which depend on the order its segments were written in, not on
the data (docs/benchmarks.md has both measured on the whole set)."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest

from bench.common import LOCOMO_PATH, pcm_server
from bench.locomo_data import load
from bench.roundtrip import Side, roundtrip
from tests.conftest import NEO4J_URI, TEST_REDIS

RUN = uuid.uuid4().hex[:8]
DATA = next(
    (p for p in (LOCOMO_PATH, Path("/work/shared/data/locomo_dev.json")) if p.exists()), None
)


@pytest.mark.skipif(DATA is None, reason="the LoCoMo dev set is not next to this checkout")
async def test_a_copy_answers_as_the_original() -> None:
    assert DATA is not None
    convs, _ = load(DATA, 1)
    # The first sessions of a conversation, and the questions about them.
    conv = convs[0]
    turns = conv.turns[:120]
    dias = {t.dia_id for t in turns}
    questions = [q for q in conv.questions if set(q.evidence) <= dias][:12]
    conv = dataclasses.replace(conv, turns=turns, questions=questions)
    assert len(questions) >= 8
    env = {
        "REDIS_URL": f"{TEST_REDIS}/13",
        "NEO4J_URI": NEO4J_URI,
        "PCM_ENV": "dev",
        "PCM_LOG_LEVEL": "WARNING",
        "PCM_JOB_INTERVAL_S": "1000000000",
        "PCM_HYBRID": "false",
    }
    async with (
        pcm_server(env, {"rt": f"rt-src-{RUN}"}, inline=True) as src,
        pcm_server(
            {**env, "REDIS_URL": f"{TEST_REDIS}/14"}, {"rt": f"rt-dst-{RUN}"}, inline=True
        ) as dst,
    ):
        out = await roundtrip(conv, Side(src, "rt"), Side(dst, "rt"), k=10, vectors=True)
    assert out["imported"] == out["memories"] == len(turns) and out["reembedded"] == 0, out
    assert out["same"] == out["questions"] == len(questions), out["differ"]
    # The copy holds what the export held: the pipeline added nothing the original lacked.
    assert not out["fields_changed"], out["fields_changed"]
