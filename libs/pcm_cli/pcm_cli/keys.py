"""`pcm keys`: create, list, rotate and revoke API keys.

By default in the Redis at REDIS_URL: an operator's tool that administers every tenant, so
it needs Redis itself, not an API key. With `--api`, through /v1/admin/keys at PCM_URL with
the admin key PCM_API_KEY, for that key's own tenant only.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import typer

from pcm_client import PcmClient, PcmError, TransportError

T = TypeVar("T")
Row = dict[str, Any]

keys_app = typer.Typer(
    help="API keys stored hashed in Redis (REDIS_URL, or --api): create, list, rotate, revoke.",
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
ViaApi = Annotated[
    bool,
    typer.Option("--api", help="through /v1/admin/keys at PCM_URL with the admin key PCM_API_KEY"),
]


def _plain(value: Any) -> Any:
    """A record as JSON would carry it (times as ISO text), whichever way it came."""
    return json.loads(
        json.dumps(value, default=lambda v: v.isoformat() if isinstance(v, datetime) else str(v))
    )


def _redis(fn: Callable[[Any], Awaitable[T]]) -> T:
    from pcm_common.access.apikeys import KeyStore
    from pcm_common.runtime.config import PcmSettings
    from pcm_common.stores.redis.connect import open_redis

    async def run() -> T:
        settings = PcmSettings()
        redis = open_redis(settings.redis_url, settings.redis_cluster)
        try:
            return await fn(KeyStore(redis))
        finally:
            await redis.aclose()

    try:
        return asyncio.run(run())
    except ValueError as exc:
        typer.echo(f"pcm keys: {exc}", err=True)
        raise typer.Exit(1) from None


def _api(fn: Callable[[PcmClient], T]) -> T:
    """Run `fn` with a client of PCM_URL and the admin key PCM_API_KEY."""
    try:
        with PcmClient() as api:
            return fn(api)
    except PcmError as exc:
        typer.echo(f"pcm keys: {exc}", err=True)
        raise typer.Exit(3 if isinstance(exc, TransportError) else 1) from None


def _seconds(span: timedelta | None) -> int | None:
    return int(span.total_seconds()) if span is not None else None


def _print(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2))


def _row(k: Row) -> str:
    expires = str(k["expires_at"] or "-")[:19]
    return (
        f"{k['id']:16} {k['shown'] + '…':14} {k['tenant']:20} {k['role']:6} "
        f"{str(k['created_at'])[:19]:19}  {expires:19}  {k['state']}"
    )


def _announce(out: Row) -> None:
    typer.echo(f"key: {out['key']}")
    typer.echo(f"id: {out['id']}  tenant: {out['tenant']}  role: {out['role']}", err=True)
    typer.echo("the key is shown only now; PCM stores its hash", err=True)


@keys_app.command("create")
def create(
    tenant: Annotated[
        str | None, typer.Option(help="the tenant the key acts for (not with --api)")
    ] = None,
    role: Annotated[RoleName, typer.Option(help="admin: also jobs and key administration")] = (
        RoleName.data
    ),
    expires_in: Annotated[
        str | None, typer.Option(help="stop working after this long (24h, 30d)")
    ] = None,
    api: ViaApi = False,
    as_json: AsJson = False,
) -> None:
    """Make a key; prints it once (only its hash is stored)."""
    span = parse_duration(expires_in) if expires_in else None
    if api:
        if tenant:
            raise typer.BadParameter("--api makes keys for PCM_API_KEY's own tenant; drop --tenant")
        out: Row = _api(lambda api: api.create_key(role.value, _seconds(span)))
    else:
        if not tenant:
            raise typer.BadParameter("--tenant is needed (or --api, for your key's tenant)")
        new = _redis(lambda store: store.create(tenant, role.value, span))
        out = _plain({"key": new.key, **new.record.public()})
    if as_json:
        _print(out)
    else:
        _announce(out)


@keys_app.command("list")
def list_keys(
    tenant: Annotated[str | None, typer.Option(help="only this tenant's")] = None,
    api: ViaApi = False,
    as_json: AsJson = False,
) -> None:
    """Stored keys (never their secrets): id, first characters, tenant, role, dates, state."""
    if api:
        rows: list[Row] = _api(lambda api: api.list_keys())["keys"]
    else:
        rows = _plain([r.public() for r in _redis(lambda store: store.list(tenant))])
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
    api: ViaApi = False,
    as_json: AsJson = False,
) -> None:
    """A new key for the same tenant and role; the old one expires after the overlap."""
    span = parse_duration(overlap)
    life = parse_duration(expires_in) if expires_in else None
    if api:
        out: Row = _api(lambda api: api.rotate_key(key_id, _seconds(span), _seconds(life)))
    else:
        done = _redis(lambda store: store.rotate(key_id, span, expires_in=life))
        if done is None:
            typer.echo(f"pcm keys: no key {key_id}", err=True)
            raise typer.Exit(1)
        new, old = done
        out = _plain({"key": new.key, **new.record.public(), "previous": old.public()})
    if as_json:
        _print(out)
        return
    _announce(out)
    typer.echo(f"{key_id} expires at {out['previous']['expires_at']}", err=True)


@keys_app.command("revoke")
def revoke(key_id: KeyId, api: ViaApi = False) -> None:
    """Stop a key now (every replica refuses it within PCM_API_KEY_CACHE_S)."""
    if api:
        _api(lambda api: api.revoke_key(key_id))
    elif _redis(lambda store: store.revoke(key_id)) is None:
        typer.echo(f"pcm keys: no key {key_id}", err=True)
        raise typer.Exit(1)
    typer.echo(f"revoked {key_id}")
