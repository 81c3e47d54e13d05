"""Throughput and latency of the embedded models on this machine.

Usage: uv run python scripts/bench_models.py [--n 1000] [--batch 64] [--queries 50]

Prints: embeddings/s (direct ONNX and through litellm's custom provider), per-query latency
(median and p95, direct vs litellm), local extraction memories/s (batched and one by one) and
token counting speed. Inputs are synthetic LoCoMo-like dialogue turns of about 20 words.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pcm_common.extract.local import LocalExtractor
from pcm_common.models import local_minilm
from pcm_common.models.embeddings import Embedder
from pcm_common.text.tokens import count_tokens, encoding_source

NAMES = ["Caroline", "Melanie", "Jon", "Gina", "Alice", "Bob", "Dave", "Priya", "Tom", "Maria"]
PLACES = ["Paris", "Seattle", "Boston", "Rome", "the lake", "Berlin", "Tokyo", "the park"]
ORGS = ["Google", "Acme Corp", "the hospital", "Microsoft", "a bakery", "the school"]
TECH = ["Postgres", "Redis", "Kafka", "FastAPI", "React", "Neo4j", "Qdrant", "Docker"]
TEMPLATES = [
    "{n}: I went to {p} last weekend with my sister and we had a really wonderful time"
    " walking around there.",
    "{n}: I just started a new job at {o} and honestly it has been a bit stressful for me"
    " so far this month.",
    "{n}: We finally migrated the billing service from MySQL to {t} after months of planning.",
    "{n}: My kids love painting, so we signed up for a pottery class near {p} this summer.",
    "{n}: Thanks for asking! I have been reading a lot lately, mostly long books about"
    " European history and art.",
    "{n}: Our team uses {t} for the ingest pipeline because it handles the nightly load well"
    " enough for our needs.",
    "{n}: I visited {p} in May 2023 and met an old friend from college who now works at {o}.",
    "{n}: The support group meeting on Tuesday was really powerful, I felt accepted and heard"
    " by everyone there.",
]


def corpus(n: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    return [
        rnd.choice(TEMPLATES).format(
            n=rnd.choice(NAMES), p=rnd.choice(PLACES), o=rnd.choice(ORGS), t=rnd.choice(TECH)
        )
        for _ in range(n)
    ]


def ms(xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
    return f"median {statistics.median(xs) * 1e3:.2f} ms, p95 {p95 * 1e3:.2f} ms"


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    texts = corpus(args.n)
    words = statistics.mean(len(t.split()) for t in texts)
    print(f"cpus={os.cpu_count()} n={args.n} mean_words={words:.1f} batch={args.batch}")

    t = time.perf_counter()
    local_minilm.warmup()
    print(
        f"minilm load: {time.perf_counter() - t:.2f} s "
        f"(intra-op threads {local_minilm._intra_op_threads()})"
    )

    t = time.perf_counter()
    for i in range(0, len(texts), args.batch):
        local_minilm.embed(texts[i : i + args.batch])
    dt = time.perf_counter() - t
    print(f"embed direct ONNX:  {len(texts) / dt:8.1f} embeddings/s (input order)")
    by_len = sorted(texts, key=len)  # what Embedder does: less padding per batch
    t = time.perf_counter()
    for i in range(0, len(by_len), args.batch):
        local_minilm.embed(by_len[i : i + args.batch])
    dt = time.perf_counter() - t
    print(f"embed direct ONNX:  {len(texts) / dt:8.1f} embeddings/s (length-sorted batches)")

    emb = Embedder(batch_size=args.batch)
    await emb.embed(["warm litellm", "and the batch session"])
    await emb.embed_query("and the query model")
    t = time.perf_counter()
    await emb.embed(texts)
    dt = time.perf_counter() - t
    print(f"embed via litellm:  {len(texts) / dt:8.1f} embeddings/s (Embedder, {emb.model})")

    query = "When did Caroline go to the LGBTQ support group?"
    direct: list[float] = []
    routed: list[float] = []
    for _ in range(args.queries):
        t = time.perf_counter()
        local_minilm.embed([query])
        direct.append(time.perf_counter() - t)
        t = time.perf_counter()
        await emb.embed_query(query)
        routed.append(time.perf_counter() - t)
    print(f"query latency direct:  {ms(direct)}")
    print(f"query latency litellm: {ms(routed)}")

    ex = LocalExtractor()
    t = time.perf_counter()
    ex.warmup()
    print(f"spaCy load: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    results = await ex.extract_many(texts)
    dt = time.perf_counter() - t
    n_ent = sum(len(r.entities) for r in results)
    n_rel = sum(len(r.relations) for r in results)
    print(
        f"extract batched:    {len(texts) / dt:8.1f} memories/s "
        f"({n_ent} entities, {n_rel} relations)"
    )
    sub = texts[: min(200, len(texts))]
    t = time.perf_counter()
    for s in sub:
        await ex.extract(s)
    dt = time.perf_counter() - t
    print(f"extract one-by-one: {len(sub) / dt:8.1f} memories/s")

    t = time.perf_counter()
    total = sum(count_tokens(s) for s in texts)
    dt = time.perf_counter() - t
    print(f"count_tokens ({encoding_source()}): {len(texts) / dt:8.0f} texts/s, {total} tokens")


if __name__ == "__main__":
    asyncio.run(main())
