"""Moving the keys a single Redis holds from their names before hash tags to the tagged
ones (`keys.tenant_tag`, docs/cluster.md): `pcm:governance:acme` becomes
`pcm:governance:{t:acme}`, `pcm:apikey:d:<digest>` becomes `pcm:apikey:{apikeys}:d:<digest>`.

Every service runs it on start, before anything reads a key; a marker key makes later
starts a single GET. One SCAN of `pcm:*` finds the old names; each moves with RENAMENX, so
a replica starting at the same moment, or a key already written under its new name, is
never overwritten. Short-lived keys (locks, job slots, rate limit buckets, labile marks)
are not moved: they expire on their own. On a Redis Cluster nothing runs (a cluster starts
with the new names; data moved into one is retagged on its single server first).

Old names put the tenant right after the family's prefix and the tenants are known (the
set of tenants that wrote, and of those holding API keys); a tenant's name may hold a
colon, so the longest known tenant that fits is taken.
"""

from __future__ import annotations

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from pcm_common.runtime.telemetry import get_logger
from pcm_common.stores.redis import keys
from pcm_common.stores.redis.connect import is_cluster

log = get_logger("retag")

# Set once the old names were moved; deleting it moves any left at the next start.
MARKER = "pcm:keys:tagged"

# "<prefix><tenant>": one key per tenant.
WHOLE = (
    keys.STRENGTH_PREFIX,
    "pcm:governance:",
    "pcm:tombstones:",
    "pcm:capbuf:",
    "pcm:distilled:",
    "pcm:lastwrite:",
    "pcm:job:idle:consolidation:",
)
# "<prefix><tenant>:<rest>": several keys per tenant.
SUFFIXED = (
    "pcm:routine:",
    "pcm:idem:",
    "pcm:repair:graph:",
    "pcm:repair:republished:",
    "pcm:erasure:",
    "pcm:episode:",
    "pcm:capctx:",
    "pcm:feedback:",
)
JOB_RUNS = "pcm:job:runs:"  # "pcm:job:runs:<job>:<tenant>"
OLD_APIKEY_RECORD = "pcm:apikey:d:"
OLD_APIKEY_DIGEST = "pcm:apikey:id:"
OLD_APIKEYS_OF = "pcm:apikeys:"
OLD_APIKEY_TENANTS = "pcm:apikeys:tenants"


def _text(v: bytes | str) -> str:
    return v.decode() if isinstance(v, bytes) else v


def new_name(name: str, tenants: set[str], key_tenants: set[str]) -> str | None:
    """The tagged name of the old key `name`; None when it is not an old name.
    `key_tenants`: the tenants listed in the old set of API-key holders."""
    if "{" in name:
        return None  # tagged already (a tag is the only brace PCM writes)
    if name == OLD_APIKEY_TENANTS:
        return keys.APIKEY_TENANTS
    if name.startswith(OLD_APIKEY_RECORD):
        return keys.apikey_record(name[len(OLD_APIKEY_RECORD) :])
    if name.startswith(OLD_APIKEY_DIGEST):
        return keys.apikey_digest(name[len(OLD_APIKEY_DIGEST) :])
    if name.startswith(JOB_RUNS):
        rest = name[len(JOB_RUNS) :]
        # The job's name has no colon: the tenant is what follows the first one.
        job, sep, tenant = rest.partition(":")
        return keys.job_runs(job, tenant) if sep and tenant in tenants else None
    for prefix in WHOLE:
        if name.startswith(prefix) and name[len(prefix) :] in tenants:
            return prefix + keys.tenant_tag(name[len(prefix) :])
    for prefix in SUFFIXED:
        if name.startswith(prefix):
            rest = name[len(prefix) :]
            # The longest known tenant followed by a colon.
            cuts = [i for i, c in enumerate(rest) if c == ":" and rest[:i] in tenants]
            if cuts:
                i = max(cuts)
                return prefix + keys.tenant_tag(rest[:i]) + rest[i:]
            return None
    if name.startswith(OLD_APIKEYS_OF) and name[len(OLD_APIKEYS_OF) :] in key_tenants:
        return keys.apikeys_of(name[len(OLD_APIKEYS_OF) :])
    return None


async def retag_legacy_keys(redis: Redis) -> int:
    """Move every old name to its tagged one (once per store); returns how many moved."""
    if is_cluster(redis) or await redis.exists(MARKER):
        return 0
    key_tenants = {_text(t) for t in await redis.smembers(OLD_APIKEY_TENANTS)}
    tenants = {_text(t) for t in await redis.smembers(keys.TENANTS)}
    tenants |= key_tenants | {_text(t) for t in await redis.smembers(keys.APIKEY_TENANTS)}
    moved = 0
    async for raw in redis.scan_iter(match="pcm:*", count=1000):
        name = _text(raw)
        target = new_name(name, tenants, key_tenants)
        if target is None:
            continue
        try:
            if await redis.renamenx(name, target):
                moved += 1
            else:
                log.warning("retag_kept_both", old=name, new=target)
        except ResponseError:
            continue  # gone meanwhile: another replica moved it, or it expired
    await redis.set(MARKER, "1")
    if moved:
        log.info("keys_retagged", moved=moved)
    return moved
