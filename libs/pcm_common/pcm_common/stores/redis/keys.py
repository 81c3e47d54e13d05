"""Every Redis key PCM reads or writes, by family: its name, its type and what it holds.

The streams are named with the events they carry (`pcm_common.messaging.events`).
Everything else is here, so a key seen in Redis is found from its prefix, and erasure
(`pcm_common.data.erasure_scrub`) can name every key that holds a memory's id.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

# Characters SCAN's MATCH reads as a pattern: a name in a pattern is matched literally.
_GLOB = re.compile(r"([*?\[\]\\])")


def glob_escape(text: str) -> str:
    """`text` with the glob characters of SCAN MATCH escaped."""
    return _GLOB.sub(r"\\\1", text)


# ---- Redis Cluster hash tags ---------------------------------------------------------------
# A Redis Cluster hashes only the text between a key's first `{` and the next `}`. Every
# key of one tenant carries `tenant_tag` before any other brace, so a tenant's keys share
# one slot and every script, MULTI and multi-key command on them runs on one node
# (docs/cluster.md). Global keys that one command uses together share a tag of their own.


def tenant_tag(tenant: str) -> str:
    """The hash tag of a tenant's keys. The `t:` keeps it non-empty whatever the name (an
    empty tag `{}` would hash the whole key); a name holding a `}` cuts the tag short, but
    the same way in every key of that tenant, so they still share a slot."""
    return "{t:" + tenant + "}"


# ---- tenants -----------------------------------------------------------------------------

TENANTS = "pcm:tenants"  # set: every tenant that ever wrote; scheduled jobs iterate it


# ---- API keys (`pcm_common.access.apikeys`), one Redis shared by every replica ----------
#   pcm:apikey:{apikeys}:d:<digest>  hash: the key's record (the lookup on every request)
#   pcm:apikey:{apikeys}:id:<id>     string: the digest of key <id> (administration by id)
#   pcm:apikeys:{apikeys}:<tenant>   sorted set: the tenant's key ids by creation time
#   pcm:apikeys:{apikeys}:tenants    set: tenants that have stored keys

# A key is found by its digest before its tenant is known, and issuing one writes the four
# families in one MULTI: on a Redis Cluster they share one slot, not the tenant's.
APIKEYS_TAG = "{apikeys}"
APIKEY_TENANTS = f"pcm:apikeys:{APIKEYS_TAG}:tenants"


def apikey_record(digest: str) -> str:
    return f"pcm:apikey:{APIKEYS_TAG}:d:{digest}"


def apikey_digest(key_id: str) -> str:
    return f"pcm:apikey:{APIKEYS_TAG}:id:{key_id}"


def apikeys_of(tenant: str) -> str:
    return f"pcm:apikeys:{APIKEYS_TAG}:{tenant}"


# ---- rate limit and quota (`pcm_common.access.ratelimit`) -------------------------------


def rate_bucket(key_id: str, tenant: str) -> str:
    """Hash (tokens, ts): the key's token bucket. Tagged with the key's tenant: the rate
    limit script reads it together with `tenant_quota`."""
    return f"pcm:rl:key:{tenant_tag(tenant)}:{key_id}"


def tenant_quota(tenant: str) -> str:
    """String: the tenant's request count in the current one-minute window."""
    return f"pcm:rl:tenant:{tenant_tag(tenant)}"


# ---- locks -------------------------------------------------------------------------------

KEY_LOCK_PREFIX = "pcm:lock:key:"  # + a lock name (`locks.KeyLocks`): the holder's token


def copy_lock(tenant: str, copy_key: Iterable[str]) -> str:
    """Lock name of one exact text in one scope of one user (ingest's lookup of a copy)."""
    return f"copy:{tenant_tag(tenant)}:{'|'.join(copy_key)}"


def memory_lock(tenant: str, memory_id: str) -> str:
    """Lock name of one memory (its PATCH and DELETE take turns)."""
    return f"memory:{tenant_tag(tenant)}:{memory_id}"


def job_lock(name: str, tenant: str) -> str:
    """String: the token of the sweeper replica running job `name` on `tenant`."""
    return f"pcm:lock:job:{name}:{tenant_tag(tenant)}"


def job_slot(name: str, tenant: str) -> str:
    """String with a TTL of the job's interval: the tenant's run of this interval is taken."""
    return f"pcm:job:slot:{name}:{tenant_tag(tenant)}"


def job_runs(name: str, tenant: str) -> str:
    """List, newest first: the last runs of job `name` on `tenant` as JSON (`job_runs`)."""
    return f"pcm:job:runs:{name}:{tenant_tag(tenant)}"


# ---- memory state kept beside the vector store -------------------------------------------

# Hash per tenant (+ the tenant's tag): memory id -> its strength as JSON
# (`strength_overlay`).
STRENGTH_PREFIX = "pcm:strength:"


