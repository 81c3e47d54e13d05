"""Structured logs (structlog, JSON) and Prometheus metrics shared by every service."""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar

import structlog
from prometheus_client import Counter, Gauge, Histogram
from structlog.typing import FilteringBoundLogger

REQUEST_LATENCY = Histogram(
    "pcm_http_request_seconds",
    "HTTP request latency",
    ["service", "route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
EVENTS_CONSUMED = Counter(
    "pcm_events_consumed_total", "Stream entries processed", ["stream", "group"]
)
EVENTS_FAILED = Counter(
    "pcm_events_failed_total", "Stream entry processing failures", ["stream", "group"]
)
EVENTS_DEAD = Counter(
    "pcm_events_dead_lettered_total", "Entries sent to pcm.dlq", ["stream", "group"]
)
STREAM_LAG = Gauge(
    "pcm_stream_pending", "Entries not yet processed by a consumer group", ["stream", "group"]
)
EVENT_SECONDS = Histogram(
    "pcm_event_seconds",
    "Event handler duration",
    ["stream", "group"],
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30),
)
RECALL_STAGE_SECONDS = Histogram(
    "pcm_recall_stage_seconds",
    "Recall time per stage",
    ["stage"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)
RERANK_OUTCOMES = Counter(
    "pcm_rerank_total",
    "Recalls by reranking outcome",
    ["outcome"],  # reranked|skipped|failed|none
)
FAMILY_SEARCHES = Counter(
    "pcm_family_searches_total",
    "Surprisal family searches: `keyed` by calendar keys, `ranged` asked again exactly",
    ["search"],  # keyed|ranged
)
MEMORIES_WRITTEN = Counter("pcm_memories_written_total", "Ingest results", ["status"])
# Calls of the embedded vector engine (Qdrant Edge) by operation and by who made them: a
# consumer group, or `http` for requests. Those calls hold the interpreter lock for their
# whole duration (docs/decisions/0005-edge-dense-mirror.md), so this is time the rest of the
# process waited: where an ingest's store time goes, per stage, from /metrics alone.
STORE_SECONDS = Counter(
    "pcm_store_engine_seconds_total",
    "Seconds in embedded vector engine calls",
    ["op", "caller"],
)
STORE_CALLS = Counter(
    "pcm_store_engine_calls_total", "Embedded vector engine calls", ["op", "caller"]
)
MIRROR_POINTS = Gauge(
    "pcm_store_mirror_points", "Points in the embedded adapter's dense mirror (all tenants)"
)
# Who the current task works for; consumers set their group (`stream_batches`).
CALLER: ContextVar[str] = ContextVar("pcm_caller", default="http")

JOB_RUNS = Counter(
    "pcm_job_runs_total",
    "Scheduled job runs, one per tenant a tick ran it for",
    # Not `job`: Prometheus sets that target label on every scraped series.
    ["job_name", "outcome"],  # ok|failed|locked (another replica holds the tenant's lock)
)

_configured = False


def _shared_processors() -> list[structlog.types.Processor]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


def configure_logging(level: str = "INFO", json: bool = True) -> None:
    """Idempotent: the all-in-one process configures once for every service. structlog's
    own lines and every library's stdlib logging (uvicorn, litellm, neo4j, httpx,
    faststream...) leave as one JSON stream on stderr, with the request id bound."""
    global _configured
    if _configured:
        return
    _configured = True
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *_shared_processors()],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level.upper())
    route_library_logs(level)
    structlog.configure(
        processors=[*_shared_processors(), structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def route_library_logs(level: str) -> None:
    """Libraries that installed handlers of their own (uvicorn's config, litellm, the
    broker) would print plain text beside the JSON: their loggers lose those handlers and
    pass records up to the root's JSON handler. Run again once the server and the broker
    have started, since they add theirs late."""
    for logger in list(logging.root.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger) and logger.handlers:
            logger.handlers = []
            logger.propagate = True
    # The broker's own INFO chatter (task supervision, per-message access lines) would
    # drown the structured events; it still shows when running at DEBUG. uvicorn's access
    # lines carry the query string: `pcm_common.runtime.request_context` writes its own.
    quiet_broker_loggers(level)
    logging.getLogger("uvicorn.access").disabled = True


def quiet_broker_loggers(level: str) -> None:
    """FastStream's own loggers (made when the broker starts, with their own levels and
    handlers) to WARNING unless running at DEBUG: its subscriber supervisor logged an INFO
    line per task at shutdown even with PCM_LOG_LEVEL=WARNING."""
    if level.upper() == "DEBUG":
        return
    logging.getLogger("faststream").setLevel(logging.WARNING)
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("faststream"):
            logging.getLogger(name).setLevel(logging.WARNING)


def get_logger(service: str) -> FilteringBoundLogger:
    # The wrapper class `configure_logging` sets (and structlog's default) is a filtering
    # bound logger; structlog's `get_logger` is typed Any for any configuration.
    logger: FilteringBoundLogger = structlog.get_logger(service=service)
    return logger


FEEDBACK_SIGNALS = Counter(
    "pcm_feedback_signals_total",
    "Retrieval feedback signals newly set",
    ["signal"],  # helpful|not_helpful|missed|wrong
)
RECONSOLIDATION_REQUESTS = Counter(
    "pcm_feedback_reconsolidation_requests_total",
    "Memories marked wrong by feedback, whose rewrite was requested",
)


def describe_error(exc: BaseException, limit: int = 300) -> str:
    """An exception for a log line: its repr, and the code and message a driver's error
    keeps outside its args (the neo4j driver's `ClientError()` says nothing else)."""
    parts = [repr(exc)]
    for attr in ("code", "message"):
        value = getattr(exc, attr, None)
        if value and str(value) not in parts[0]:
            parts.append(f"{attr}={value}")
    return " ".join(parts)[:limit]
