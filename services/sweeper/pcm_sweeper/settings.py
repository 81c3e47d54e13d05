from pcm_common.config import PcmSettings


class SweeperSettings(PcmSettings):
    # Scheduler: wakes every `job_interval_s`; each job then runs at most once per its own
    # interval per tenant across all replicas (a Redis slot key decides who runs it).
    job_interval_s: float = 60.0
    demotion_interval_s: float = 3600.0
    consolidation_interval_s: float = 3600.0
    repair_interval_s: float = 900.0
    lock_ttl_s: int = 600

    # Repair: a memory whose downstream work is missing this long after ingest is
    # re-published (at most once per grace period).
    repair_grace_s: float = 300.0

    # Spreading activation (DESIGN §3).
    spread_top: int = 5
    spread_neighbours: int = 4
    spread_min_cos: float = 0.65
    spread_episode_weight: float = 0.7
    spread_episode_window_min: float = 60.0
    spread_beta: float = 0.5

    # Consolidation (pcm_common.domain.consolidation).
    consolidation_min_members: int = 3
    consolidation_settle_h: float = 6.0

    port: int = 8084
