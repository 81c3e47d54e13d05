"""The local judge's token features kept in payloads, and family members read from them."""

from __future__ import annotations

import gc

import pytest

from pcm_common.judge import FamilyMember, local
from pcm_common.judge import features as feats
from pcm_common.judge.local import LocalJudge, judge_texts
from tests.unit.test_judges import RUNS as JUDGE_RUNS
from tests.unit.test_judges import rec

RUNS = JUDGE_RUNS[:5]  # a family of five similar runs
NEW = "Morning run on the treadmill at the hotel gym, 5.1 km, finished in 32:56."


def test_features_round_trip_and_refuse_other_texts() -> None:
    text = "Slept 7 hours  after the late shift; felt rested at 6:30."
    (toks,) = local._PARSER.parse([text])
    stored = feats.encode(toks)
    assert feats.decode(stored, text) == toks
    assert feats.decode(stored, text + " Then coffee.") is None  # the text changed
    assert feats.decode(stored.replace(f'"v":{feats.VERSION}', '"v":0'), text) is None  # another
    assert feats.decode("not json", text) is None
    assert feats.decode(None, text) is None


def test_family_member_reads_its_payload_fields() -> None:
    r = rec(RUNS[0], 1)
    payload = {**r.to_payload(), feats.FEATURES_FIELD: "x"}
    m = FamilyMember.of_payload(payload)
    assert (m.text, m.created_at, m.repeats, m.features) == (r.text, r.created_at, [], "x")
    naive = FamilyMember.of_payload({**payload, "created_at": "2024-01-02T19:00:00"})
    assert naive.created_at == r.created_at  # stored without a zone: UTC


async def test_stored_features_feed_the_judge_instead_of_a_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge = LocalJudge()
    family = [rec(t, i + 1) for i, t in enumerate(RUNS)]
    expected = judge_texts(NEW, [f.text for f in family])
    stored = {f.text: judge.stored_features(f) for f in family}
    assert all(feats.FEATURES_FIELD in s for s in stored.values())
    members = [FamilyMember.of_payload({**f.to_payload(), **stored[f.text]}) for f in family]
    # A fresh cache (a process that never parsed the family): nothing may be parsed
    # but the new memory itself.
    monkeypatch.setattr(local, "_PARSER", local._Parser())
    parsed: list[int] = []
    warm = local._PARSER.warm

    def counting_warm(texts: list[str]) -> int:
        parsed.append(warm(texts))
        return parsed[-1]

    monkeypatch.setattr(local._PARSER, "warm", counting_warm)
    memory = rec(NEW, 30)
    await judge.prepare([(memory, members)])
    assert await judge.judge(memory, members) == expected
    assert sum(parsed) == 1  # the new memory; its family came from the payloads


def test_derived_data_is_kept_per_text_and_equals_a_fresh_derivation() -> None:
    parser = local._Parser()
    texts = [RUNS[0], RUNS[1], RUNS[0]]
    first = parser.derived(texts)
    assert first[0] is first[2]  # one text for two events: one object, aligned once
    assert parser.derived(texts)[1] is first[1]  # cached
    for text, d in zip(texts, first, strict=True):
        (toks,) = parser.parse([text])
        fresh = local._derive(text, toks)
        assert d.quantities == fresh.quantities
        assert d.profile == fresh.profile


def test_cached_tokens_are_left_alone_by_the_garbage_collector() -> None:
    parser = local._Parser()
    (toks,) = parser.parse([RUNS[2]])
    parser.derived([RUNS[2]])
    gc.collect()
    entry = parser._cache[RUNS[2]]
    assert entry.rows and not any(gc.is_tracked(r) for r in entry.rows)
    assert entry.derived is not None
    assert parser.cached(RUNS[2]) == toks  # rebuilt as `Tok`s where they are read
