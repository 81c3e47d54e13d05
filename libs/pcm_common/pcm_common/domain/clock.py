"""The one reading of "now" and of a stored time: UTC, aware. Its own module because
`memory` and the stores (`stores.qdrant.edge.time_keys`) need it."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(dt: datetime) -> datetime:
    """Naive datetimes are taken as UTC so every stored time is comparable."""
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
