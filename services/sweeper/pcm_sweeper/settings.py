from typing import Any

from pydantic import Field

from pcm_common.firewall.settings import FirewallSettings


# The firewall's settings (`FirewallSettings`): reconsolidation screens its rewrites as
# ingest screens writes.
class SweeperSettings(FirewallSettings):
    # Scheduler: wakes every `job_interval_s`; each job then runs at most once per its own
    # interval per tenant across all replicas (a Redis slot key decides who runs it).
    job_interval_s: float = 60.0
    demotion_interval_s: float = 3600.0
    consolidation_interval_s: float = 3600.0
    repair_interval_s: float = 900.0
    # Scope retention periods and memory caps (pcm_sweeper.governance).
    governance_interval_s: float = 3600.0
    # Strength updates held in Redis written into the payloads (`strength_fold`): each
    # fold moves the points it writes out of Qdrant Edge's indexed segment, so rarely.
    strength_fold_interval_s: float = 86400.0
    # At each scheduler tick, drop the stream entries every consumer group has processed
    # (`bus.trim_processed`): events carry memory texts, which should not outlive a delete
    # or a retention period in Redis. Off: streams keep up to PCM_STREAM_MAXLEN entries.
    stream_trim: bool = True
    # ... and the dead letters older than this many days (0: kept up to PCM_STREAM_MAXLEN).
    dead_letter_keep_days: float = 14.0
    lock_ttl_s: int = 600

    # Stream consumption: entries handled as one batch (one read, one XACK; the
    # extraction marks of a batch are one payload write).
    batch_max: int = 64
    # Batches of new memories handled at once per replica (readers of the stream).
    batch_readers: int = 2

    # Repair: a memory whose downstream work is missing this long after ingest is
    # re-published (at most once per grace period).
    repair_grace_s: float = 300.0
    # Outbox (pcm_common.messaging.outbox): every `outbox_interval_s` the events of new memories
    # whose publish failed after their upsert (noted more than `outbox_grace_s` ago, so
    # not a write still in flight) are published again.
    outbox_interval_s: float = 15.0
    outbox_grace_s: float = 20.0

    # Spreading activation (DESIGN §3).
    spread_top: int = 5
    spread_neighbours: int = 4
    spread_min_cos: float = 0.65
    spread_episode_weight: float = 0.7
    spread_episode_window_min: float = 60.0
    spread_beta: float = 0.5
    # A recall's side effects yield to recalls being served in the same process (the
    # embedded default): each store step waits at most `side_effects_yield_s` for none to
    # be in flight and none to have ended in the last `side_effects_quiet_s`.
    side_effects_yield_s: float = 0.05
    side_effects_quiet_s: float = 0.01

    # Consolidation (pcm_common.domain.consolidation).
    consolidation_min_members: int = 3
    consolidation_settle_h: float = 6.0
    # Consolidation also runs for a tenant that has written nothing for this long since
    # its last write (checked at each scheduler tick; 0: off), besides its hourly slot and
    # the hooks' PreCompact and Stop (`POST /v1/jobs/consolidation`).
    consolidation_idle_s: float = 900.0
    # Facts distilled from settled episodes and skipped captures (pcm_sweeper.distil): by
    # the LLM when PCM_EXTRACTOR=llm (PCM_EXTRACTION_MODEL; `distil_llm_options` go to
    # litellm as they are), else the graph extractor's relations as sentences. A fact at or
    # above `distil_duplicate_cos` to a stored fact of its owner adds its sources there.
    distil: bool = True
    distil_duplicate_cos: float = 0.92
    distil_llm_options: dict[str, Any] = Field(default_factory=dict)
    distil_timeout_s: float = 60.0

    # Surprisal judging (pcm_sweeper.judging): `local` (rules + statistics, default) or `llm`.
    surprisal_judge: str = "local"
    surprisal_judge_model: str = "ollama/qwen2.5:3b-instruct"
    surprisal_judge_api_base: str = ""
    surprisal_judge_timeout_s: float = 30.0
    # Family (DESIGN §3): up to 12 earlier memories with cos >= 0.45, at least 3 events
    # (4 for a category or content change: surprisal.CHANGE_FAMILY_MIN).
    # Why: docs/decisions/0026-surprisal-family-threshold.md.
    surprisal_family_min_cos: float = 0.45
    surprisal_family_max: int = 12
    surprisal_family_min: int = 3
    # Routine kin (pcm_sweeper.kin): a family is judged without the members that the
    # routine index places in another routine, plus its routine's entries in other
    # wordings; off: the family alone.
    surprisal_kin: bool = True
    surprisal_sweep_grace_s: float = 30.0
    surprisal_sweep_batch: int = 256
    surprisal_interval_s: float = 120.0  # the sweep that judges whatever was missed
    # Verdicts asked of a model judge at once per replica (the local judge gives a batch's
    # verdicts in one call). Safe: a judgement reads only earlier memories' vectors and
    # texts (already stored before the event) and writes the memory's own `surprisal`
    # field (and, on supersession, the older memory's state); a memory judged twice gets
    # the same verdict. Two updates of one memory judged at once both link to it, and the
    # later write names one of them as its `superseded_by`.
    surprisal_concurrency: int = 4
    # Supersession (pcm_common.domain.supersession): a memory that says it updates a
    # family member of the same user ("the standup is now at 10:00") marks that one
    # `superseded`; off: nothing is superseded automatically (PATCH still can).
    supersession: bool = True

    # Reconsolidation (pcm_sweeper.reconsolidation; the mnemos write-up's MutableRAG): the
    # first `reconsolidation_labile_top` memories a recall delivered (at most 20) are
    # labile for `reconsolidation_labile_s`; a newer memory of the same owner that
    # resembles one (cosine >= `reconsolidation_min_cos`, among its nearest
    # `reconsolidation_candidates`) and updates it (domain.reconsolidation) rewrites it as
    # a new version, at most once per `reconsolidation_cooldown_s` per memory and
    # `reconsolidation_max_per_recall` times per recall. The text: a chat model through
    # litellm when `reconsolidation_model` is set, else the local rule. Off: nothing is
    # made labile or rewritten. Why: docs/decisions/0053-reconsolidation.md.
    reconsolidation: bool = True
    reconsolidation_labile_s: float = 600.0
    reconsolidation_labile_top: int = Field(20, ge=0, le=20)
    reconsolidation_cooldown_s: float = 60.0
    reconsolidation_max_per_recall: int = Field(20, ge=0)
    # The floor is low on purpose: an update replaces the value, most of a short
    # statement's meaning, so its cosine with the earlier text can be as low as an
    # unrelated one's; the rules (which need shared frame words) decide, the floor only
    # drops texts with nothing in common (decision 0057).
    reconsolidation_min_cos: float = 0.25
    reconsolidation_candidates: int = Field(8, ge=1, le=64)
    reconsolidation_model: str = ""
    # With a model: it decides too (pcm_sweeper.deciding); off: it only words the rewrite.
    reconsolidation_model_decides: bool = True
    reconsolidation_api_base: str = ""
    reconsolidation_timeout_s: float = 30.0
