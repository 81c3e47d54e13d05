from pcm_common.config import PcmSettings


class GraphExtractorSettings(PcmSettings):
    write_attempts: int = 3  # in-process retries before the entry is left for reclaim
    port: int = 8083
