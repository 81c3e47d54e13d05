"""The `pcm` client commands end to end against the real all-in-one server: typer's
CliRunner in a worker thread (the server runs in the test's event loop)."""

from __future__ import annotations

import asyncio
import json
import uuid

from typer.testing import CliRunner, Result

from pcm_agent.cli_support import EXIT_REFUSED, EXIT_UNREACHABLE
from pcm_cli.main import SERVICES, app
from pcm_client import AsyncPcmClient
from tests.conftest import free_port, settle

RUN = uuid.uuid4().hex[:8]
PROJECT = f"cli-proj-{RUN}"
WORKSPACE = f"cli-ws-{RUN}"


async def pcm(url: str, *args: str, key: str = "key-a", stdin: str | None = None) -> Result:
    runner = CliRunner()
    env = {"PCM_URL": url, "PCM_API_KEY": key}
    return await asyncio.to_thread(runner.invoke, app, list(args), input=stdin, env=env)


def ok(result: Result) -> str:
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    return result.stdout


def test_service_names_match_the_components() -> None:
    from pcm_cli.app import COMPONENTS

    assert tuple(COMPONENTS) == SERVICES


async def test_store_recall_pin_inspect_list_forget(pcm_url: str, pcm_a: AsyncPcmClient) -> None:
    where = ["--project", PROJECT, "--workspace", WORKSPACE]
    fact = "The staging database for Orchard lives on host db-stage-2 in Frankfurt."
    out = ok(await pcm(pcm_url, "store", fact, *where, "--importance", "high"))
    mid, status = out.split()
    assert status == "created" and uuid.UUID(mid)

    # "-" reads the memory from stdin; --scope defaults to the narrowest name given.
    piped = "Orchard's nightly backups are copied to the cold bucket at 02:00 UTC."
    out = ok(await pcm(pcm_url, "store", "-", "--project", PROJECT, stdin=piped + "\n"))
    piped_id = out.split()[0]
    await settle(pcm_a)

    stored = await pcm_a.get(mid)
    assert stored.source == "api" and stored.scope == "project"
    assert stored.project == PROJECT and stored.workspace == WORKSPACE
    assert stored.importance == "high"
    assert (await pcm_a.get(piped_id)).text == piped

    prompt = ok(await pcm(pcm_url, "recall", "Where is Orchard's staging database?", *where))
    assert "[SITUATIONAL CONTEXT]" in prompt and "db-stage-2" in prompt

    whole = json.loads(
        ok(await pcm(pcm_url, "recall", "staging database host", *where, "--json", "--compact"))
    )
    assert mid in {item["memory_id"] for item in whole["situational_context"]}
    assert whole["prompt"].startswith("[") and whole["empty"] is False
    assoc = ok(
        await pcm(pcm_url, "recall", "staging database host", *where, "--mode", "associative")
    )
    assert "[ASSOCIATIONS]" in assoc and "db-stage-2" in assoc

    assert ok(await pcm(pcm_url, "pin", mid)).strip() == f"pinned {mid}"
    inspected = json.loads(ok(await pcm(pcm_url, "inspect", mid)))
    assert inspected["pinned"] is True and inspected["text"] == fact
    assert inspected["history"]["versions"][-1]["text"] == fact
    await settle(pcm_a)

    page = json.loads(ok(await pcm(pcm_url, "list", "--project", PROJECT, "--json")))
    assert {m["id"] for m in page["items"]} == {mid, piped_id}
    pinned = json.loads(ok(await pcm(pcm_url, "list", "--project", PROJECT, "--pinned", "--json")))
    assert [m["id"] for m in pinned["items"]] == [mid]
    table = ok(await pcm(pcm_url, "list", "--project", PROJECT)).splitlines()
    row = next(line for line in table if line.startswith(mid))
    assert " pin " in row and "active" in row and "Orchard" in row and f"project:{PROJECT}" in row

    stats = json.loads(ok(await pcm(pcm_url, "stats")))
    assert stats["memories"] >= 2 and stats["pinned"] >= 1 and stats["by_state"]["active"] >= 2
    assert set(stats) == {"memories", "by_state", "pinned", "episode_records", "pending"}

    job = json.loads(ok(await pcm(pcm_url, "consolidate")))
    assert job["job"] == "consolidation" and isinstance(job["changed"], int)

    assert ok(await pcm(pcm_url, "pin", mid, "--off")).strip() == f"unpinned {mid}"
    assert (await pcm_a.get(mid)).pinned is False

    # `update` is the API's PATCH: the new text is current, the old one stays in history.
    edited = f"{fact} It moved to the Tuesday slot."
    changed = json.loads(
        ok(await pcm(pcm_url, "update", mid, "--text", edited, "--importance", "low"))
    )
    assert (changed["text"], changed["importance"]) == (edited, "low")
    versions = (await pcm_a.history(mid)).versions
    assert [v.text for v in versions] == [fact, edited]
    nothing = await pcm(pcm_url, "update", mid)
    assert nothing.exit_code != 0 and "give --text" in nothing.stderr

    assert ok(await pcm(pcm_url, "forget", mid)).strip() == f"deleted {mid}"
    gone = await pcm(pcm_url, "inspect", mid)
    assert gone.exit_code == EXIT_REFUSED and "404 memory_not_found" in gone.stderr
    assert gone.stdout == ""


