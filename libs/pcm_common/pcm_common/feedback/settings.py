from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from pcm_common.domain.feedback import FeedbackRule


class FeedbackSettings(BaseSettings):
    """Retrieval feedback (env `PCM_FEEDBACK_*`); mixed into the recall and ingest
    settings, which serve its two routes."""

    model_config = SettingsConfigDict(env_prefix="PCM_", extra="ignore")

    # Off: recall answers carry no recall_id, record nothing and add no feedback term.
    feedback_enabled: bool = True
    # How long a recall's record is kept for feedback (its id answers 404 after that).
    feedback_recall_ttl_s: int = Field(7 * 86_400, ge=60)
    # The most recalls whose cue terms a tenant keeps (the oldest go first).
    feedback_max_cues: int = Field(2_000, ge=1)
    # The bound on a memory's feedback term in one recall, and the query-to-cue cosines
    # where a cue's terms start to apply and apply fully (domain.feedback.FeedbackRule).
    feedback_max_bias: float = Field(0.3, ge=0.0, le=1.0)
    feedback_near: float = Field(0.75, ge=0.0, le=1.0)
    feedback_full: float = Field(0.9, ge=0.0, le=1.0)

    def feedback_rule(self) -> FeedbackRule:
        return FeedbackRule(
            max_bias=self.feedback_max_bias, near=self.feedback_near, full=self.feedback_full
        )
