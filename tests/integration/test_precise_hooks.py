"""The hooks' recall defaults, through `pcm hook UserPromptSubmit` as Claude Code runs it:
precise recall, scoped to the user (PCM_USER_ID, else the OS user) and the project."""

from __future__ import annotations

import asyncio
import getpass
import subprocess
import uuid
from pathlib import Path

from pcm_client import AsyncPcmClient
from tests.conftest import settle
from tests.integration.test_hooks import base_env, common, context_of, hook

RUN = uuid.uuid4().hex[:8]
ANSWER = f"The staging database of {RUN} moved to the db-stage-07 host in Frankfurt."
OTHERS = f"The staging database of {RUN} moved to db-other-99, says someone else."
# It says something new besides the question, so the predictive capture gate keeps it (a
# bare question that stored memories answer is predicted by them, and skipped).
QUESTION = "Where did the staging database move to? The failover drill on Friday needs it."


async def test_prompt_hook_recalls_precisely_for_the_os_user_and_project(
    pcm_url: str, pcm_a: AsyncPcmClient, tmp_path: Path
) -> None:
    top = tmp_path / f"mesa-{RUN}"
    top.mkdir()
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(top)], check=True)
    me, project = getpass.getuser(), top.name
    # The answer twice for this user (the project and global: two memories, one text),
    # another user's version in the same project, and this user's in another project.
    for body in (
        {"text": ANSWER, "user_id": me, "scope": "project", "project": project},
        {"text": ANSWER, "user_id": me},
        {"text": OTHERS, "user_id": f"someone-{RUN}", "scope": "project", "project": project},
        {"text": OTHERS + " (v2)", "user_id": me, "scope": "project", "project": f"x-{RUN}"},
    ):
        r = await pcm_a.store(**body)
        assert r.status == "created", r
    await settle(pcm_a)

    payload = common("UserPromptSubmit", top) | {"prompt": QUESTION}
    first = await hook("UserPromptSubmit", payload, base_env(pcm_url))
    context = context_of(first, "UserPromptSubmit")
    assert context.count("db-stage-07") == 1  # precise: each text once
    assert "db-other-99" not in context  # neither another user's nor another project's

    # The prompt was captured for the OS user in the project.
    await settle(pcm_a)
    page = await pcm_a.list_memories(project=project, user_id=me)
    captured = [m for m in page.items if m["text"] == QUESTION]
    assert len(captured) == 1 and captured[0]["source"] == "hook"

    # The standard recall, asked for by configuration, shows the stored text twice; a
    # configured user sees nothing of the OS user's.
    standard = base_env(pcm_url, PCM_HOOK_PRECISION="standard")
    again = context_of(await hook("UserPromptSubmit", payload, standard), "UserPromptSubmit")
    assert again.count("db-stage-07") == 2
    stranger = base_env(pcm_url, PCM_USER_ID=f"stranger-{RUN}")
    result = await hook("UserPromptSubmit", payload, stranger)
    assert result.returncode == 0 and "db-stage-07" not in result.stdout