def strength(tenant: str, prefix: str = STRENGTH_PREFIX) -> str:
    return prefix + tenant_tag(tenant)


def governance(tenant: str) -> str:
    """Hash: scope key (``global``, ``workspace:{name}``, ``project:{name}``) -> the scope's
    policy as JSON (`governance`)."""
    return f"pcm:governance:{tenant_tag(tenant)}"


def tombstones(tenant: str) -> str:
    """Sorted set: deleted memory id -> deletion time (`tombstones`)."""
    return f"pcm:tombstones:{tenant_tag(tenant)}"


# The routine index (`routines`), per tenant:
# - ``pcm:routine:{t:<tenant>}:of``: hash, memory id -> routine id;
# - ``pcm:routine:{t:<tenant>}:r:<routine>``: sorted set, one member ``"<memory id>|<ts>"``
#   per event (the memory's creation and each recorded repeat), scored by the event's time;
# - ``pcm:routine:{t:<tenant>}:built``: set once the sweeper's `routines` job rebuilt the
#   index.


def routine_of(tenant: str) -> str:
    return f"pcm:routine:{tenant_tag(tenant)}:of"


def routine_entries(tenant: str, routine: str) -> str:
    return f"pcm:routine:{tenant_tag(tenant)}:r:{routine}"


def routine_built(tenant: str) -> str:
    return f"pcm:routine:{tenant_tag(tenant)}:built"


def routine_entries_pattern(tenant: str) -> str:
    """SCAN MATCH pattern of the tenant's routine entry keys (a tenant whose name starts
    with this one's and ":r:" matches too: its routine ids hold a colon)."""
    return glob_escape(routine_entries(tenant, "")) + "*"


# ---- reconsolidation (`lability`) ---------------------------------------------------------
# Like every tenant's key, these carry the tenant's hash tag, so the claim script's keys
# are one slot's:
#   pcm:labile:{t:<tenant>}:m:<memory id>       string with a TTL of the labile window: the
#                                               recall (or feedback request) that made it
#                                               labile
#   pcm:labile:{t:<tenant>}:cool:<memory id>    string with a TTL of the cooldown: rewritten
#   pcm:labile:{t:<tenant>}:budget:<recall id>  counter with a TTL: the recall's rewrites


def labile(tenant: str, memory_id: str) -> str:
    return f"pcm:labile:{tenant_tag(tenant)}:m:{memory_id}"


def labile_cooldown(tenant: str, memory_id: str) -> str:
    return f"pcm:labile:{tenant_tag(tenant)}:cool:{memory_id}"


def labile_budget(tenant: str, recall_id: str) -> str:
    return f"pcm:labile:{tenant_tag(tenant)}:budget:{recall_id}"


def labile_pattern(tenant: str) -> str:
    """SCAN MATCH pattern of every key of the tenant's family (erasure)."""
    return f"pcm:labile:{glob_escape(tenant_tag(tenant))}:*"


# ---- events owed and events consumed -----------------------------------------------------

OUTBOX_WRITTEN = "pcm:outbox:written"  # sorted set: JSON [tenant, memory id] -> noted at (s)
OUTBOX_CHANGED = "pcm:outbox:changed"  # sorted set: a MemoryChanged as JSON -> noted at (s)


def stream_failures(stream: str, group: str) -> str:
    """Hash: entry id -> failed deliveries of it in the group (`stream_batches`)."""
    return f"pcm:failures:{stream}:{group}"


def applied(phase: str, event_id: str) -> str:
    """Hash: memory id -> what the sweeper applied of one phase ("recalled", "spread") of
    one recall event (kept a week). One HMGET reads a phase's markers and one HSET (with
    its EXPIRE) writes them, not a command per memory
    (docs/decisions/0045-redis-round-trips-per-batch.md)."""
    return f"pcm:applied:{phase}:{event_id}"


APPLIED_PATTERN = "pcm:applied:*"


def idempotency(tenant: str, key: str) -> str:
    """String (JSON, 24 h): a write's claim of an `Idempotency-Key`, then its answer."""
    return f"pcm:idem:{tenant_tag(tenant)}:{hashlib.sha256(key.encode()).hexdigest()[:40]}"


def idempotency_pattern(tenant: str) -> str:
    return f"pcm:idem:{glob_escape(tenant_tag(tenant))}:*"


# ---- repair and erasure ------------------------------------------------------------------


def graph_republished(tenant: str, memory_id: str) -> str:
    """String with a TTL: graph repair published the memory again for extraction."""
    return f"pcm:repair:graph:{tenant_tag(tenant)}:{memory_id}"


def judge_republished(tenant: str, memory_id: str) -> str:
    """String with a TTL: the repair job published the unjudged memory again."""
    return f"pcm:repair:republished:{tenant_tag(tenant)}:{memory_id}"


