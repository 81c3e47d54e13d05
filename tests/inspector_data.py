"""Memories for the inspector's attention view, shared by its API and browser tests: a
swimming routine that goes on (with one surprising entry) and piano lessons that stopped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from pcm_cli.testing import settle

SURPRISE = "Swam 140 lengths at the Eastside pool this morning."


def routines(now: datetime | None = None) -> list[tuple[str, datetime]]:
    now = now or datetime.now(UTC)
    swims = [
        (
            SURPRISE
            if i == 15
            else f"Swam {30 + i % 4} lengths at the Eastside pool this morning.",
            now - timedelta(days=40 - 2 * i, hours=1),
        )
        for i in range(20)
    ]
    piano = [
        (
            f"Weekly piano lesson with Mr Okafor: {40 + (i * 7) % 12} minutes.",
            now - timedelta(days=150 - 7 * i),
        )
        for i in range(10)
    ]
    return [*piano, *swims]


async def seed_routines(client: httpx.AsyncClient, user_id: str) -> None:
    """Written one by one, oldest first, as an agent would; judged by the sweeper."""
    for text, at in routines():
        got = await client.post(
            "/v1/memories", json={"text": text, "created_at": at.isoformat(), "user_id": user_id}
        )
        assert got.status_code == 201, got.text
    await settle(client)
