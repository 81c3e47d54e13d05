"""Surprisal and absence benchmark on ../shared/data/dev.outliers*.json (data README).

Replay (`bench.routine_replay`): memories and questions in live time order, each question
recalled with `now = asked_at` once the judging of every earlier memory has finished; run
with each persona its own tenant and with all personas as users of one tenant
(`--protocol`). The labels (`is_outlier`, `outlier_kind`, `routine_id`, `expected`) are used
for scoring only and never reach the system.

    uv run python -m bench.outliers [--judge local|llm] [--data absence|plain|both]
    uv run python -m bench.outliers --file my.outliers.json   # any data set in this format
    uv run python -m bench.outliers --offline   # no server: Judging + flags in process
    uv run python -m bench.outliers --data plain --variant a --variant b:PCM_X=1  # configs
    uv run python -m bench.outliers --order stored-first --offline --store DIR  # iterate

`--order stored-first` is the older replay (every memory stored and judged, then every
question), kept for quick iteration on judged shards (`--store`); the figures quoted are
the live ones.

`--offline` stores through the real ingest service (duplicates and merges included) into a
Qdrant Edge shard in a temp dir (Redis DB 4 for its events), judges with
`pcm_sweeper.judging.Judging`, recalls with the real `RecallService` and takes its flags
(`--pool`: the older way, flags computed beside it from a dense pool). `--store DIR` keeps
the judged shards and reuses them (`--rejudge` judges them again), for quick iteration.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from bench.common import (
    DEFAULT_REDIS_URL,
    add_common_args,
    environ_restored,
    machine_facts,
    stop_on_sigterm,
    variants_of,
)
from bench.routine_replay import PROTOCOLS

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"
FILES = {"plain": "dev.outliers.json", "absence": "dev.outliers_absence.json"}
# The offline replays' events and routine index (a bench DB, `bench.common`).
OFFLINE_REDIS = os.environ.get("PCM_BENCH_REDIS", DEFAULT_REDIS_URL.rsplit("/", 1)[0]) + "/4"
KINDS = ("value", "category", "content")


def _ts(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


# ---- one persona's replay result, independent of how it was obtained ------------------


class Replay:
    def __init__(self) -> None:
        self.ids: dict[str, str] = {}  # dataset memory_id -> stored id
        self.judged: dict[str, float | None] = {}  # stored id -> score (judged only)
        self.answers: dict[str, dict[str, Any]] = {}  # question_id -> recall output
        self.flag_ms: list[float] = []
        self.status: dict[str, str] = {}  # dataset memory_id -> ingest status
        self.payloads: dict[str, dict[str, Any]] = {}  # stored id -> payload (offline)


def score(data: dict[str, Any], replays: dict[str, Replay]) -> dict[str, Any]:
    mems = data["memories"]
    by_routine: dict[str, set[str]] = defaultdict(set)
    labels: dict[str, dict[str, Any]] = {}  # stored id -> dataset labels (merged: any)
    routine_of: dict[str, str | None] = {}  # "persona:stored id" -> its routine (None: misc)
    for m in mems:
        rep = replays[m["persona"]]
        sid = rep.ids.get(m["memory_id"])
        if sid is None:
            continue
        key = f"{m['persona']}:{sid}"
        routine_of[key] = m["routine_id"]
        if m["routine_id"]:
            by_routine[m["routine_id"]].add(sid)
        lab = labels.setdefault(key, {"outlier": False, "kind": None})
        if m["is_outlier"]:
            lab.update(outlier=True, kind=m["outlier_kind"])
    stopped_routines = {q["routine_id"] for q in data["questions"] if q["expected"] == "stopped"}

    # Detector level: every judged memory.
    judged_normal = judged_normal_flagged = 0
    judged_out: dict[str, list[int]] = {k: [0, 0] for k in KINDS}
    for persona, rep in replays.items():
        for sid, sc in rep.judged.items():
            if sc is None:
                continue
            lab = labels.get(f"{persona}:{sid}", {"outlier": False, "kind": None})
            if lab["outlier"]:
                judged_out[lab["kind"]][1] += 1
                judged_out[lab["kind"]][0] += sc >= 0.7
            else:
                judged_normal += 1
                judged_normal_flagged += sc >= 0.7

    # Question level: the flags a recall returns.
    per_kind: dict[str, list[int]] = {k: [0, 0] for k in (*KINDS, "stopped")}
    in_context = [0, 0]
    false_flags = 0
    questions_with_false = 0
    leaked = off_request = 0
    continuing_wrong = 0  # the question's own routine flagged stopped although it goes on
    stopped_flags_on_continuing = 0  # any stopped flag on a routine that did not stop
    n_questions = 0
    for q in data["questions"]:
        rep = replays[q["persona"]]
        out = rep.answers.get(q["question_id"])
        if out is None:
            continue
        n_questions += 1
        flags = out["anomaly_flags"]
        recalled = {c["memory_id"] for c in out["situational_context"]}
        recalled |= {c["memory_id"] for c in out.get("episode_context", [])}
        routine_ids = by_routine.get(q["routine_id"], set())
        nf = 0
        own = set(rep.ids.values())
        for f in flags:
            # A flag of another persona's memory crossed users (or tenants); a flag of
            # another routine (or of a one-off memory) does not concern the request.
            leaked += f["memory_id"] not in own
            off_request += routine_of.get(f"{q['persona']}:{f['memory_id']}") != q["routine_id"]
            if f["kind"] == "surprise":
                flagged = labels.get(f"{q['persona']}:{f['memory_id']}")
                if flagged is not None and not flagged["outlier"]:
                    nf += 1
            elif f["kind"] == "stopped_routine":
                rid = next(
                    (
                        r
                        for r, ids in by_routine.items()
                        if r.startswith(q["persona"] + "-") and f["memory_id"] in ids
                    ),
                    None,
                )
                if rid is not None and rid not in stopped_routines:
                    stopped_flags_on_continuing += 1
        false_flags += nf
        questions_with_false += nf > 0
        exp = q["expected"]
        if exp == "stopped":
            per_kind["stopped"][1] += 1
            per_kind["stopped"][0] += any(
                f["kind"] == "stopped_routine" and f["memory_id"] in routine_ids for f in flags
            )
        else:
            continuing_wrong += any(
                f["kind"] == "stopped_routine" and f["memory_id"] in routine_ids for f in flags
            )
        if exp and exp != "stopped":
            sid = rep.ids.get(exp)
            kind = q["expected_kind"]
            per_kind[kind][1] += 1
            per_kind[kind][0] += any(f["memory_id"] == sid for f in flags)
            in_context[1] += 1
            in_context[0] += sid in recalled
    flag_ms = [x for rep in replays.values() for x in rep.flag_ms]

    def share(x: list[int]) -> float | None:
        return round(x[0] / x[1], 4) if x[1] else None

    return {
        "questions": n_questions,
        "flagged": {k: {"hit": v[0], "of": v[1], "share": share(v)} for k, v in per_kind.items()},
        "outlier_in_context": {
            "hit": in_context[0],
            "of": in_context[1],
            "share": share(in_context),
        },
        "false_flags_per_question": round(false_flags / max(n_questions, 1), 4),
        "questions_with_false_flag": questions_with_false,
        "questions_with_false_flag_share": round(questions_with_false / max(n_questions, 1), 4),
        "flags_of_other_routines_per_question": round(off_request / max(n_questions, 1), 4),
        "flags_of_other_personas": leaked,
        "continuing_routines_flagged_stopped": continuing_wrong,
        "stopped_flags_on_other_unlabelled_routines": stopped_flags_on_continuing,
        "judged": {
            "normal": judged_normal,
            "normal_flagged": judged_normal_flagged,
            "false_flag_rate": round(judged_normal_flagged / max(judged_normal, 1), 4),
            "outliers": {k: {"hit": v[0], "of": v[1]} for k, v in judged_out.items()},
        },
        "flags_ms_median": round(sorted(flag_ms)[len(flag_ms) // 2], 3) if flag_ms else None,
        "flags_ms_p95": round(sorted(flag_ms)[int(len(flag_ms) * 0.95)], 3) if flag_ms else None,
    }


# ---- offline: in-process services ------------------------------------------------------


def _strict_near_duplicates(ingest: Any) -> None:
    """Proposed ingest rule, tried here without editing ingest: a near duplicate with the
    same figures is not merged when the texts name different things or one adds a clause
    (`surprisal.distinct_events`)."""
    from pcm_common.domain.surprisal import distinct_events

    original = ingest._near_duplicate

    async def near_duplicate(tenant: str, item: Any, vec: Any, figures: Any) -> Any:
        twin = await original(tenant, item, vec, figures)
        if twin is not None and distinct_events(str(twin.payload.get("text", "")), item.text):
            return None
        return twin

    ingest._near_duplicate = near_duplicate


async def run_offline(
    data: dict[str, Any],
    judge: str,
    k: int,
    use_pool: bool = False,
    strict_merge: bool = False,
    store: Path | None = None,
    rejudge: bool = False,
) -> dict[str, Replay]:
    from redis.asyncio import Redis

    from pcm_common.runtime.config import PcmSettings
    from pcm_common.runtime.resources import Resources
    from pcm_ingest.schemas import MemoryIn
    from pcm_ingest.service import IngestService
    from pcm_ingest.settings import IngestSettings
    from pcm_recall import flags as flag_rules
    from pcm_recall.candidates import visibility
    from pcm_recall.schemas import RecallIn
    from pcm_recall.service import RecallService
    from pcm_recall.settings import RecallSettings
    from pcm_sweeper.judging import Judging
    from pcm_sweeper.settings import SweeperSettings

    redis = Redis.from_url(OFFLINE_REDIS)
    await redis.flushdb()
    await redis.aclose()
    # `store`: keep the stored and judged shard there and reuse it on the next run (the
    # ingest and judging take most of the time; flag rules can then be iterated quickly).
    tmp = store if store is not None else Path(tempfile.mkdtemp(prefix="pcm-outliers-"))
    tmp.mkdir(parents=True, exist_ok=True)
    saved = tmp / "replay.json"
    reuse = store is not None and saved.exists()
    settings = PcmSettings(redis_url=OFFLINE_REDIS, qdrant_path=tmp / "qdrant")
    res = Resources(settings)
    ingest = IngestService(res, IngestSettings(redis_url=OFFLINE_REDIS))
    if strict_merge:
        _strict_near_duplicates(ingest)
    rs = RecallSettings()
    # The sweeper's own settings (a variant's PCM_SURPRISAL_* and PCM_SUPERSESSION apply, as
    # in the HTTP replay), with the judge asked for and no grace before a memory is judged.
    judge_cfg = SweeperSettings(
        redis_url=OFFLINE_REDIS, surprisal_judge=judge, surprisal_sweep_grace_s=-1e9
    )
    judging = Judging(res, judge_cfg)
    replays: dict[str, Replay] = defaultdict(Replay)
    try:
        await res.vectors.ensure_collection()
        by_persona: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for m in data["memories"]:
            by_persona[m["persona"]].append(m)
        kept: dict[str, dict[str, dict[str, str]]] = json.loads(saved.read_text()) if reuse else {}
        for persona, mems in by_persona.items():
            tenant = f"outliers-{persona}"
            rep = replays[persona]
            if reuse:
                rep.ids, rep.status = kept[persona]["ids"], kept[persona]["status"]
                if rejudge:  # judging rules changed: judge every memory again, in order
                    points, _ = await res.vectors.scroll(tenant, limit=10_000, with_vectors=True)
                    points.sort(key=lambda p: float(p.payload.get("created_ts") or 0.0))
                    for p in points:
                        await judging.judge_point(tenant, p)
                else:  # Redis was flushed above: the routine index comes from the families
                    await judging.rebuild_routines(tenant)
            else:
                # One write per memory, in time order, as a client logging its day would:
                # a batch would also fold in-batch duplicates without recording their dates.
                for m in mems:
                    item = MemoryIn(text=m["text"], created_at=_ts(m["created_at"]))
                    (r,) = await ingest.store(tenant, [item])
                    assert r.id is not None  # explicit stores are never skipped
                    rep.ids[m["memory_id"]] = r.id
                    rep.status[m["memory_id"]] = r.status
                await judging.sweep(tenant, _ts(mems[-1]["created_at"]))
                kept[persona] = {"ids": rep.ids, "status": rep.status}
            points, _ = await res.vectors.scroll(tenant, limit=10_000)
            for p in points:
                s = p.payload.get("surprisal") or {}
                if s.get("judged_at"):
                    rep.judged[p.id] = s.get("score")
                rep.payloads[p.id] = p.payload
        if store is not None and not reuse:
            saved.write_text(json.dumps(kept))
        recall = RecallService(res, rs)
        for q in data["questions"]:
            tenant = f"outliers-{q['persona']}"
            rep = replays[q["persona"]]
            now = _ts(q["asked_at"])
            req = RecallIn(query=q["text"], now=now, k=k)
            out, _ = await recall.recall(tenant, req)
            ranked = [c.memory_id for c in out.situational_context]
            flags = out.anomaly_flags  # as the service computes them (HTTP's flags)
            rep.flag_ms.append(float(out.timings_ms.get("flags", 0.0)))
            if use_pool:  # legacy: flags beside the service, pool from a dense search
                vis = visibility(req, False)
                qvec = await res.embedder.embed_query(q["text"])
                hits = await res.vectors.search(tenant, qvec, limit=max(50, 2 * k), flt=vis)
                pool = [h.id for h in hits if h.id not in set(ranked)]
                t0 = time.perf_counter()
                payloads = {p.id: p.payload for p in await res.vectors.get(tenant, ranked + pool)}
                flags = await flag_rules.compute(
                    res.vectors, res.routines, tenant, ranked, payloads, now, vis, pool_ids=pool
                )
                rep.flag_ms[-1] = (time.perf_counter() - t0) * 1000
            rep.answers[q["question_id"]] = {
                "anomaly_flags": [f.model_dump(mode="json") for f in flags],
                "situational_context": [{"memory_id": i} for i in ranked],
                "episode_context": [{"memory_id": c.memory_id} for c in out.episode_context],
            }
    finally:
        await res.aclose()
        if store is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return replays


# ---- HTTP: a real all-in-one server ----------------------------------------------------


async def run_http(
    data: dict[str, Any], args: argparse.Namespace, variant_env: dict[str, str] | None = None
) -> dict[str, Replay]:
    from bench.common import as_json, base_env, client, pcm_server, settle

    personas = sorted({m["persona"] for m in data["memories"]})
    keys = {f"key-{p}": f"outliers-{p}" for p in personas}
    # `--judge` wins over a variant's PCM_SURPRISAL_JUDGE, as in the offline replay.
    env = {**base_env(args), **(variant_env or {}), "PCM_SURPRISAL_JUDGE": args.judge}
    replays: dict[str, Replay] = defaultdict(Replay)
    async with pcm_server(env, keys, inline=args.inline_server) as url:
        for p in personas:
            mems = [m for m in data["memories"] if m["persona"] == p]
            async with client(url, f"key-{p}") as c:
                for m in mems:
                    r = await c.store(m["text"], created_at=m["created_at"])
                    replays[p].ids[m["memory_id"]] = cast(str, r.id)  # none declined
                    replays[p].status[m["memory_id"]] = r.status
        for p in personas:
            async with client(url, f"key-{p}") as c:
                await settle(c)
                for sid in set(replays[p].ids.values()):
                    rec = as_json(await c.get(sid))
                    s = rec.get("surprisal") or {}
                    if s.get("judged_at"):
                        replays[p].judged[sid] = s.get("score")
        for q in data["questions"]:
            async with client(url, f"key-{q['persona']}") as c:
                t0 = time.perf_counter()
                out = as_json(await c.recall(q["text"], now=q["asked_at"], k=args.k))
                ms = out.get("timings_ms", {}).get("flags")
                replays[q["persona"]].flag_ms.append(
                    float(ms) if ms is not None else (time.perf_counter() - t0) * 1000
                )
                replays[q["persona"]].answers[q["question_id"]] = out
    return replays


def _print(name: str, r: dict[str, Any]) -> None:
    f = r["flagged"]
    print(f"\n== {name}: {r['questions']} questions")
    for k in (*KINDS, "stopped"):
        if f[k]["of"]:
            print(f"  {k:<9} flagged {f[k]['hit']}/{f[k]['of']} ({f[k]['share']:.1%})")
    ic = r["outlier_in_context"]
    if ic["of"]:
        print(f"  outlier in recalled context {ic['hit']}/{ic['of']} ({ic['share']:.1%})")
    j = r["judged"]
    print(
        f"  false flags: {j['normal_flagged']}/{j['normal']} judged normal memories "
        f"({j['false_flag_rate']:.2%}); {r['false_flags_per_question']:.3f} per question "
        f"({r['questions_with_false_flag']} questions with one)"
    )
    print(
        f"  flags of other routines: {r['flags_of_other_routines_per_question']:.3f} per "
        f"question; flags of another persona's memory: {r['flags_of_other_personas']}"
    )
    print(
        f"  continuing routines flagged stopped: {r['continuing_routines_flagged_stopped']} "
        f"(other routines not labelled stopped: "
        f"{r['stopped_flags_on_other_unlabelled_routines']}, their data may just end earlier)"
    )
    print(
        "  detector on judged outliers: "
        + ", ".join(f"{k} {v['hit']}/{v['of']}" for k, v in j["outliers"].items())
    )
    print(f"  flags compute: median {r['flags_ms_median']} ms, p95 {r['flags_ms_p95']} ms")


def _datasets(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The data sets asked for, by name: `--file` paths (named by their file name) or the
    shared dev sets (`--data`)."""
    if args.file:
        return {f.name.removesuffix(".json"): json.loads(f.read_text()) for f in args.file}
    names = ["plain", "absence"] if args.data == "both" else [args.data]
    return {name: json.loads((DATA_DIR / FILES[name]).read_text()) for name in names}


