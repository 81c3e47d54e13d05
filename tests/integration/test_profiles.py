"""Profiles (issue 36 item 6): `pcm dev --profile starter` and `--profile local-performance`
start as child processes and answer a store and a recall over HTTP (real Redis, Qdrant Edge
on disk, the graph server); an unknown profile and `scale` without its servers stop the
command with a clear message; explicit settings beat a profile in every service's class."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from pcm_cli.testing import server_process, settle
from pcm_client import NO_RETRY, AsyncPcmClient
from pcm_common.runtime.config import PcmSettings
from pcm_common.runtime.profiles import PROFILES
from pcm_graph_extractor.settings import GraphExtractorSettings
from pcm_ingest.settings import IngestSettings
from pcm_recall.settings import RecallSettings
from pcm_sweeper.settings import SweeperSettings
from tests.conftest import TEST_REDIS, service_env

SERVERS = ("REDIS_URL", "QDRANT_URL", "NEO4J_URI", "PCM_REDIS_URL", "PCM_QDRANT_URL")
SERVERS_NAMED = {
    "REDIS_URL": "redis://redis.internal:6379/0",
    "QDRANT_URL": "http://qdrant.internal:6333",
    "NEO4J_URI": "bolt://graph.internal:7687",
}


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["starter", "local-performance"])
async def test_pcm_dev_profile_stores_and_recalls(profile: str, tmp_path: Path) -> None:
    # Database 9: the session server uses 15, other child-process tests 10-14.
    env = {**service_env(tmp_path, f"{TEST_REDIS}/9"), "PCM_PROFILE": ""}
    log = tmp_path / "server.log"
    async with server_process(env, ("dev", "--profile", profile), output=log) as url:
        async with AsyncPcmClient(url, "key-a", timeout=60, retry=NO_RETRY) as c:
            fact = f"The {profile} profile's build cache lives on the NAS in rack 7."
            r = await c.store(fact)
            assert r.status == "created" and r.id, r
            await settle(c)
            out = await c.recall("Where does the build cache live?")
            assert out.situational_context[0].memory_id == r.id
            assert "rack 7" in out.prompt
    assert f"profile {profile}" in log.read_text()  # the banner names the profile in force


def _pcm(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pcm_cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _env_without_servers(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SERVERS and k != "PCM_PROFILE"}
    env["PCM_QDRANT_PATH"] = str(tmp_path / "qdrant")
    return env


async def test_scale_without_servers_and_unknown_profile_exit_clearly(tmp_path: Path) -> None:
    env = _env_without_servers(tmp_path)
    scale = await asyncio.to_thread(_pcm, ["dev", "--profile", "scale", "--port", "1"], env)
    assert scale.returncode == 2, scale.stdout + scale.stderr
    assert "'scale' runs on external servers" in scale.stderr
    assert "REDIS_URL, QDRANT_URL, NEO4J_URI" in scale.stderr
    assert "Traceback" not in scale.stderr

    # Naming two of the three still names the one missing.
    partial = {**env, "REDIS_URL": SERVERS_NAMED["REDIS_URL"], "PCM_PROFILE": "scale"}
    partial["QDRANT_URL"] = SERVERS_NAMED["QDRANT_URL"]
    served = await asyncio.to_thread(_pcm, ["serve", "recall", "--port", "1"], partial)
    assert served.returncode == 2 and "set NEO4J_URI " in served.stderr, served.stderr

    for args, extra in (
        (["dev", "--profile", "turbo", "--port", "1"], {}),
        (["serve", "ingest", "--port", "1"], {"PCM_PROFILE": "turbo"}),
    ):
        bad = await asyncio.to_thread(_pcm, args, {**env, **extra})
        assert bad.returncode == 2, bad.stdout + bad.stderr
        assert "unknown profile 'turbo': one of starter, local-performance, scale" in bad.stderr
    # Nothing was started: no Qdrant Edge shard was created.
    assert not (tmp_path / "qdrant").exists()


def test_profile_fills_each_service_and_explicit_settings_win(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in SERVERS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PCM_PROFILE", "starter")
    assert IngestSettings().firewall_workers == 0
    assert SweeperSettings().batch_readers == 1
    assert GraphExtractorSettings().batch_readers == 1
    assert PcmSettings().qdrant_payload_cache == 2_000
    # An explicit variable, or an argument, beats the profile; the rest stay the profile's.
    monkeypatch.setenv("PCM_FIREWALL_WORKERS", "3")
    assert IngestSettings().firewall_workers == 3
    assert IngestSettings(firewall_workers=5).firewall_workers == 5
    assert IngestSettings().qdrant_payload_cache == 2_000
    # Without a profile every field keeps its own default.
    monkeypatch.setenv("PCM_PROFILE", "")
    assert IngestSettings().qdrant_payload_cache == 10_000
    assert SweeperSettings().batch_readers == 2
    # An argument's profile beats PCM_PROFILE, names in any case.
    monkeypatch.setenv("PCM_PROFILE", "starter")
    assert RecallSettings(profile="Local-Performance").consumer_concurrency == 4


def test_scale_with_servers_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SERVERS:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValidationError, match="runs on external servers"):
        SweeperSettings(profile="scale")
    for name, value in SERVERS_NAMED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PCM_PROFILE", "scale")
    sweeper = SweeperSettings()
    assert (sweeper.surprisal_judge, sweeper.extractor, sweeper.batch_max) == ("llm", "llm", 128)
    assert sweeper.qdrant_url == SERVERS_NAMED["QDRANT_URL"]
    monkeypatch.setenv("PCM_SURPRISAL_JUDGE", "local")
    assert SweeperSettings().surprisal_judge == "local"
    # An empty server address does not count as named.
    monkeypatch.setenv("QDRANT_URL", "")
    with pytest.raises(ValidationError, match="set QDRANT_URL"):
        PcmSettings()


def test_profiles_name_only_real_settings() -> None:
    # A typo in a profile would silently set nothing: every entry is a field of some class.
    known: set[str] = set()
    for cls in (IngestSettings, RecallSettings, SweeperSettings, GraphExtractorSettings):
        known |= set(cls.model_fields)
    for name, values in PROFILES.items():
        assert set(values) <= known, (name, set(values) - known)