async def test_a_refused_store_exits_non_zero_with_pcm_s_code(
    pcm_url: str, pcm_a: AsyncPcmClient
) -> None:
    project = f"cli-secret-{RUN}"
    refused = await pcm(
        pcm_url, "store", "the aws key is AKIAIOSFODNN7EXAMPLE", "--project", project
    )
    assert refused.exit_code == EXIT_REFUSED == 1
    assert "422 secret_detected" in refused.stderr and refused.stdout == ""
    await settle(pcm_a)
    listed = await pcm_a.list_memories(project=project)
    assert listed.items == []  # nothing stored

    bad_key = await pcm(pcm_url, "stats", key="not-a-key")
    assert bad_key.exit_code == EXIT_REFUSED and "401 unknown_api_key" in bad_key.stderr

    invalid = await pcm(pcm_url, "store", "x", "--scope", "sideways")
    assert invalid.exit_code == 2  # typer's usage error: no request is sent


async def test_an_unreachable_server_is_named() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    result = await pcm(dead, "recall", "anything")
    assert result.exit_code == EXIT_UNREACHABLE and result.stdout == ""
    assert f"cannot reach PCM at {dead}" in result.stderr and "is it running?" in result.stderr


async def test_wait_and_doctor_use_pcm_url(pcm_url: str, pcm_a: AsyncPcmClient) -> None:
    """`pcm wait` and `pcm doctor` talk to PCM_URL, as the client commands do."""
    await settle(pcm_a)
    assert "ready; pipeline settled" in ok(await pcm(pcm_url, "wait", "--timeout", "60"))
    report = ok(await pcm(pcm_url, "doctor"))
    assert '"pending"' in report and "auth: PCM_API_KEY accepted" in report
    # A wrong key fails the check loudly, not every later call quietly.
    refused = await pcm(pcm_url, "doctor", key="not-a-key")
    assert refused.exit_code == EXIT_REFUSED and "auth: 401 unknown_api_key" in refused.stderr
    dead = f"http://127.0.0.1:{free_port()}"
    result = await pcm(dead, "doctor")
    assert result.exit_code == EXIT_UNREACHABLE and f"cannot reach {dead}" in result.stderr
    result = await pcm(dead, "wait", "--timeout", "1")
    assert result.exit_code == EXIT_UNREACHABLE and "timed out" in result.stderr


async def test_governance_set_show_clear(pcm_url: str, pcm_a: AsyncPcmClient) -> None:
    project = f"cli-gov-{RUN}"
    out = json.loads(
        ok(
            await pcm(
                pcm_url,
                "governance",
                "set",
                "--project",
                project,
                "--capture",
                "manual_only",
                "--retention-days",
                "30",
            )
        )
    )
    assert out["capture_mode"] == "manual_only" and out["retention_days"] == 30
    # The API sees it: a hook capture in that project is skipped.
    r = await pcm_a.store(
        "The Quince build agent has 64 GB of RAM.", scope="project", project=project, source="hook"
    )
    assert r.status == "skipped" and r.reason == "capture_mode"
    shown = ok(await pcm(pcm_url, "governance", "show", "--project", project))
    assert f"project:{project}" in shown and "in force: capture manual_only" in shown
    shown = json.loads(ok(await pcm(pcm_url, "governance", "show", "--json")))
    assert any(p["project"] == project for p in shown["policies"])

    # Both names, or a bad value: a usage error, nothing changed.
    bad = await pcm(pcm_url, "governance", "set", "--project", project, "--workspace", "w")
    assert bad.exit_code == 2
    bad = await pcm(pcm_url, "governance", "set", "--project", project, "--retention-days", "0")
    assert bad.exit_code == 2

    assert "cleared" in ok(await pcm(pcm_url, "governance", "clear", "--project", project))
    again = await pcm(pcm_url, "governance", "clear", "--project", project)
    assert again.exit_code == EXIT_REFUSED and "policy_not_found" in again.stderr


async def test_feedback_on_a_recall_and_on_a_memory(pcm_url: str, pcm_a: AsyncPcmClient) -> None:
    project = f"cli-fb-{RUN}"
    fact = "The Orchard release train leaves every second Wednesday."
    mid = ok(await pcm(pcm_url, "store", fact, "--project", project)).split()[0]
    await settle(pcm_a)
    answer = json.loads(
        ok(
            await pcm(
                pcm_url,
                "recall",
                "When does the Orchard release train leave?",
                "--project",
                project,
                "--json",
            )
        )
    )
    rid = answer["recall_id"]
    out = json.loads(ok(await pcm(pcm_url, "feedback", "--recall", rid, "--helpful", mid)))
    assert out["changed"] == {mid: "helpful"} and out["reinforced"] == [mid]
    again = json.loads(ok(await pcm(pcm_url, "feedback", "--recall", rid, "--helpful", mid)))
    assert again["changed"] == {} and again["unchanged"] == [mid]
    wrong = json.loads(ok(await pcm(pcm_url, "feedback", mid, "--signal", "wrong")))
    assert wrong["reconsolidation"] == [mid]
    # Refusals: the server's (a memory the recall did not deliver), and the command's own.
    refused = await pcm(pcm_url, "feedback", "--recall", rid, "--not-helpful", str(uuid.uuid4()))
    assert refused.exit_code == EXIT_REFUSED and "invalid_feedback" in refused.stderr
    assert (await pcm(pcm_url, "feedback", "--helpful", mid)).exit_code == 2  # no --recall
    assert (await pcm(pcm_url, "feedback", mid)).exit_code == 2  # no --signal
