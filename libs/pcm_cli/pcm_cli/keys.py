"""`pcm keys`: create, list, rotate and revoke API keys in the Redis at REDIS_URL (an
operator's tool: it administers every tenant, so it needs Redis itself, not an API key;
a tenant's own admin key does the same through /v1/admin/keys)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from datetime import timedelta
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import typer

T = TypeVar("T")

keys_app = typer.Typer(
    help="API keys stored hashed in Redis (REDIS_URL): create, list, rotate, revoke.",
    no_args_is_help=True,
)

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_duration(text: str) -> timedelta:
    """`90s`, `30m`, `24h`, `7d`, `2w`, or plain seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if m is None:
        raise typer.BadParameter(f"{text!r}: a number with s, m, h, d or w (24h, 7d)")
    return timedelta(seconds=float(m[1]) * _UNITS[m[2] or "s"])


class RoleName(StrEnum):
    admin = "admin"
    data = "data"


AsJson = Annotated[bool, typer.Option("--json", help="print JSON")]
KeyId = Annotated[str, typer.Argument(metavar="KEY_ID", help="a key id (k_...) from `list`")]


def _with_store(fn: Callable[[Any], Awaitable[T]]) -> T:
    from redis.asyncio import Redis

    from pcm_common.apikeys import KeyStore
    from pcm_common.config import PcmSettings

    async def run() -> T:
        redis = Redis.from_url(PcmSettings().redis_url)
        try:
            return await fn(KeyStore(redis))
        finally:
            await redis.aclose()

    try:
        return asyncio.run(run())
    except ValueError as exc:
        typer.echo(f"pcm keys: {exc}", err=True)
        raise typer.Exit(1) from None


def _print(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str))


def _row(k: dict[str, Any]) -> str:
    expires = str(k["expires_at"] or "-")[:19]
    return (
        f"{k['id']:16} {k['shown'] + '…':14} {k['tenant']:20} {k['role']:6} "
        f"{str(k['created_at'])[:19]:19}  {expires:19}  {k['state']}"
    )


def _announce(out: dict[str, Any]) -> None:
    typer.echo(f"key: {out['key']}")
    typer.echo(f"id: {out['id']}  tenant: {out['tenant']}  role: {out['role']}", err=True)
    typer.echo("the key is shown only now; PCM stores its hash", err=True)


@keys_app.command("create")
def create(
    tenant: Annotated[str, typer.Option(help="the tenant the key acts for")],
    role: Annotated[RoleName, typer.Option(help="admin: also jobs and key administration")] = (
        RoleName.data
    ),
    expires_in: Annotated[
        str | None, typer.Option(help="stop working after this long (24h, 30d)")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Make a key; prints it once (only its hash is stored)."""
    span = parse_duration(expires_in) if expires_in else None
    new = _with_store(lambda store: store.create(tenant, role.value, span))
    out = {"key": new.key, **new.record.public()}
    if as_json:
        _print(out)
    else:
        _announce(out)


@keys_app.command("list")
def list_keys(
    tenant: Annotated[str | None, typer.Option(help="only this tenant's")] = None,
    as_json: AsJson = False,
) -> None:
    """Stored keys (never their secrets): id, first characters, tenant, role, dates, state."""
    records = _with_store(lambda store: store.list(tenant))
    rows = [r.public() for r in records]
    if as_json:
        _print(rows)
        return
    typer.echo(
        f"{'ID':16} {'KEY':14} {'TENANT':20} {'ROLE':6} {'CREATED':19}  {'EXPIRES':19}  STATE"
    )
    for k in rows:
        typer.echo(_row(k))


@keys_app.command("rotate")
def rotate(
    key_id: KeyId,
    overlap: Annotated[str, typer.Option(help="how long the old key keeps working")] = "24h",
    expires_in: Annotated[str | None, typer.Option(help="the new key's lifetime")] = None,
    as_json: AsJson = False,
) -> None:
    """A new key for the same tenant and role; the old one expires after the overlap."""
    span = parse_duration(overlap)
    life = parse_duration(expires_in) if expires_in else None
    out = _with_store(lambda store: store.rotate(key_id, span, expires_in=life))
    if out is None:
        typer.echo(f"pcm keys: no key {key_id}", err=True)
        raise typer.Exit(1)
    new, old = out
    result = {"key": new.key, **new.record.public(), "previous": old.public()}
    if as_json:
        _print(result)
        return
    _announce(result)
    typer.echo(f"{key_id} expires at {old.expires_at}", err=True)


@keys_app.command("revoke")
def revoke(key_id: KeyId) -> None:
    """Stop a key now (every replica refuses it within PCM_API_KEY_CACHE_S)."""
    if _with_store(lambda store: store.revoke(key_id)) is None:
        typer.echo(f"pcm keys: no key {key_id}", err=True)
        raise typer.Exit(1)
    typer.echo(f"revoked {key_id}")
