"""Retrieval feedback (issue 36, item 3): the recall records and the feedback routes'
logic (`service`), the terms recall adds to its scores (`terms`), the bodies (`schemas`)
and settings (`settings`). The math is `pcm_common.domain.feedback`; the Redis keys are
`pcm_common.stores.redis.feedback`."""
