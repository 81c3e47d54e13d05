"""Graph measurements (issue 5): run with ``uv run python -m bench.graph ...``.

- ``links``: offline LoCoMo dev evidence recall at k=50, dense (exact cosine, MiniLM) vs.
  dense + graph links (the recall scoring: score = cos + 0.15·ℓ over the dense pool joined
  by the linked memories), per category. Link strengths come from ``link_strengths``, the
  function recall uses, over the local extractor's facts; the query's entities are its
  n-gram keys as in recall (``--extractor``: the extractor's entities of the question).
- ``graph``: writes the LoCoMo turns to a real graph server through the graph-extractor's
  batch path and measures ``GraphLinker.links`` latency per question.
- ``stream``: end-to-end extraction throughput through Redis Streams (memories/s).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.graph_data import CATEGORIES, Conversation, prepare
from pcm_common.stores.graph.port import EntityLinks, Extraction

CACHE = Path("var/graph-eval/cache.pkl")


def _canon(name: str) -> str:
    return " ".join(name.split()).casefold()


class OfflineGraph:
    """What ``entity_links`` answers, computed in memory from one conversation's facts."""

    def __init__(self, conv: Conversation) -> None:
        self.total = len(conv.turns)
        self.mentions: dict[tuple[str, str], list[str]] = defaultdict(list)
        for turn, facts in zip(conv.turns, conv.turn_facts, strict=True):
            ents = {(e.type, _canon(e.name)) for e in facts.entities}
            ents |= {(r.source.type, _canon(r.source.name)) for r in facts.relations}
            ents |= {(r.target.type, _canon(r.target.name)) for r in facts.relations}
            for te in ents:
                self.mentions[te].append(turn.memory_id)
        self.by_key: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for t, k in self.mentions:
            self.by_key[k].append((t, k))

    def entity_links(self, names: list[str], max_df: int) -> tuple[int, list[EntityLinks]]:
        out = []
        for key in sorted({_canon(n) for n in names}):
            for t, k in self.by_key.get(key, []):
                mids = self.mentions[(t, k)]
                ids = tuple(mids) if len(mids) <= max_df else ()
                out.append(EntityLinks(k, t, len(mids), ids))
        return self.total, out


def _links_for(
    graph: OfflineGraph,
    qfacts: Extraction,
    *,
    max_df: int,
    share: float,
    max_links: int,
    types: frozenset[str],
    query: str | None = None,
) -> dict[str, float]:
    """Links as recall computes them; with ``query`` the query entities are its n-gram
    keys (recall's default), otherwise the extractor's entities of the question."""
    from pcm_common.extract.query import query_keys
    from pcm_recall.graph_links import link_strengths

    if query is not None:
        names = query_keys(query)
    else:
        names = sorted({e.name for e in qfacts.entities if e.type in types})
    if not names:
        return {}
    total, found = graph.entity_links(names, max_df)
    cap = max(1, min(max_df, math.ceil(share * total)))
    usable = [
        e if e.df <= cap else EntityLinks(e.key, e.type, e.df, ()) for e in found if e.type in types
    ]
    return link_strengths(total, usable, max_links=max_links)


def evaluate(
    convs: list[Conversation],
    *,
    k: int = 50,
    pool: int = 100,
    bonus: float = 0.15,
    max_df: int = 50,
    share: float = 0.05,
    max_links: int = 20,
    floor: float | None = None,
    types: frozenset[str] | None = None,
    ngrams: bool = True,
) -> dict[str, Any]:
    from pcm_recall.graph_links import LINK_TYPES

    types = types or LINK_TYPES
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    linked_counts: list[int] = []
    for conv in convs:
        graph = OfflineGraph(conv)
        tv = np.asarray(conv.turn_vecs, dtype=np.float32)
        tv /= np.linalg.norm(tv, axis=1, keepdims=True) + 1e-12
        ids = [t.memory_id for t in conv.turns]
        dia = {t.memory_id: t.dia_id for t in conv.turns}
        index = {m: i for i, m in enumerate(ids)}
        for q, qv, qf in zip(conv.questions, conv.question_vecs, conv.question_facts, strict=True):
            v = np.asarray(qv, dtype=np.float32)
            cos = tv @ (v / (np.linalg.norm(v) + 1e-12))
            order = [int(i) for i in np.argsort(-cos)]
            if floor is not None:
                order = [i for i in order if cos[i] >= floor]
            base = order[:k]
            links = _links_for(
                graph,
                qf,
                max_df=max_df,
                share=share,
                max_links=max_links,
                types=types,
                query=q.text if ngrams else None,
            )
            linked_counts.append(len(links))
            cands = set(order[:pool]) | {
                index[m] for m in links if floor is None or cos[index[m]] >= floor
            }
            boosted = sorted(
                cands, key=lambda i: -(float(cos[i]) + bonus * links.get(ids[i], 0.0))
            )[:k]
            added = base + [index[m] for m in links if index[m] not in set(base)][:10]
            ev = set(q.evidence)
            cat = CATEGORIES[q.category]
            for name, got in (("dense", base), ("boost", boosted), ("dense+10", added)):
                found = {dia[ids[i]] for i in got}
                r = len(ev & found) / len(ev)
                per[name][cat].append(r)
                per[name]["all"].append(r)
    table = {
        name: {cat: round(statistics.fmean(v), 4) for cat, v in cats.items()}
        for name, cats in per.items()
    }
    table["n"] = {cat: len(v) for cat, v in per["dense"].items()}
    table["linked_per_question"] = {"mean": round(statistics.fmean(linked_counts), 2)}
    return table


