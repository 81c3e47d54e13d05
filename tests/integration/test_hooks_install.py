"""`pcm hooks install --scope user|project|local`, and its check of the server and key
before writing: a wrong key or an unreachable URL fails the install and writes nothing.
The installer's own blocking calls run in a worker thread (the server runs in the test's
event loop)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from pcm_agent.hooks_install import INSTALLED
from pcm_cli.main import app
from tests.conftest import free_port


async def install(*args: str, url: str, key: str = "key-a") -> Result:
    env = {"PCM_URL": url, "PCM_API_KEY": key}
    runner = CliRunner()
    return await asyncio.to_thread(runner.invoke, app, ["hooks", "install", *args], env=env)


async def test_a_wrong_key_or_url_writes_nothing(pcm_url: str, tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    where = ("--settings", str(settings))

    wrong = await install(*where, url=pcm_url, key="not-a-key")
    assert wrong.exit_code == 1 and "401 unknown_api_key" in wrong.stderr
    assert "nothing written" in wrong.stderr and not settings.exists()

    dead = f"http://127.0.0.1:{free_port()}"
    unreachable = await install(*where, url=dead)
    assert unreachable.exit_code == 1 and f"cannot reach PCM at {dead}" in unreachable.stderr
    assert not settings.exists()

    good = await install(*where, url=pcm_url)
    assert good.exit_code == 0, good.stderr
    assert set(json.loads(settings.read_text())["hooks"]) == set(INSTALLED)

    # Without the check the file is written whatever the server says.
    other = tmp_path / "unchecked.json"
    forced = await install("--settings", str(other), "--no-check", url=dead)
    assert forced.exit_code == 0 and other.exists()


async def test_each_scope_has_its_settings_file(
    pcm_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    repo.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(repo)
    expected = {
        "user": home / ".claude" / "settings.json",
        "project": repo / ".claude" / "settings.json",
        "local": repo / ".claude" / "settings.local.json",
    }
    for scope, path in expected.items():
        result = await install("--scope", scope, url=pcm_url)
        assert result.exit_code == 0, result.stderr
        assert str(path) in result.stdout
        assert set(json.loads(path.read_text())["hooks"]) == set(INSTALLED)
    assert sorted(p.name for p in (repo / ".claude").iterdir()) == [
        "settings.json",
        "settings.local.json",
    ]
    bad = await install("--scope", "team", url=pcm_url)
    assert bad.exit_code == 2  # a usage error: nothing is written
