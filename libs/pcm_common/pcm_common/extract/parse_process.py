"""spaCy parses of memory texts in a child process, handed back as `Doc`s.

Everything in one PCM process shares one interpreter lock, and in the all-in-one server the
lock, not the cores, capped ingest: a spaCy parse runs mostly in Python and NumPy holding
it, while the other core waited. Parsing in a child process lets it run next to the
embedding, the vector store and the event loop; the docs come back as a `DocBin` with every
token attribute the judge and the extractor read (same text, lemmas, tags, morphology,
heads, dependencies, entities: checked equal to an in-process parse). Costs:
docs/decisions/0032-spacy-parse-process.md.

`PCM_PARSE_PROCESS=false` parses in the calling process instead (one process per core
already, or no room for the child's memory). A child that dies is replaced on the next
call; the call that saw it die parses in process.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from pcm_common.runtime.priority import lower_worker_priority
from pcm_common.runtime.telemetry import get_logger

log = get_logger("parse")

_PARENT_CHECK_S = 1.0
_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def enabled() -> bool:
    """Whether parses go to the child process (`PCM_PARSE_PROCESS`, on by default)."""
    return os.environ.get("PCM_PARSE_PROCESS", "true").strip().lower() not in (
        "0",
        "false",
        "no",
        "off",
    )


def _executor() -> ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            # Spawned, not forked: this process runs threads (ONNX Runtime, Qdrant Edge,
            # worker threads) whose locks a fork would copy in whatever state they are.
            _pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_watch_parent,
                initargs=(os.getpid(),),
            )
        return _pool


def _drop(pool: ProcessPoolExecutor) -> None:
    global _pool
    with _pool_lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


def _watch_parent(parent: int) -> None:
    """Runs in the child: exit once the parent is gone. A parent killed outright (SIGKILL,
    an OOM kill) left its child waiting on the call queue for ever, holding its ~150 MB.
    Its priority is lowered: parses are background work (`runtime.priority`)."""
    lower_worker_priority()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _parse_in_child(texts: list[str], batch_size: int) -> bytes:
    """Runs in the child: parse, and pack the docs with every token attribute."""
    from spacy.tokens import DocBin

    from pcm_common.extract.parsing import load_pipeline

    packed = DocBin(store_user_data=False)
    for doc in load_pipeline().pipe(texts, batch_size=batch_size):
        packed.add(doc)
    return bytes(packed.to_bytes())


def parse(texts: Sequence[str], batch_size: int = 256) -> list[Any]:
    """The parses of `texts`, in order, by this process's pipeline or its child's (the
    same model: the same parses). Blocking: call it from a worker thread."""
    from pcm_common.extract.parsing import load_pipeline

    nlp = load_pipeline()  # docs are unpacked into this process's vocabulary
    todo = list(texts)
    if not todo:
        return []
    if enabled():
        pool = _executor()
        try:
            raw = pool.submit(_parse_in_child, todo, batch_size).result()
        except Exception as exc:  # the child died or could not start: parse here
            log.warning("parse_process_failed", error=repr(exc)[:300])
            _drop(pool)
        else:
            from spacy.tokens import DocBin

            return list(DocBin().from_bytes(raw).get_docs(nlp.vocab))
    return list(nlp.pipe(todo, batch_size=batch_size))


def warmup() -> None:
    """Start the child and load its pipeline now, not on the first batch (~2 s)."""
    if enabled():
        parse(["warmup"])


def shutdown() -> None:
    """Stop the child, if one was started, and wait for it (at service shutdown): a pool
    left to the interpreter's exit left its queues' semaphores behind, which the resource
    tracker then reported as leaked."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)
