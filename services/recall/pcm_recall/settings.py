from pcm_common.config import PcmSettings


class RecallSettings(PcmSettings):
    default_k: int = 50
    compact_k: int = 10
    max_k: int = 200
    relevance_floor: float = 0.35
    episode_window_min: int = 60
    episode_neighbours: int = 3
    scope_bonus_project: float = 0.02
    scope_bonus_workspace: float = 0.01
    max_pinned: int = 5
    port: int = 8082
