"""Local deterministic judge: robust statistics on the stated figures plus category and
content rules on spaCy parses (`pcm_common.domain.surprisal`). No model call, no network."""

from __future__ import annotations

import asyncio
import statistics
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pcm_common.domain import change_profile, changes
from pcm_common.domain import surprisal as sp
from pcm_common.domain.bare_figures import resolve
from pcm_common.domain.harmonise import harmonise
from pcm_common.domain.memory import MemoryRecord
from pcm_common.judge import Earlier, Judge, Verdict, features
from pcm_common.text.clean import brief

_TIME_LABELS = frozenset({"DATE", "TIME"})
# A family member quoted as the usual pattern is shown by its opening words: the verdict
# travels into every prompt that flags it, and the whole entry adds tokens, not meaning.
QUOTE_CHARS = 60
# Parsed texts kept (least recently used out). A family is the 12 nearest earlier memories,
# which may lie anywhere in the tenant: a cache smaller than the tenant makes each judgement
# parse evicted members again (CPU per ingested memory doubled from 4k to 10k memories with
# 4,096 entries kept in insertion order). ~4 KB per text: 32k texts ~130 MB.
_CACHE_SIZE = 32_768


def _noun_index(lemmatizer: Any) -> frozenset[str]:
    global _NOUNS
    if _NOUNS is None:
        table = lemmatizer.lookups.get_table("lemma_index", {})
        _NOUNS = frozenset(table.get("noun", ()))
    return _NOUNS


_NOUNS: frozenset[str] | None = None


def _initial_verb(t: Any, lemmatizer: Any) -> str | None:
    """The small model often tags a sentence-initial past tense as a name ("Slept 7 hours",
    "Ran 5 km"), which hides that it is the same verb as "sleep"/"run" elsewhere. A verb
    reading whose lemma differs from the word itself wins, unless the word is a known noun
    ("Rent ..." is not the verb "rend")."""
    if lemmatizer is None or not t.text[:1].isupper() or t.pos_ not in {"PROPN", "NOUN", "VERB"}:
        return None
    if t.text.lower() in _noun_index(lemmatizer):
        return None
    morph, pos = t.morph, t.pos_
    try:
        t.set_morph(None)
        t.pos_ = "VERB"
        lemma = lemmatizer.rule_lemmatize(t)[0].lower()
    finally:
        t.set_morph(morph)
        t.pos_ = pos
    return lemma if lemma != t.text.lower() else None


# Entity labels that name a person, place, organisation or product.
_NAME_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "FAC", "PRODUCT", "NORP", "EVENT", "WORK_OF_ART"}
)
# Dependencies that attach a word to the phrase it qualifies: a slot's role is its
# phrase's.
_PHRASE_DEPS = frozenset({"compound", "poss", "amod", "nmod", "appos", "flat", "conj", "nn"})
# A verb attached with one of these starts a clause of its own.
_CLAUSE_DEPS = frozenset({"conj", "ccomp", "advcl", "parataxis"})
_CLAUSE_MARKS = frozenset({";", "(", "[", "—", "–", "-", "--"})
_ROLE_OF_DEP = {"dobj": "obj", "obj": "obj", "nsubj": "subj", "nsubjpass": "subj", "ROOT": "root"}


def _clause_starts(doc: Any) -> set[int]:
    """Token positions where a clause begins: each sentence, each clause verb's left edge
    ("..., we talked", "because my chest felt tight"), and after a semicolon, a dash or
    an opening bracket."""
    starts = {sent.start for sent in doc.sents}
    for t in doc:
        if t.pos_ in {"VERB", "AUX"} and t.dep_ in _CLAUSE_DEPS:
            starts.add(t.left_edge.i)
        elif t.text in _CLAUSE_MARKS and t.i + 1 < len(doc):
            starts.add(t.i + 1)
    return starts