def _replay(
    args: argparse.Namespace,
    data: dict[str, Any],
    name: str,
    protocol: str,
    env: dict[str, str],
) -> dict[str, Replay]:
    """One replay of `data` under `protocol` and a variant's environment."""
    from bench import routine_replay

    if args.order == "live":
        if not args.offline:
            return asyncio.run(routine_replay.run_http(data, args, protocol, env))
        # The offline replay builds its services in this process: their settings read the
        # variant's environment.
        with environ_restored({**dict(args.env), **env}):
            return asyncio.run(
                routine_replay.run_offline(data, args.judge, args.k, protocol, OFFLINE_REDIS)
            )
    if not args.offline:
        return asyncio.run(run_http(data, args, env))
    with environ_restored({**dict(args.env), **env}):
        return asyncio.run(
            run_offline(
                data,
                args.judge,
                args.k,
                args.pool,
                args.strict_merge,
                args.store / name if args.store else None,
                args.rejudge,
            )
        )


def main(argv: Sequence[str] | None = None, command: str | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m bench.outliers", description=__doc__)
    ap.add_argument("--judge", choices=["local", "llm"], default="local")
    ap.add_argument(
        "--variant-data",
        "--data",
        dest="data",
        default="both",
        choices=["absence", "plain", "both"],
    )
    ap.add_argument(
        "--file",
        action="append",
        type=Path,
        default=[],
        help="a data set in the dev format, instead of --data (repeatable)",
    )
    ap.add_argument(
        "--protocol",
        choices=[*PROTOCOLS, "both"],
        default="both",
        help="personas as tenants, as users of one tenant, or both (live order)",
    )
    ap.add_argument("--order", choices=["live", "stored-first"], default="live")
    ap.add_argument("--offline", action="store_true")
    ap.add_argument(
        "--strict-merge",
        action="store_true",
        help="offline: ingest with the proposed near-duplicate rule (distinct_events)",
    )
    ap.add_argument(
        "--pool",
        action="store_true",
        help="offline: also give flags the candidates recall dropped under its floor",
    )
    ap.add_argument(
        "--store",
        type=Path,
        default=None,
        help="offline: keep the stored, judged shards under this folder and reuse them",
    )
    ap.add_argument(
        "--rejudge",
        action="store_true",
        help="offline with --store: judge every reused memory again (judging rules changed)",
    )
    ap.add_argument("--k", type=int, default=50)
    add_common_args(ap, "outliers.json")
    # `--variant absence|plain|both` (as the issue wrote it) names the data set; any other
    # `--variant NAME[:KEY=VAL,...]` is a server configuration, as in the other benchmarks.
    raw = list(argv) if argv is not None else None
    if raw is None:
        import sys

        raw = sys.argv[1:]
    raw = [
        "--data"
        if a == "--variant" and i + 1 < len(raw) and raw[i + 1] in ("absence", "plain", "both")
        else a
        for i, a in enumerate(raw)
    ]
    args = ap.parse_args(raw)
    stop_on_sigterm()
    variants = variants_of(args)
    if len({v.name for v in variants}) < len(variants):
        raise SystemExit("--variant names must differ: results are keyed by them")
    if args.offline and args.store and len(variants) > 1:
        raise SystemExit("--store keeps one judged shard: give one --variant with it")
    if args.store and args.order == "live":
        raise SystemExit("--store reuses judged shards: only with --order stored-first")
    datasets = _datasets(args)
    protocols = list(PROTOCOLS) if args.protocol == "both" else [args.protocol]
    if args.order == "stored-first":
        protocols = ["tenants"]
    results: dict[str, Any] = {}
    for variant in variants:
        for name, data in datasets.items():
            for protocol in protocols:
                # Keyed by data set and protocol, and by variant when several are run.
                key = (
                    f"{name}/{protocol}"
                    if len(variants) == 1
                    else f"{variant.name}/{name}/{protocol}"
                )
                t0 = time.perf_counter()
                replays = _replay(args, data, name, protocol, variant.env)
                results[key] = score(data, replays)
                results[key]["seconds"] = round(time.perf_counter() - t0, 1)
                results[key]["variant"] = {"name": variant.name, "env": variant.env}
                results[key]["protocol"] = protocol
                mode = "offline" if args.offline else "http"
                _print(f"{key} ({mode}, {args.order}, judge={args.judge})", results[key])
    out = {
        "command": command or "uv run python -m bench.outliers " + " ".join(raw),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_facts(),
        "judge": args.judge,
        "mode": "offline" if args.offline else "http",
        "order": args.order,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
