"""How a service plugs into a process: routes, consumers, readiness checks, start/stop.

`pcm serve <name>` builds an app from one component; `pcm dev` from all four, sharing one
set of adapters (an embedded Qdrant Edge shard can be opened by one process only).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from pcm_common.access.admin_keys import admin_router
from pcm_common.runtime import gc_tuning, tracing
from pcm_common.runtime.http import ANY_ROUTE, ReadinessCheck, install, ops_router
from pcm_common.runtime.resources import Resources
from pcm_common.runtime.telemetry import configure_logging, get_logger, route_library_logs
from pcm_common.stores.redis.retag import retag_legacy_keys

log = get_logger("service")


class Component:
    """Base for a service's wiring; subclasses override what they use."""

    name = "component"

    def __init__(self, res: Resources) -> None:
        self.res = res

    def attach(self, app: FastAPI) -> None:
        """Add routes and app state."""

    def consume(self) -> None:
        """Register stream consumers on `self.res.bus`."""

    def checks(self) -> dict[str, ReadinessCheck]:
        return {}

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def redis_check(res: Resources) -> dict[str, Any]:
    return {"ok": bool(await res.redis.ping())}


def create_app(res: Resources, components: Sequence[Component], title: str) -> FastAPI:
    configure_logging(res.settings.log_level, res.settings.log_json)
    tracing.configure_tracing(res.settings, "+".join(c.name for c in components))
    checks: dict[str, ReadinessCheck] = {"redis": lambda: redis_check(res)}
    for c in components:
        checks.update(c.checks())

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Keys written before hash tags move to their tagged names before anything reads.
        await retag_legacy_keys(res.redis)
        for c in components:
            await c.start()
        for c in components:
            c.consume()
        await res.bus.start()
        # uvicorn configured its loggers after the app was built, the broker on start.
        route_library_logs(res.settings.log_level)
        gc_tuning.tune(freeze=res.settings.gc_freeze, gen0_threshold=res.settings.gc_gen0_threshold)
        log.info("service_started", services=[c.name for c in components])
        try:
            yield
        finally:
            # Stop reading first and let in-flight handlers finish; what is unfinished stays
            # pending in Redis for another replica.
            await res.bus.stop()
            for c in reversed(components):
                await c.stop()
            await res.aclose()
            tracing.flush()
            log.info("service_stopped", services=[c.name for c in components])

    app = FastAPI(title=title, version="0.1.0", lifespan=lifespan, responses=ANY_ROUTE)
    app.state.resources = res
    install(app, "+".join(c.name for c in components))
    app.include_router(ops_router(checks))
    app.include_router(admin_router())  # key administration: any service answers it
    for c in components:
        c.attach(app)
    return app