def _slot(t: Any) -> tuple[str, str]:
    """A noun's role (the preposition of its phrase, "obj", "subj", ...) and the lemma of
    its phrase's head."""
    h = t
    for _ in range(8):  # phrases are shallow; a bound keeps a malformed tree harmless
        if h.dep_ not in _PHRASE_DEPS or h.head is h:
            break
        h = h.head
    if h.dep_ == "pobj":
        role = h.head.lemma_.lower()
    else:
        role = _ROLE_OF_DEP.get(h.dep_, h.dep_)
    return role, h.lemma_.lower()


def _toks(doc: Any, lemmatizer: Any = None) -> list[sp.Tok]:
    out: list[sp.Tok] = []
    starts = _clause_starts(doc)
    clause = -1
    for sent in doc.sents:
        for t in sent:
            clause += t.i in starts
            verb = _initial_verb(t, lemmatizer) if t.i == sent.start else None
            pos = "VERB" if verb else t.pos_
            is_num = bool(t.like_num) or t.pos_ == "NUM" or t.ent_type_ == "MONEY"
            # NER's DATE/TIME spans ("this morning", "weekly", "about 40 minutes") vary
            # freely between phrasings of the same routine.
            is_time = t.ent_type_ in _TIME_LABELS and not verb
            named = t.ent_type_ in _NAME_LABELS or (pos == "PROPN" and t.i != sent.start)
            role, head = _slot(t) if pos in {"NOUN", "PROPN"} else ("", "")
            out.append(
                sp.Tok(
                    text=t.text,
                    lemma=verb or t.lemma_.lower(),
                    pos=pos,
                    sent=max(clause, 0),
                    is_stop=bool(t.is_stop),
                    is_num=is_num,
                    is_time=is_time,
                    is_name=named and not is_num and not is_time and not verb,
                    role=role,
                    head=head,
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class _Derived:
    """What the rules read of one text besides its tokens, derived once per cached text:
    a judgement compares up to 12 members that were compared the same way in earlier
    judgements (the same routine entries over and over)."""

    profile: change_profile.Profile
    quantities: tuple[sp.Quantity, ...]  # a tuple of tuples: not tracked by the collector


def _derive(text: str, rows: tuple[sp.TokRow, ...]) -> _Derived:
    quantities = tuple(sp.parse_quantities(text))
    profile = change_profile.profile(
        sp.from_rows(rows), [q.key for q in quantities], [(q.key, q.text) for q in quantities]
    )
    return _Derived(profile, quantities)


@dataclass(slots=True)
class _Entry:
    # The tokens as plain tuples, which the garbage collector stops walking
    # (docs/decisions/0029-judge-tokens-as-tuples.md).
    rows: tuple[sp.TokRow, ...]
    derived: _Derived | None = None  # on first use: most parsed texts are never compared


class _Parser:
    """spaCy parses cached by text: family members are parsed again for every newer
    memory of the routine. Where this process also runs the local extractor, parses are
    shared with it both ways (`pcm_common.extract.parsing.SHARED_DOCS`), so a written
    memory is parsed once."""

    def __init__(self) -> None:
        self._cache: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._listening = False

    def listen(self) -> None:
        """Take over the local extractor's parses of whole memory texts from now on."""
        if self._listening:
            return
        from pcm_common.extract.parsing import SHARED_DOCS

        SHARED_DOCS.listeners.append(self.remember)
        self._listening = True

    def remember(self, text: str, doc: Any) -> None:
        """Cache the tokens of `doc`, a parse of `text` by the shared pipeline."""
        if len(text) > 2000:  # parse() sees the first 2000 characters only
            return
        with self._lock:
            if text in self._cache:  # the judge was first
                return
        from pcm_common.extract.parsing import load_pipeline

        nlp = load_pipeline()
        lemmatizer = nlp.get_pipe("lemmatizer") if "lemmatizer" in nlp.pipe_names else None
        toks = _toks(doc, lemmatizer)
        rows = sp.tok_rows(toks)
        with self._lock:
            self._cache[text] = _Entry(rows)
            self._cache.move_to_end(text)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)

    def warm(self, texts: Sequence[str]) -> int:
        """Parse, as one batch, those of `texts` not cached yet; returns how many. A batch
        of judgements warmed together parses its unseen family members in one `nlp.pipe`,
        at half the cost per text (docs/decisions/0030-parse-once-in-batches.md)."""
        from pcm_common.extract import parse_process
        from pcm_common.extract.parsing import SHARED_DOCS, load_pipeline, parsing_lock

        with self._lock:
            wanted = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if not wanted:
            return 0
        nlp = load_pipeline()
        # Under the pipeline lock: a batch this process's extractor is parsing right now
        # is waited for and heard (it offers its parses before letting go) instead of
        # being parsed a second time here (docs/decisions/0030-parse-once-in-batches.md).
        lemmatizer = nlp.get_pipe("lemmatizer") if "lemmatizer" in nlp.pipe_names else None
        with parsing_lock():
            with self._lock:
                missing = [t for t in wanted if t not in self._cache]
            docs = parse_process.parse([t[:2000] for t in missing])
            for text, doc in zip(missing, docs, strict=True):
                SHARED_DOCS.put(text[:2000], doc)  # done with it: the extractor may take it
            # Cached before the lock is let go: a second batch of judgements (the sweeper
            # reads two at once) waiting on it then finds these instead of parsing them again.
            parsed = [sp.tok_rows(_toks(doc, lemmatizer)) for doc in docs]
            with self._lock:
                for text, rows in zip(missing, parsed, strict=True):
                    self._cache[text] = _Entry(rows)
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return len(missing)

    def missing(self, texts: Sequence[str]) -> list[str]:
        """Those of `texts` not cached, under one lock."""
        with self._lock:
            return [t for t in texts if t not in self._cache]

    def cached(self, text: str) -> list[sp.Tok] | None:
        with self._lock:
            entry = self._cache.get(text)
        return sp.from_rows(entry.rows) if entry is not None else None

    def seed(self, text: str, toks: list[sp.Tok]) -> None:
        """Cache `toks`, the tokens of `text` read back from its payload (`features`)."""
        rows = sp.tok_rows(toks)
        with self._lock:
            if text in self._cache:
                return
            self._cache[text] = _Entry(rows)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)

    def _entries(self, texts: Sequence[str]) -> list[_Entry]:
        from pcm_common.extract.parsing import load_pipeline

        with self._lock:
            # Usually all cached (`prepare` warmed them): `warm` would look each up twice.
            missing = any(t not in self._cache for t in texts)
        if missing:
            self.warm(texts)
        with self._lock:
            out: list[_Entry] = []
            for t in texts:
                cached = self._cache.get(t)
                if cached is not None:
                    self._cache.move_to_end(t)  # routines reuse their members: keep them
                # Evicted meanwhile by another thread: parse alone.
                out.append(cached or _Entry(sp.tok_rows(_toks(load_pipeline()(t[:2000])))))
            return out

    def parse(self, texts: Sequence[str]) -> list[list[sp.Tok]]:
        return [sp.from_rows(e.rows) for e in self._entries(texts)]

    def derived(self, texts: Sequence[str]) -> list[_Derived]:
        """`_Derived` of each text, parsed where needed; a text given twice yields the
        same object (`sp.detect_changes_in` aligns it once)."""
        out: list[_Derived] = []
        for text, entry in zip(texts, self._entries(texts), strict=True):
            if entry.derived is None:
                # Outside the lock: two threads racing here derive equal values.
                entry.derived = _derive(text, entry.rows)
            out.append(entry.derived)
        return out


