import phonenumbers
from pydantic import field_validator

from pcm_common.runtime.config import PcmSettings
from pcm_ingest.firewall import DEFAULT_PHONE_REGIONS, Action


class IngestSettings(PcmSettings):
    max_text_chars: int = 100_000
    max_batch: int = 1_000
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
    # Write firewall (pcm_ingest.firewall), per category: block (422, nothing stored),
    # redact ([REDACTED_<KIND>], status "redacted") or allow.
    firewall_secrets: Action = Action.BLOCK
    firewall_pii: Action = Action.REDACT
    # Regions whose national phone formats are recognised, tried in this order
    # (international +.. numbers always are).
    firewall_phone_regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS
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
    # Valence, arousal and complexity of each memory (pcm_common.models.affect), for
    # state-dependent recall; off: stored as 0, 0, 0 (neutral).
    affect_tags: bool = True

    @field_validator("firewall_phone_regions")
    @classmethod
    def _known_regions(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        # A typo ("UK" for "GB") would silently match no phone number at all.
        unknown = [r for r in v if r not in phonenumbers.SUPPORTED_REGIONS]
        if unknown:
            raise ValueError(f"unknown phone regions {unknown}: use ISO 3166 codes (GB, DE, ...)")
        return v
