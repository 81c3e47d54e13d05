from pcm_common.runtime.config import PcmSettings


class GraphExtractorSettings(PcmSettings):
    # Events read and handled together (one extract_many, one set-based graph write).
    # Batches form from what arrived meanwhile; an idle replica never waits to fill one.
    batch_max: int = 64
    # Batches handled at once per replica (readers of the stream); their writes take turns.
    batch_readers: int = 2
    write_attempts: int = 3  # in-process retries (exponential backoff) before the bus retries
    write_backoff_s: float = 0.2
