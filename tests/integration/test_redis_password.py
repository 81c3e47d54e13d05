"""The dev overlay's Redis authentication, run for real: redis-server started with the
configuration the StatefulSet pipes into it (deploy/k8s/overlays/dev/stores/redis.yaml),
its readiness probe, and PCM's bus on the REDIS_URL the Deployments compose from
REDIS_PASSWORD. No service code reads a password of its own: the URL carries it."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from redis.asyncio import Redis
from redis.exceptions import AuthenticationError, ResponseError

from pcm_cli.testing import free_port
from pcm_common.messaging.bus import Bus, pipeline_status
from pcm_common.messaging.events import MemoryWritten
from pcm_common.runtime.config import PcmSettings

DEV = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "overlays" / "dev"


def _redis_container() -> dict[str, object]:
    docs = yaml.safe_load_all((DEV / "stores" / "redis.yaml").read_text())
    sts = next(d for d in docs if d["kind"] == "StatefulSet")
    container: dict[str, object] = sts["spec"]["template"]["spec"]["containers"][0]
    return container


def _config(password: str, port: int, folder: Path) -> str:
    """The manifest's here-document, with the shell's expansion done and this machine's
    port and folder in place of the pod's."""
    script = "\n".join(_redis_container()["args"])  # type: ignore[arg-type]
    body = script.split("<<EOF", 1)[1].split("\nEOF", 1)[0]
    lines = [line for line in body.strip().splitlines() if not line.startswith("dir ")]
    lines = [line.replace("$REDIS_PASSWORD", password) for line in lines]
    return "\n".join([*lines, f"dir {folder}", f"port {port}", "bind 127.0.0.1", 'save ""'])


def _url(password: str, port: int) -> str:
    """REDIS_URL as the dev overlay's patch writes it, for this machine's port."""
    kustomization = (DEV / "kustomization.yaml").read_text()
    template = next(
        line.split("value:", 1)[1].strip()
        for line in kustomization.splitlines()
        if "value: redis://" in line
    )
    return template.replace("$(REDIS_PASSWORD)", password).replace(
        "redis:6379", f"127.0.0.1:{port}"
    )


@pytest.fixture
def locked_redis(tmp_path: Path) -> Iterator[tuple[int, str]]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    password, port = secrets.token_hex(16), free_port()
    proc = subprocess.Popen(
        ["redis-server", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    assert proc.stdin is not None
    proc.stdin.write(_config(password, port, tmp_path))
    proc.stdin.close()
    try:
        for _ in range(100):
            done = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True)
            if done.stdout.strip() in (b"PONG", b"NOAUTH Authentication required."):
                break
            time.sleep(0.05)
        yield port, password
    finally:
        proc.terminate()
        proc.wait(10)


def _probe(port: int, env: dict[str, str]) -> int:
    """The StatefulSet's readiness probe, pointed at this machine's port."""
    probe = _redis_container()["readinessProbe"]["exec"]["command"]  # type: ignore[index]
    command = [part.replace("redis-cli", f"redis-cli -p {port}") for part in probe]
    return subprocess.run(command, env=env, capture_output=True).returncode


def test_the_probe_passes_only_with_the_password(locked_redis: tuple[int, str]) -> None:
    port, password = locked_redis
    path = {"PATH": "/usr/bin:/bin:/usr/local/bin"}
    assert _probe(port, path) != 0
    assert _probe(port, {**path, "REDISCLI_AUTH": "wrong"}) != 0
    assert _probe(port, {**path, "REDISCLI_AUTH": password}) == 0


async def test_clients_without_the_password_are_refused(locked_redis: tuple[int, str]) -> None:
    port, _ = locked_redis
    for url in (f"redis://127.0.0.1:{port}/0", f"redis://:wrong@127.0.0.1:{port}/0"):
        client = Redis.from_url(url)
        with pytest.raises((AuthenticationError, ResponseError)):
            await client.xadd("pcm.memory.written", {"data": "{}"})
        await client.aclose()


async def test_the_pipeline_runs_on_the_composed_url(locked_redis: tuple[int, str]) -> None:
    port, password = locked_redis
    settings = PcmSettings().model_copy(
        update={"redis_url": _url(password, port), "consumer_name": "t"}
    )
    bus = Bus(settings)
    seen: list[str] = []

    async def handle(event: MemoryWritten) -> None:
        seen.append(event.memory_id)

    bus.consume("auth.stream", "auth-group", MemoryWritten, handle)
    await bus.start()  # creates the pipeline's consumer groups: authenticated
    try:
        event = MemoryWritten(
            tenant="t", memory_id="m1", text="x", created_at="2024-01-01T00:00:00Z"
        )
        await bus.publish("auth.stream", event)
        await bus.publish("pcm.memory.written", event)
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.05)
        assert seen == ["m1"]
        # The same numbers /v1/pipeline and the autoscalers read.
        status = await pipeline_status(bus.redis)
        assert status["streams"]["pcm.memory.written"]["groups"]["graph-extractor"]["lag"] == 1
    finally:
        await bus.stop()
