"""The client methods and `pcm` commands of export, import and erasure (issue 37), against
the real all-in-one server: the async client's export imported by the sync client's
`import_lines` (and the reverse), `pcm export` / `pcm import` / `pcm erase` end to end."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

from pcm_client import AsyncPcmClient, ErasureOut, PcmClient, ValidationError
from tests.integration.test_cli import ok, pcm

RUN = uuid.uuid4().hex[:8]


async def _write(url: str, user: str, n: int) -> list[str]:
    async with AsyncPcmClient(url, "key-a") as api:
        stored = await api.store_batch(
            [
                {
                    "text": f"Note {i} of {user}: the kiln fires at {900 + i} degrees.",
                    "user_id": user,
                }
                for i in range(n)
            ]
        )
    return [r.id for r in stored.results if r.id]


async def test_client_export_import_and_erase(pcm_url: str) -> None:
    user = f"client-{RUN}"
    ids = await _write(pcm_url, user, 5)
    async with AsyncPcmClient(pcm_url, "key-a") as api:
        lines = [line async for line in api.export(user_id=user, vectors=True)]
        assert lines[0]["kind"] == "header" and lines[0]["count"] == 5
        erased = await api.erase(user_id=user)
        assert isinstance(erased, ErasureOut) and erased.erased.memories == 5
        try:
            await api.erase()
        except ValidationError as exc:
            assert exc.status == 422
        else:
            raise AssertionError("an erasure naming nothing was accepted")
    sent: list[int] = []

    def sync_side() -> None:  # (in a thread: the server runs on this test's event loop)
        with PcmClient(pcm_url, "key-b") as api:
            # Two memories a request: the answers add up over three requests.
            out = api.import_lines(lines, part=2, progress=sent.append)
            assert (out.imported, out.existing, out.reembedded, out.refused) == (5, 0, 0, [])
            assert sent == [2, 2, 1]
            back = [line["memory"]["id"] for line in list(api.export(user_id=user))[1:]]
            assert set(back) == set(ids)
            again = api.import_lines(line for line in lines)
            assert again.imported == 0 and again.existing == 5
            assert api.erase(user_id=user).erased.memories == 5

    await asyncio.to_thread(sync_side)


async def test_pcm_export_import_erase_commands(pcm_url: str, tmp_path: Path) -> None:
    user = f"cli-{RUN}"
    ids = await _write(pcm_url, user, 3)
    path = tmp_path / "export.jsonl"
    ok(await pcm(pcm_url, "export", str(path), "--user", user, "--vectors"))
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[0])["count"] == 3
    out = ok(await pcm(pcm_url, "erase", "--user", user, "--yes"))
    assert json.loads(out)["erased"]["memories"] == 3
    out = ok(await pcm(pcm_url, "import", str(path), "--json"))
    assert json.loads(out)["imported"] == 3
    out = ok(await pcm(pcm_url, "import", str(path)))
    assert "imported 0, already here 3" in out
    async with AsyncPcmClient(pcm_url, "key-a") as api:
        assert {(await api.get(i)).id for i in ids} == set(ids)
        await api.erase(user_id=user)
