"""The feedback terms recall reads (`pcm_common.feedback.terms`) over the Redis records
(`pcm_common.stores.redis.feedback`), on fakeredis: near queries get the terms, far ones
and other users do not, a change is seen by the next recall, and the oldest cues go past
the cap."""

from __future__ import annotations

from datetime import UTC, datetime

import fakeredis

from pcm_common.domain.feedback import FeedbackRule
from pcm_common.feedback.terms import FeedbackTerms
from pcm_common.stores.redis import keys as rkeys
from pcm_common.stores.redis.feedback import FeedbackStore, RecallRecord, pack_vector

RULE = FeedbackRule()
AT = datetime(2026, 1, 1, tzinfo=UTC)


def unit(*xs: float) -> list[float]:
    return [*xs, *([0.0] * (8 - len(xs)))]


def record(rid: str, cue: list[float], user: str | None = "ana") -> RecallRecord:
    return RecallRecord(
        recall_id=rid, at=AT, user_id=user, cue=pack_vector(cue), delivered=["m1", "m2"]
    )


async def test_terms_apply_near_the_cue_for_its_user_only() -> None:
    redis = fakeredis.FakeAsyncRedis()
    store = FeedbackStore(redis, ttl_s=60, max_cues=10)
    terms = FeedbackTerms(store, RULE)
    assert await terms.bias("t", "ana", unit(1.0)) == {}  # nothing yet: one GET, no load
    rec = record("r1", unit(1.0))
    await store.remember("t", rec)
    await store.save("t", rec, {"m1": RULE.helpful, "m2": RULE.not_helpful})
    same = await terms.bias("t", "ana", unit(1.0))
    assert same == {"m1": RULE.helpful, "m2": RULE.not_helpful}
    # cos 0.6 (< near): nothing; another user: nothing; another tenant: nothing.
    assert await terms.bias("t", "ana", unit(0.6, 0.8)) == {}
    assert await terms.bias("t", "ben", unit(1.0)) == {}
    assert await terms.bias("u", "ana", unit(1.0)) == {}
    # Between near and full: part of the term.
    part = await terms.bias("t", "ana", unit(0.8, 0.6))
    assert 0 < part["m1"] < RULE.helpful
    # A change is read by the next recall (the version moved).
    await store.save("t", rec, {"m1": RULE.not_helpful})
    assert await terms.bias("t", "ana", unit(1.0)) == {"m1": RULE.not_helpful}
    await store.set_memory_signal("t", "m3", "wrong")
    assert (await terms.bias("t", "ben", unit(0.0, 1.0)))["m3"] == RULE.memory_wrong
    await redis.aclose()


async def test_many_cues_stay_bounded_and_the_oldest_go() -> None:
    redis = fakeredis.FakeAsyncRedis()
    store = FeedbackStore(redis, ttl_s=60, max_cues=3)
    terms = FeedbackTerms(store, RULE)
    for n in range(5):
        rec = record(f"r{n}", unit(1.0)).model_copy(update={"at": AT.replace(hour=n)})
        await store.remember("t", rec)
        await store.save("t", rec, {"m1": RULE.missed})
    _, cues, _ = await store.load("t")
    assert len(cues) == 3  # r0 and r1 went
    assert (await terms.bias("t", "ana", unit(1.0)))["m1"] == RULE.max_bias  # 3 × 0.15, capped
    await redis.aclose()


async def test_a_record_expires_with_its_ttl_kept_on_save() -> None:
    redis = fakeredis.FakeAsyncRedis()
    store = FeedbackStore(redis, ttl_s=60, max_cues=3)
    rec = record("r", unit(1.0))
    await store.remember("t", rec)
    rec.signals["m1"] = "helpful"
    await store.save("t", rec, {"m1": RULE.helpful})
    got = await store.record("t", "r")
    assert got is not None and got.signals == {"m1": "helpful"}
    assert 0 < await redis.ttl(rkeys.feedback_recall("t", "r")) <= 60
    assert await store.record("other", "r") is None
    await redis.aclose()


async def test_erasure_scrubs_the_askers_records_and_the_erased_memories() -> None:
    from pcm_common.data.erasure_scrub import Asker, scrub_keys

    redis = fakeredis.FakeAsyncRedis()
    store = FeedbackStore(redis, ttl_s=60, max_cues=10)
    terms = FeedbackTerms(store, RULE)
    ana, ben = record("ra", unit(1.0), "ana"), record("rb", unit(1.0), "ben")
    for rec in (ana, ben):
        await store.remember("t", rec)
        await store.save("t", rec, {"m1": RULE.helpful})
    await store.set_memory_signal("t", "m9", "helpful")
    # Erasing user ana: her recall and its terms go, ben's stay.
    assert await scrub_keys(redis, "t", set(), [], Asker(user_id="ana")) == 2
    assert await store.record("t", "ra") is None and await store.record("t", "rb") is not None
    assert await terms.bias("t", "ana", unit(1.0)) == {"m9": RULE.memory_helpful}
    assert (await terms.bias("t", "ben", unit(1.0)))["m1"] == RULE.helpful
    # Erasing memory m1 (and m9): every record and term naming them goes.
    await scrub_keys(redis, "t", {"m1", "m9"}, [])
    assert await store.record("t", "rb") is None
    assert await terms.bias("t", "ben", unit(1.0)) == {}
    await redis.aclose()