_PARSER = _Parser()


def judge_texts(text: str, family: Sequence[str]) -> Verdict:
    """The local verdict for `text` against its family's texts (nearest first)."""
    if not family:
        return Verdict(score=0.0)
    mine, *members = _PARSER.derived([text, *family])
    candidates = _value_verdicts(mine, members) + _change_verdicts(mine, members, family)
    return _strongest(candidates, len(family))


def _value_verdicts(mine: _Derived, members: list[_Derived]) -> list[Verdict]:
    """Value outliers: each stated quantity against the same quantity in the comparable
    family members."""
    own, *raw = harmonise(
        [mine.quantities, *(m.quantities for m in members if _comparable(mine.profile, m.profile))]
    )
    common = usual_keys([own, *raw])
    currencies = {q.key for qs in [own, *raw] for q in qs if q.kind == "money"}
    if len(currencies) == 1:
        common |= currencies
    # Bare figures resolved to the family's kinds ("bed 2336" among bedtimes) may settle
    # what was ambiguous ("from 11:11": evening), so the forms are read alike once more.
    typical = _typical(raw)
    own, *peers = harmonise([resolve(q, common, typical) for q in (own, *raw)])
    out: list[Verdict] = []
    for d in sp.value_deviations(own, peers):
        usual = (
            f"usually {sp.describe_value(d.median, d.kind)} "
            f"(range {sp.describe_value(d.low, d.kind)}–{sp.describe_value(d.high, d.kind)} "
            f"over {len(peers)} earlier entries)"
        )
        direction = "higher" if d.value > d.median else "lower"
        out.append(
            Verdict(
                score=round(d.score, 4),
                differs=f"{d.text} is far {direction} than usual",
                usual=usual,
                kind="value",
            )
        )
    return out