def erasure(tenant: str, digest: str) -> str:
    """Hash: an erasure job's record (status, counts), by the digest of what it erases. The
    keys beside it: `erasure_lock`, `erasure_ids`, `erasure_owners`."""
    return f"pcm:erasure:{tenant_tag(tenant)}:{digest}"


def erasure_lock(job: str) -> str:
    """String with a TTL: the token of the call running the erasure job `job`."""
    return f"{job}:lock"


def erasure_ids(job: str) -> str:
    """Set: the ids the erasure job found, kept before anything is deleted."""
    return f"{job}:ids"


def erasure_owners(job: str) -> str:
    """Set: the current-episode keys of the erased owners."""
    return f"{job}:keys"


# ---- moving to another embedding model (`pcm_common.data.reembed`) ------------------------

REEMBED = "pcm:reembed"  # hash: the store's re-embedding job (status, models, checkpoint)
REEMBED_LOCK = "pcm:reembed:lock"  # string with a TTL: the token of the process running it


def episode_stream(
    tenant: str, scope: str, workspace: str | None, project: str | None, user_id: str | None
) -> str:
    """An owner's current auto-episode (`pcm_ingest.episodes`): one per tenant, scope,
    workspace, project and user, hashed so that no name needs escaping; erasure finds the
    keys of the owners it erases here."""
    parts = "\x1f".join([scope, workspace or "", project or "", user_id or ""])
    digest = hashlib.sha256(parts.encode()).hexdigest()[:24]
    return f"pcm:episode:{tenant_tag(tenant)}:{digest}"


# ---- the capture gate (`capture_buffer`) --------------------------------------------------


def capture_context(tenant: str, stream: str) -> str:
    """List, newest first, with a TTL: a session's recent automatic captures as JSON
    (text and vector), the context the capture gate predicts the next one from. `stream`
    is a digest of the session id and the owner (`capture_buffer.stream_of`)."""
    return f"pcm:capctx:{tenant_tag(tenant)}:{stream}"


def capture_buffer(tenant: str) -> str:
    """Sorted set: the automatic captures the gate skipped, as JSON, scored by the time
    they expire; consolidation distils facts from them (`capture_buffer`)."""
    return f"pcm:capbuf:{tenant_tag(tenant)}"


def distilled(tenant: str) -> str:
    """Hash: episode record id -> digest of the member ids consolidation last distilled
    facts from (`pcm_sweeper.distil`): an episode is distilled again only when it changed."""
    return f"pcm:distilled:{tenant_tag(tenant)}"


def last_write(tenant: str) -> str:
    """String: epoch seconds of the tenant's last write (ingest), for the sweeper's
    consolidation on idle (`PCM_CONSOLIDATION_IDLE_S`)."""
    return f"pcm:lastwrite:{tenant_tag(tenant)}"


def idle_consolidated(tenant: str) -> str:
    """String: the `last_write` value after which the idle consolidation last ran."""
    return f"pcm:job:idle:consolidation:{tenant_tag(tenant)}"


# ---- retrieval feedback (`feedback`) -----------------------------------------------------
#   pcm:feedback:<tenant>:recall:<recall id>  string (JSON, PCM_FEEDBACK_RECALL_TTL_S): a
#                                             recall's record (who asked, its cue vector,
#                                             the delivered ids, the signals given on it)
#   pcm:feedback:<tenant>:cues                hash: recall id -> its cue terms (JSON)
#   pcm:feedback:<tenant>:order               sorted set: recall id -> when its terms were
#                                             last set (the oldest go past the cap)
#   pcm:feedback:<tenant>:memory              hash: memory id -> the signal given on it
#                                             without a recall
#   pcm:feedback:<tenant>:ver                 string: a counter bumped on every change (a
#                                             recall replica reloads the terms when it moves)


def feedback_recall(tenant: str, recall_id: str) -> str:
    return f"pcm:feedback:{tenant_tag(tenant)}:recall:{recall_id}"


def feedback_recall_pattern(tenant: str) -> str:
    return f"pcm:feedback:{glob_escape(tenant_tag(tenant))}:recall:*"


def feedback_cues(tenant: str) -> str:
    return f"pcm:feedback:{tenant_tag(tenant)}:cues"


def feedback_order(tenant: str) -> str:
    return f"pcm:feedback:{tenant_tag(tenant)}:order"


def feedback_memory(tenant: str) -> str:
    return f"pcm:feedback:{tenant_tag(tenant)}:memory"


def feedback_version(tenant: str) -> str:
    return f"pcm:feedback:{tenant_tag(tenant)}:ver"


def feedback_lock(tenant: str, subject: str) -> str:
    """Lock name of one recall's or one memory's feedback (concurrent posts take turns)."""
    return f"feedback:{tenant_tag(tenant)}:{subject}"
