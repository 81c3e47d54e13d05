from pydantic import Field

from pcm_common.feedback.settings import FeedbackSettings
from pcm_common.models.rerank import RerankerSettings
from pcm_common.runtime.config import PcmSettings
from pcm_recall.precise import PreciseRule


class RecallSettings(PcmSettings, RerankerSettings, FeedbackSettings):
    default_k: int = 50
    compact_k: int = 10
    max_k: int = 200
    # Dense + lexical (BM25-style sparse) candidates fused by reciprocal rank inside Qdrant.
    hybrid: bool = True
    # RRF constant: 10 rather than the customary 60, because the head of each list matters
    # most here. Why 10: docs/decisions/0011-rrf-fusion-k.md.
    fusion_k: int = 10
    # Cosine floor: candidates less similar than this are dropped even when fused in by
    # a lexical match, so an unrelated query returns "No relevant memories found".
    relevance_floor: float = 0.30
    # Cue-dependent reactivation of demoted memories: an archived memory this close to the
    # query (cosine) is recalled without include_archived, well above the active floor.
    archived_recall_min_cos: float = 0.4
    # ... or this relevance: the fused rank score, 1.0 near the top of both the dense and
    # the lexical list, 0.55 first of one list: the best match in the whole store for this
    # query; above 1 turns it off. Why both: docs/decisions/0012-archived-recall-gates.md.
    archived_recall_min_rel: float = 0.55
    # Archived memories next to a recalled seed (same episode, within the window) come back
    # in its episode context; false: only active ones (include_archived always admits them).
    archived_episode_neighbours: bool = True
    # Where the cue starts restoring strength in the score (S*), and over what span it
    # restores it fully, for the fused rank relevance (a reranker's probability uses
    # DESIGN §3's 0.5 and 0.3): fully at 0.55, the cue that reactivates an archived memory.
    # Why: docs/decisions/0013-fused-cue-reactivation.md.
    fused_cue_start: float = 0.35
    fused_cue_span: float = 0.2
    # State-dependent recall (pcm_common.domain.affect): a query whose arousal or
    # complexity is above `affect_min_charge` adds up to `affect_weight` x its state match to
    # each candidate's score; a neutral query is ranked as without it. 0: off.
    # Why gated: docs/decisions/0014-affect-gate.md.
    affect_weight: float = 0.2
    affect_min_charge: float = 0.5
    # Which queries are charged (issue 36 item 7): urgency only, the higher of the word
    # cues' arousal and the query's closeness to urgent rather than calm situations
    # (`affect.urgency`: a prototype margin of `affect_urgency_offset` reads as the 0.5
    # threshold, `offset + span` as 1). False: the earlier rule (arousal or complexity from
    # the words alone). Why: docs/decisions/0052-associative-recall.md.
    affect_urgency_prototypes: bool = True
    affect_urgency_offset: float = 0.12
    affect_urgency_span: float = Field(0.2, gt=0.0)
    # Associative recall (`mode: "associative"`, pcm_common.domain.association): energy
    # from the best `associative_seeds` memories (the best 1.0, the others by their score)
    # spreads over similarity (cosine >= `associative_min_cos`, `associative_similar` a
    # memory), same-episode (`associative_episode` each side within the episode window) and
    # graph (`associative_graph` sharing an entity) edges, keeping 1 - `associative_decay`
    # a hop and stopping below `associative_min_energy`; at most `associative_max_hops`
    # hops from `associative_frontier` memories each, and `associative_max` memories
    # returned. Why these: docs/decisions/0052-associative-recall.md.
    associative_seeds: int = Field(3, ge=1, le=50)
    associative_decay: float = Field(0.2, gt=0.0, lt=1.0)
    associative_min_energy: float = Field(0.3, gt=0.0, le=1.0)
    associative_max_hops: int = Field(2, ge=1, le=6)
    associative_frontier: int = Field(6, ge=1, le=50)
    associative_max: int = Field(10, ge=0, le=100)
    associative_min_cos: float = Field(0.6, ge=-1.0, le=1.0)
    associative_similar: int = Field(3, ge=0, le=20)
    associative_episode: int = Field(2, ge=0, le=20)
    associative_graph: int = Field(3, ge=0, le=20)
    associative_timeout_s: float = Field(0.5, gt=0.0)
    episode_window_min: int = 60
    # ±2 around more seeds beats ±3 around fewer at the same prompt size: evidence next to a
    # seed is mostly one or two turns away (docs/decisions/0015-episode-neighbours.md).
    episode_neighbours: int = 2
    # Of the best-ranked memories, those asking a question bring the next memory of their
    # episode (the answer often names nothing the query does); 0: off.
    # Why 10: docs/decisions/0016-answer-after-question.md.
    episode_answer_seeds: int = 10
    # A query that names a time ("in April 2022", "last week": `domain.time_cues`) is also
    # searched among the memories written then, and each of those ranks by the higher of
    # its place overall and `time_cue_weight` x its place among them (`within_span`).
    time_cues: bool = True
    time_cue_weight: float = Field(1.0, gt=0)
    scope_bonus_project: float = 0.02
    scope_bonus_workspace: float = 0.01
    max_pinned: int = 5
    # Memories linked to the query's entities join the candidates with the bonus 0.15·ℓ.
    graph_links: bool = True
    graph_link_timeout_s: float = 0.5  # recall answers without the graph past this
    graph_max_links: int = 20
    graph_max_df: int = 50  # entities in more memories than this link nothing (too broad)
    graph_max_df_share: float = 0.05
    # Query entities from the query's word n-grams matched against the graph's keys (no
    # parse on the recall path); false: the graph's extractor parses the query.
    graph_query_ngrams: bool = True
    # A type word in the query ("which cities has Jon visited?") links the memories that
    # name one of the query's entities and an entity of that type ("a trip to Rome"),
    # walking only entities named in at most `graph_typed_max_df` memories.
    graph_typed_links: bool = True
    graph_typed_max_df: int = 500
    # Cosine floor for graph-linked memories: sharing a rare entity with the query is
    # evidence of topicality the cosine floor exists to demand.
    # Why 0.20: docs/decisions/0017-graph-link-floor.md.
    graph_link_floor: float = 0.20
    # Episode-context seeds beyond `scoring.episode_seeds(k)`: the best-ranked linked
    # memories, or the next-ranked memories when nothing is linked (equal prompt size).
    # Why 3: docs/decisions/0018-graph-seeds.md.
    graph_seeds: int = 3
    # Neighbours on each side of a graph-linked seed (other seeds: episode_neighbours); the
    # design's ±3. Why: docs/decisions/0020-graph-seed-neighbours.md.
    graph_seed_neighbours: int = 3
    # Weight of the link strength ℓ in the score (DESIGN §3's start value; the values
    # tried were within run-to-run spread: docs/decisions/0019-graph-link-weight.md).
    graph_link_weight: float = 0.15
    flags_enabled: bool = True
    # Flags may also come from candidates just under the relevance floor (ranked after
    # everything recalled): an everyday request often reaches its routine only there
    # (docs/decisions/0023-stopped-routine-flag-reach.md).
    flags_use_pool: bool = True
    # A seed's consolidated episode record replaces its neighbour expansion when it is at
    # most this long (a whole short episode costs about what six neighbours cost).
    episode_record_max_chars: int = 1_600
    # Precise mode (`precision: "precise"`, pcm_recall.precise): the most it delivers
    # when the request names no k, the absolute test on the best candidate's cosine, each
    # delivered memory's own cosine floor, the knee on the scores (within
    # `precise_score_ratio` of the best, no drop between neighbours larger than
    # `precise_max_gap` of it), the seeds strong enough for episode neighbours and how many
    # on each side. How they were chosen: docs/decisions/0024-precise-recall-rule.md.
    precise_k: int = Field(10, ge=1, le=200)
    precise_min_top_cosine: float = Field(0.5, ge=0.0, le=1.0)
    precise_min_cosine: float = Field(0.25, ge=0.0, le=1.0)
    precise_score_ratio: float = Field(0.5, ge=0.0, le=1.0)
    precise_max_gap: float = Field(0.4, ge=0.0, le=1.0)
    precise_seed_ratio: float = Field(0.85, ge=0.0, le=1.0)
    precise_neighbours: int = Field(2, ge=0, le=5)

    def precise_rule(self) -> PreciseRule:
        return PreciseRule(
            min_top_cosine=self.precise_min_top_cosine,
            min_cosine=self.precise_min_cosine,
            score_ratio=self.precise_score_ratio,
            max_gap=self.precise_max_gap,
            seed_ratio=self.precise_seed_ratio,
        )
