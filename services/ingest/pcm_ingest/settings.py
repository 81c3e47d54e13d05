from typing import Any

from pydantic import Field

from pcm_common.feedback.settings import FeedbackSettings
from pcm_common.firewall.settings import FirewallSettings


# The firewall's own settings (firewall_secrets, firewall_pii, firewall_phone_regions) are
# in `FirewallSettings`: the sweeper screens its rewrites with the same ones.
class IngestSettings(FirewallSettings, FeedbackSettings):
    max_text_chars: int = 100_000
    max_batch: int = 1_000
    # How long a keyed write's claim waits for its answer before a retry may take it over
    # (`pcm_ingest.idempotency`; meanwhile 409 with Retry-After): longer than a
    # `max_batch` request takes to store.
    idempotency_lease_s: float = Field(30.0, gt=0)
    # Points a re-embedding job copies at a time (`pcm_common.data.reembed`): one embed
    # call and one write each, a checkpoint after each.
    reembed_page: int = 256
    near_duplicate_cos: float = 0.94  # DESIGN §3: merge only at or above, with equal figures
    # Near-duplicate lookups (vector searches) in flight per batch request, for stores
    # that search one query at a time (Qdrant Edge runs a request's lookups as one batch).
    near_duplicate_lookups: int = 4
    # A write without `importance` gets the tier its text implies (domain.importance):
    # instructions, decisions and constraints high, bare chatter low; off: always normal.
    infer_importance: bool = True
    # Requests with at least this many characters of text are screened in a worker process
    # (`firewall_workers` of them), smaller ones in a thread (pcm_ingest.firewall.runner);
    # 0 or no workers: always a thread. A screen past `firewall_deadline_s` answers 503.
    # Such requests also derive figures, importance tiers and sparse vectors there.
    # Why: docs/decisions/0039-firewall-worker-processes.md.
    firewall_process_chars: int = 20_000
    firewall_workers: int = 2
    firewall_deadline_s: float = 10.0
    # Such large requests of one tenant run at most this many at a time in a replica (0: no
    # limit); one that waits `large_write_wait_s` for its turn answers 429 (tenant_gates).
    # Why 2: docs/decisions/0040-large-writes-per-tenant.md.
    large_writes_per_tenant: int = 2
    large_write_wait_s: float = 10.0
    # A write without `episode` joins its stream's current episode when saved within this
    # many minutes of it, else opens a new one (pcm_ingest.episodes); off: no episode.
    auto_episodes: bool = True
    auto_episode_gap_min: int = 60
    # Automatic captures (source `hook`) that are only acknowledgements or steering
    # ("sounds good", "try again") are skipped (pcm_common.domain.capture); explicit
    # stores never are. Off: every capture is stored.
    capture_gate: bool = True
    # The predictive gate behind it (pcm_ingest.capture_gate, domain.salience): a hook
    # capture that passed the word list is skipped when its prediction error against the
    # session's recent captures, the nearest memories of its owner and a coding session's
    # generic prior is below the threshold; skipped ones wait in a Redis buffer for
    # `capture_buffer_ttl_s` (consolidation distils them). Off: the word list alone.
    # Why these values: docs/decisions/0051-predictive-capture-gate.md.
    capture_salience: bool = True
    capture_salience_threshold: float = Field(0.45, ge=0.0, le=1.0)
    capture_neighbours: int = Field(3, ge=0, le=20)
    capture_context_size: int = Field(8, ge=0, le=50)
    capture_context_ttl_s: float = Field(7200.0, gt=0)
    capture_buffer_ttl_s: float = Field(86400.0, ge=0)
    capture_buffer_max: int = Field(2000, ge=1)
    # A litellm chat model that predicts the next capture from the session's context
    # (empty: none); its options (api_base, api_key, mock_response, ...) as JSON.
    capture_predict_model: str = ""
    capture_predict_options: dict[str, Any] = Field(default_factory=dict)
    capture_predict_timeout_s: float = Field(5.0, gt=0)
    # Valence, arousal and complexity of each memory (pcm_common.models.affect), for
    # state-dependent recall; off: stored as 0, 0, 0 (neutral).
    affect_tags: bool = True