def _print(table: dict[str, Any]) -> None:
    cats = [*CATEGORIES.values(), "all"]
    print(f"{'':12}" + "".join(f"{c:>13}" for c in cats))
    for name, row in table.items():
        print(f"{name:12}" + "".join(f"{row.get(c, float('nan')):>13}" for c in cats))


async def cmd_links(args: argparse.Namespace) -> None:
    convs, extract_s = await prepare(CACHE)
    turns = sum(len(c.turns) for c in convs)
    print(f"local extractor: {turns} turns in {extract_s:.2f} s = {turns / extract_s:.0f}/s")
    for floor in (None, 0.35):
        print(f"\n== k={args.k} pool={args.pool} max_links={args.max_links} floor={floor}")
        _print(
            evaluate(
                convs,
                k=args.k,
                pool=args.pool,
                max_links=args.max_links,
                max_df=args.max_df,
                share=args.share,
                floor=floor,
                ngrams=not args.extractor,
            )
        )


async def cmd_graph(args: argparse.Namespace) -> None:
    """Real graph: write every conversation through the handler's batch path, then time
    one GraphLinker.links call per question."""
    from pcm_common.extract.local import LocalExtractor
    from pcm_common.extract.query import query_types
    from pcm_common.stores.graph.neo4j.store import Neo4jGraphStore
    from pcm_recall.graph_links import GraphLinker

    convs, _ = await prepare(CACHE)
    graph = Neo4jGraphStore(args.uri, "neo4j", os.environ.get("NEO4J_PASSWORD", "pcm-dev-password"))
    await graph.ensure_schema()
    run = uuid.uuid4().hex[:6]
    # N comes from the memory store in recall; here it is the conversation's length.
    sizes = {f"locomo-{c.sample_id}-{run}": len(c.turns) for c in convs}

    async def count(tenant: str) -> int:
        return sizes[tenant]

    common: dict[str, Any] = {"count": count, "timeout_s": 2.0, "cache_size": 0, "cooldown_s": 0.0}
    linker = GraphLinker(graph, LocalExtractor(), **common)
    untyped = GraphLinker(graph, LocalExtractor(), typed=False, **common)
    lat: list[float] = []
    # Questions with a type word, timed with and without the typed walk, alternately.
    typed_ms: dict[bool, list[float]] = {True: [], False: []}
    try:
        t0 = time.perf_counter()
        for c in convs:
            tenant = f"locomo-{c.sample_id}-{run}"
            items = [(tenant, t.memory_id, f) for t, f in zip(c.turns, c.turn_facts, strict=True)]
            for i in range(0, len(items), 64):
                await graph.write_facts_many(items[i : i + 64])
        write_s = time.perf_counter() - t0
        n = sum(len(c.turns) for c in convs)
        print(f"graph writes: {n} memories in {write_s:.2f} s = {n / write_s:.0f}/s (batch 64)")
        ok = 0
        for c in convs:
            tenant = f"locomo-{c.sample_id}-{run}"
            for q in c.questions:
                t = time.perf_counter()
                res = await linker.links(tenant, q.text)
                lat.append((time.perf_counter() - t) * 1000)
                ok += res.ok
                if query_types(q.text):
                    for typed, lk in ((False, untyped), (True, linker)):
                        t = time.perf_counter()
                        await lk.links(tenant, q.text)
                        typed_ms[typed].append((time.perf_counter() - t) * 1000)
        lat.sort()
        print(
            f"links latency over {len(lat)} questions (extraction + one graph round trip): "
            f"median {statistics.median(lat):.1f} ms, p95 {lat[int(0.95 * len(lat))]:.1f} ms; "
            f"ok {ok}/{len(lat)}"
        )
        if typed_ms[True]:
            print(
                f"{len(typed_ms[True])} questions with a type word, median links latency: "
                f"{statistics.median(typed_ms[True]):.1f} ms with the typed walk, "
                f"{statistics.median(typed_ms[False]):.1f} ms without"
            )
    finally:
        for c in convs:
            await graph.delete_memories(
                f"locomo-{c.sample_id}-{run}", [t.memory_id for t in c.turns]
            )
        await graph.close()


