from pcm_common.config import PcmSettings


class SweeperSettings(PcmSettings):
    job_interval_s: float = 60.0
    repair_grace_s: float = 300.0  # a memory not extracted after this long is re-published
    lock_ttl_s: int = 600
    spread_neighbours: int = 4
    port: int = 8084