def _change_verdicts(
    mine: _Derived, members: list[_Derived], family: Sequence[str]
) -> list[Verdict]:
    """Changes of category and added events, in a family large enough to show a habit."""
    n = len(family)
    report = (
        changes.detect_changes(mine.profile, [m.profile for m in members])
        if n >= sp.CHANGE_FAMILY_MIN
        else changes.ChangeReport()
    )
    out: list[Verdict] = []
    for c in report.changes:
        if c.kind == "category":
            differs = f"'{c.new}' instead of '{c.usual}'" if c.usual else f"new: '{c.new}'"
            usual = (
                f"usually '{c.usual}' ({c.share:.0%} of {n} earlier entries)"
                if c.usual
                else f"none of {n} earlier entries mentions it: '{brief(family[0], QUOTE_CHARS)}'"
            )
        else:
            differs = f"something new: '{c.new}'"
            usual = (
                f"none of {n} earlier entries mentions anything like it: "
                f"'{brief(family[0], QUOTE_CHARS)}'"
            )
        out.append(Verdict(score=round(c.score, 4), differs=differs, usual=usual, kind=c.kind))
    return out


def _strongest(candidates: list[Verdict], n: int) -> Verdict:
    """The strongest departure, raised and joined by the other flaggable ones."""
    if not candidates:
        return Verdict(score=0.0, usual=f"in line with {n} earlier entries")
    best = max(candidates, key=lambda v: v.score)
    # Several independent departures are more surprising than one; the others are noted.
    others = [
        v
        for v in candidates
        if v is not best and v.score >= sp.FLAG_MIN_SCORE and v.differs != best.differs
    ]
    if others:
        best = best.model_copy(
            update={
                "score": min(1.0, best.score + 0.05 * len(others)),
                "differs": "; ".join([best.differs, *(v.differs for v in others)]),
            }
        )
    return best


def _typical(texts: Sequence[Sequence[sp.Quantity]]) -> dict[str, float]:
    """The median of each kind the texts state outright (bare figures left out)."""
    values: dict[str, list[float]] = {}
    for qs in texts:
        for q in qs:
            if not q.key.startswith("number"):
                values.setdefault(q.key, []).append(q.value)
    return {k: statistics.median(v) for k, v in values.items()}


def usual_keys(texts: Sequence[Sequence[sp.Quantity]]) -> set[str]:
    """The quantity keys at least a third of the texts state: a routine written in three
    phrasings, one of which leaves its figure bare ("RHR 57"), still has its kind."""
    counts: dict[str, int] = {}
    for qs in texts:
        for key in {q.key for q in qs}:
            counts[key] = counts.get(key, 0) + 1
    return {k for k, c in counts.items() if 3 * c >= len(texts)}