async def cmd_stream(args: argparse.Namespace) -> None:
    """Publish N MemoryWritten events, run the graph-extractor consumer, time until its
    group has acknowledged every entry."""
    from redis.asyncio import Redis

    from pcm_common.domain.clock import utcnow
    from pcm_common.extract.local import LocalExtractor
    from pcm_common.messaging.bus import ensure_groups
    from pcm_common.messaging.events import GROUP_GRAPH, STREAM_WRITTEN, MemoryWritten
    from pcm_common.runtime.resources import Resources
    from pcm_graph_extractor.component import GraphExtractorComponent
    from pcm_graph_extractor.settings import GraphExtractorSettings

    convs, _ = await prepare(CACHE)
    texts = [t.text for c in convs for t in c.turns][: args.n]
    settings = GraphExtractorSettings(redis_url=args.redis, neo4j_uri=args.uri)
    redis = Redis.from_url(args.redis)
    await redis.flushdb()
    await ensure_groups(redis)
    res = Resources(settings)
    comp = GraphExtractorComponent(res, settings)
    tenant = f"bench-{uuid.uuid4().hex[:6]}"
    if args.workers > 1:
        # What the proposed bus change does: several handlers of one group in flight (a
        # patched method, hence the ignore).
        import functools

        res.bus.broker.subscriber = functools.partial(  # type: ignore[method-assign,assignment]
            res.bus.broker.subscriber, max_workers=args.workers
        )
    comp.consume()  # batched by the bus (Bus.consume_batch) where the service does so
    if isinstance(res.extractor, LocalExtractor):  # the LLM extractor has nothing to load
        res.extractor.warmup()
    await comp.start()
    events = [
        MemoryWritten(tenant=tenant, memory_id=str(uuid.uuid4()), text=t, created_at=utcnow())
        for t in texts
    ]
    await res.bus.publish_many(STREAM_WRITTEN, events)
    t0 = time.perf_counter()
    await res.bus.start()
    while True:
        info = {g["name"].decode(): g for g in await redis.xinfo_groups(STREAM_WRITTEN)}
        g = info[GROUP_GRAPH]
        if int(g["lag"] or 0) == 0 and int(g["pending"]) == 0:
            break
        await asyncio.sleep(0.05)
    secs = time.perf_counter() - t0
    stats = await res.graph.stats(tenant)
    print(
        f"stream: {len(texts)} memories in {secs:.2f} s = {len(texts) / secs:.0f} memories/s "
        f"(workers={args.workers}); graph {stats}"
    )
    await res.graph.delete_memories(tenant, [e.memory_id for e in events])
    await res.aclose()
    await redis.flushdb()
    await redis.aclose()


def main() -> None:
    p = argparse.ArgumentParser(prog="bench.graph")
    sub = p.add_subparsers(dest="cmd", required=True)
    links = sub.add_parser("links")
    links.add_argument("--k", type=int, default=50)
    links.add_argument("--pool", type=int, default=100)
    links.add_argument("--max-links", type=int, default=20)
    links.add_argument("--max-df", type=int, default=50)
    links.add_argument("--share", type=float, default=0.05)
    links.add_argument(
        "--extractor", action="store_true", help="query entities from the extractor, not n-grams"
    )
    g = sub.add_parser("graph")
    g.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"))
    s = sub.add_parser("stream")
    s.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"))
    s.add_argument("--redis", default="redis://127.0.0.1:6379/3")
    s.add_argument("--n", type=int, default=2000)
    s.add_argument("--workers", type=int, default=1)
    args = p.parse_args()
    fn = {"links": cmd_links, "graph": cmd_graph, "stream": cmd_stream}[args.cmd]
    asyncio.run(fn(args))


if __name__ == "__main__":
    main()
