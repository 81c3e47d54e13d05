"""A Redis Cluster of three primaries on loopback for tests, started with Debian's
`redis-server` and joined with `redis-cli --cluster create` (no replicas).

Ports: `PCM_TEST_CLUSTER_PORTS` ("7101,7102,7103"), else three free ones below 45000
whose port + 10000 is free too: each node's cluster bus listens there. The nodes run in a
temporary folder and are shut down with the session. A cluster already answering on the
given ports is used as it is.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from redis.asyncio import Redis

NODES = 3


def cluster_ports() -> list[int]:
    given = os.environ.get("PCM_TEST_CLUSTER_PORTS", "")
    if given:
        ports = [int(p) for p in given.split(",") if p.strip()]
        if len(ports) != NODES:
            raise ValueError(f"PCM_TEST_CLUSTER_PORTS needs {NODES} ports, got {given!r}")
        return ports
    # Each node's cluster bus takes its port + 10000, which must be free and a valid port
    # too: an ephemeral port from the OS (often above 55535) would not do.
    ports: list[int] = []
    rnd = random.Random()
    while len(ports) < NODES:
        port = rnd.randrange(20000, 45000)
        if port not in ports and _bindable(port) and _bindable(port + 10000):
            ports.append(port)
    return ports


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def _state(port: int) -> str:
    client = Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
    try:
        info = await client.cluster("INFO")  # parsed into a dict by redis-py
        return str(info.get("cluster_state", "unknown"))
    except Exception:
        return "down"
    finally:
        await client.aclose()


async def _ready(ports: list[int], tries: int = 1200) -> bool:
    for _ in range(tries):
        states = [await _state(p) for p in ports]
        if all(s == "ok" for s in states):
            return True
        await asyncio.sleep(0.05)
    return False


@asynccontextmanager
async def loopback_cluster(folder: Path) -> AsyncIterator[str]:
    """Yields the `redis+cluster://` URL of a running three-primary cluster."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.skip("redis-server/redis-cli are not installed (apt-get install redis-server)")
    ports = cluster_ports()
    url = f"redis+cluster://127.0.0.1:{ports[0]}"
    if await _ready(ports, tries=1):
        yield url
        return
    procs: list[asyncio.subprocess.Process] = []
    try:
        for port in ports:
            node = folder / str(port)
            node.mkdir(parents=True, exist_ok=True)
            procs.append(
                await asyncio.create_subprocess_exec(
                    "redis-server",
                    "--port", str(port),
                    "--bind", "127.0.0.1",
                    "--dir", str(node),
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "5000",
                    "--appendonly", "no",
                    "--save", "",
                    stdout=asyncio.subprocess.DEVNULL,
                )
            )  # fmt: skip
        for port in ports:
            for _ in range(100):
                if await _state(port) != "down":
                    break
                await asyncio.sleep(0.05)
        create = await asyncio.create_subprocess_exec(
            "redis-cli", "--cluster", "create",
            *(f"127.0.0.1:{p}" for p in ports),
            "--cluster-replicas", "0", "--cluster-yes",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        try:
            # It waits for the nodes to meet over their cluster bus, forever if they cannot.
            out, _ = await asyncio.wait_for(create.communicate(), 90)
        except TimeoutError:
            create.kill()
            raise RuntimeError(f"redis-cli --cluster create did not finish on {ports}") from None
        if create.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {out.decode()[-2000:]}")
        if not await _ready(ports):
            raise RuntimeError(f"the loopback cluster on {ports} did not reach cluster_state:ok")
        yield url
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