def _comparable(a: change_profile.Profile, b: change_profile.Profile) -> bool:
    """Whether `b`'s figures may measure what `a`'s do: the texts share a word, or `b`
    states a figure of a kind `a` states (of every kind, when `a` names something) and
    names nothing `a` does not. The family is
    already the memory's nearest texts; this keeps a grocery bill from being compared with
    a pharmacy copay that lies near it, while a routine's other phrasings ("Scale: 84 kg",
    "Weighed in at 84 kg") still count."""
    words_a = change_profile.words(a)
    if words_a & b.content:
        return True
    kinds_a = a.content - words_a
    if not kinds_a & b.content or not b.names <= a.names:
        return False
    # A text naming a place or provider that `b` does not, and sharing no word with it,
    # is compared only with what measures everything it does: a gym log's "76 min at
    # PulseFit, bench 107.5 kg" is no weigh-in's "74.4 kg", whose kilograms are another
    # series'. ("Scale: 191.8 lbs, body fat 24%" names nothing: any weigh-in compares.)
    return not a.names or kinds_a <= b.content


def family_texts(memory: MemoryRecord, family: Sequence[Earlier]) -> list[str]:
    """One text per earlier event: a member stored once with repeats (exact or near
    duplicates) stands for each of its earlier repeats too."""
    out: list[str] = []
    for f in family:
        out += [f.text] * (1 + sum(1 for r in f.repeats if r < memory.created_at))
    return out


class LocalJudge(Judge):
    def __init__(self) -> None:
        _PARSER.listen()

    async def prepare(self, judgements: Sequence[tuple[MemoryRecord, Sequence[Earlier]]]) -> None:
        texts: list[str] = []
        for memory, family in judgements:
            if family:  # judge_texts parses nothing for an empty family
                _seed(family)
                texts += [memory.text, *family_texts(memory, family)]
        await asyncio.to_thread(_PARSER.warm, texts)

    async def judge(self, memory: MemoryRecord, family: Sequence[Earlier]) -> Verdict:
        _seed(family)
        # spaCy is CPU work: off the event loop.
        return await asyncio.to_thread(judge_texts, memory.text, family_texts(memory, family))

    async def judge_many(
        self,
        items: Sequence[tuple[MemoryRecord, Sequence[Earlier]]],
        timeout_s: float,
        concurrency: int = 4,
    ) -> list[Verdict | Exception]:
        """Every verdict of a batch in one worker-thread call: rules on cached parses are
        CPU work with nothing to wait for, and a thread hop per memory cost more than
        some of the verdicts. No timeout applies (nothing here can hang)."""
        for _, family in items:
            _seed(family)
        jobs = [(m.text, family_texts(m, f)) for m, f in items]
        return await asyncio.to_thread(_judge_all, jobs)

    def stored_features(self, memory: MemoryRecord) -> dict[str, Any]:
        """The memory's tokens, when this process parsed it (it did, for a memory it just
        judged or one its extractor parsed): later judgements read them back instead of
        parsing it again (`features`)."""
        toks = _PARSER.cached(memory.text)
        return {features.FEATURES_FIELD: features.encode(toks)} if toks is not None else {}


def _judge_all(jobs: Sequence[tuple[str, list[str]]]) -> list[Verdict | Exception]:
    out: list[Verdict | Exception] = []
    for text, family in jobs:
        try:
            out.append(judge_texts(text, family))
        except Exception as exc:  # one malformed memory fails alone
            out.append(exc)
    return out


def _seed(family: Sequence[Earlier]) -> None:
    """Cache the stored tokens of the family members this process has no parse of."""
    stored: dict[str, list[Any]] = {}
    for f in family:
        if (s := getattr(f, "features", None)) is not None:
            stored.setdefault(f.text, []).append(s)
    if not stored:
        return
    # One look-up under one lock for the family, not one per member (twice a judgement).
    for text in _PARSER.missing(list(stored)):
        for s in stored[text]:  # the first that decodes, as members come
            toks = features.decode(s, text)
            if toks is not None:
                _PARSER.seed(text, toks)
                break
