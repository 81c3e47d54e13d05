"""Benchmark the vector store adapters: upsert throughput and filtered search latency.

    uv run python scripts/bench_vectors.py                 # Edge shard in a temp dir
    uv run python scripts/bench_vectors.py --adapter server-local --points 2000
    uv run python scripts/bench_vectors.py --adapter server --url http://localhost:6333

Random unit vectors (default 10k x 384-d) split over 2 tenants; every query filters on
one tenant (and, for the "scoped" run, on scope/state too). Latency is measured through
the async adapter (thread hop included), median and p95 over `--queries` queries.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from pcm_common.models.sparse import encode_document, encode_query
from pcm_common.stores.qdrant.edge.store import EdgeVectorStore
from pcm_common.stores.qdrant.server import ServerVectorStore
from pcm_common.stores.vectors import Filter, VectorPoint, VectorStore

WORDS = (
    "budget meeting deploy review hiring plan contract lunch trip invoice design bug "
    "release customer report roadmap sprint database migration outage alert"
).split()


def make_points(n: int, dim: int, rng: np.random.Generator) -> tuple[np.ndarray, list[VectorPoint]]:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    pts = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS, size=12)) + f" name{i}"
        pts.append(
            VectorPoint(
                id=str(uuid.uuid4()),
                vector=x[i].tolist(),
                payload={
                    "tenant": "t0" if i % 2 == 0 else "t1",
                    "scope": ["global", "workspace", "project"][i % 3],
                    "state": "active" if i % 10 else "archived",
                    "created_ts": float(i),
                    "pinned": i % 50 == 0,
                    "text": text,
                },
                sparse=encode_document(text),
            )
        )
    return x, pts


async def timed_queries(
    store: VectorStore,
    x: np.ndarray,
    rng: np.random.Generator,
    n: int,
    flt: Filter | None,
    hybrid: bool,
) -> list[float]:
    lat = []
    for _ in range(n):
        i = int(rng.integers(len(x)))
        q = x[i].tolist()
        sparse = encode_query(f"budget name{i}") if hybrid else None
        t0 = time.perf_counter()
        await store.search("t0", q, limit=10, flt=flt, sparse=sparse)
        lat.append((time.perf_counter() - t0) * 1000)
    return lat


def summary(name: str, lat: list[float]) -> None:
    p95 = statistics.quantiles(lat, n=20)[-1]
    print(f"{name:<34} median {statistics.median(lat):7.3f} ms   p95 {p95:7.3f} ms")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--adapter", choices=["edge", "server-local", "server"], default="edge")
    ap.add_argument("--url", default="http://localhost:6333")
    ap.add_argument("--points", type=int, default=10_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    x, pts = make_points(args.points, args.dim, rng)
    tmp = tempfile.TemporaryDirectory()
    store: VectorStore
    if args.adapter == "edge":
        # optimize_after beyond the data size: the HNSW build is timed separately below.
        store = EdgeVectorStore(Path(tmp.name) / "shard", dim=args.dim, optimize_after=10**9)
    elif args.adapter == "server-local":
        store = ServerVectorStore(location=":memory:", dim=args.dim)
    else:
        store = ServerVectorStore(
            url=args.url, collection=f"bench_{uuid.uuid4().hex}", dim=args.dim
        )
    await store.ensure_collection()

    t0 = time.perf_counter()
    for i in range(0, len(pts), args.batch):
        await store.upsert(pts[i : i + args.batch])
    dt = time.perf_counter() - t0
    print(f"{args.adapter}: {args.points} points x {args.dim}-d, batches of {args.batch}")
    print(f"upsert (dense+sparse+payload)      {len(pts) / dt:9.0f} points/s  ({dt:.2f} s)")

    t0 = time.perf_counter()
    await store.upsert([pts[0]])
    print(f"single-point upsert                {(time.perf_counter() - t0) * 1000:7.3f} ms")

    scoped = Filter(must={"scope": ["global", "workspace"]}, must_not={"state": "archived"})
    await timed_queries(store, x, rng, 20, None, False)  # warm-up
    summary(
        "dense, tenant filter (plain)",
        await timed_queries(store, x, rng, args.queries, None, False),
    )
    if isinstance(store, EdgeVectorStore):
        t0 = time.perf_counter()
        await store.optimize()
        print(f"optimize (HNSW build)              {time.perf_counter() - t0:7.2f} s")
    summary("dense, tenant filter", await timed_queries(store, x, rng, args.queries, None, False))
    summary(
        "dense, tenant+scope+state filter",
        await timed_queries(store, x, rng, args.queries, scoped, False),
    )
    summary(
        "hybrid RRF, tenant filter", await timed_queries(store, x, rng, args.queries, None, True)
    )

    await store.close()
    tmp.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
