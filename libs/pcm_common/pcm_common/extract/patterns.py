"""The local extractor's rules over one parsed segment: named entities (retyped where the
technology lexicon knows better), concepts and activities, and a handful of
high-precision dependency patterns for relations; `Collector` keeps what they find, one
entity per key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pcm_common.extract.lexicon import (
    EDGE_JUNK,
    GENERIC_NOUNS,
    LABEL_TYPES,
    LIGHT_VERBS,
    PLACE_LABELS,
    PROJECT_HEADS,
    SELF,
    clean_name,
    compound_phrase,
    is_technology,
    keep_time,
)
from pcm_common.stores.graph.port import Entity, Extraction, Relation


class Collector:
    """Entities deduplicated by key within one extraction; relation patterns may retype."""

    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.relations: dict[tuple[str, str, str], Relation] = {}

    def add(self, entity: Entity | None, *, override: bool = False) -> Entity | None:
        if entity is None or not entity.name or len(entity.name) > 120:
            return None
        known = self.entities.get(entity.key)
        if known is not None and not override:
            return known
        self.entities[entity.key] = entity
        return entity

    def relate(self, source: Entity | None, rtype: str, target: Entity | None) -> None:
        if source is None or target is None or source.key == target.key:
            return
        # Re-read from the map so both ends carry the entity's final type.
        s = self.entities.get(source.key, source)
        t = self.entities.get(target.key, target)
        self.relations.setdefault((s.key, rtype, t.key), Relation(s, rtype, t))

    def result(self) -> Extraction:
        rels = [
            Relation(
                self.entities.get(r.source.key, r.source),
                r.type,
                self.entities.get(r.target.key, r.target),
            )
            for r in self.relations.values()
        ]
        return Extraction(entities=list(self.entities.values()), relations=rels)


class Sentence:
    """Pattern matching over one parsed segment, with the segment's speaker (if any)."""

    def __init__(self, doc: Any, speaker: Entity | None, out: Collector) -> None:
        self.doc = doc
        self.speaker = speaker
        self.out = out
        self.ent_of: dict[int, Any] = {}
        for ent in doc.ents:
            for tok in ent:
                self.ent_of[tok.i] = ent

    # -- entities ---------------------------------------------------------------------------
    def collect_entities(self) -> None:
        for ent in self.doc.ents:
            etype = LABEL_TYPES.get(ent.label_)
            name = clean_name(ent.text)
            if etype is None or not name or not any(c.isalpha() or c.isdigit() for c in name):
                continue
            if etype == "Time" and not keep_time(name):
                continue
            if etype != "Time" and is_technology(name):
                etype = "Technology"  # the small NER model calls Redis a PERSON
            self.out.add(Entity(name, etype))
        for tok in self.doc:
            if tok.i not in self.ent_of and is_technology(tok.text):
                self.out.add(Entity(tok.text, "Technology"))

    def collect_concepts(self) -> None:
        """Common nouns as Concept (lemma; plus "compound head" phrases such as "support
        group") and content verbs as Activity (lemma), linking the speaker with DOES."""
        for tok in self.doc:
            lemma = self._content_lemma(tok)
            if lemma is None:
                continue
            if tok.pos_ == "NOUN" and lemma not in GENERIC_NOUNS:
                self.out.add(Entity(lemma, "Concept"))
                phrase = compound_phrase(tok, lemma)
                if phrase is not None:
                    self.out.add(Entity(phrase, "Concept"))
            elif tok.pos_ == "VERB" and lemma not in LIGHT_VERBS:
                activity = self.out.add(Entity(lemma, "Activity"))
                subj = self._subject(tok)
                if subj is not None and subj.lower_ in SELF and self.speaker is not None:
                    self.out.relate(self.speaker, "DOES", activity)

    def _content_lemma(self, tok: Any) -> str | None:
        """The lemma a concept or activity is named by; None for names, technologies,
        stop words and lemmas too short or not alphabetic."""
        if tok.i in self.ent_of or is_technology(tok.text) or tok.is_stop:
            return None
        lemma = str(tok.lemma_).lower().strip(EDGE_JUNK)
        return lemma if len(lemma) >= 3 and lemma.isalpha() else None

    def _phrase(self, tok: Any) -> str:
        ent = self.ent_of.get(tok.i)
        if ent is not None:
            return clean_name(ent.text)
        near = tok.i - 3  # at most three modifiers: "Acme cloud billing service"
        parts = [c for c in tok.lefts if c.dep_ in ("compound", "flat", "amod") and c.i >= near]
        parts += [tok]
        parts += [c for c in tok.rights if c.dep_ == "flat"]
        return clean_name(" ".join(p.text for p in sorted(parts, key=lambda t: t.i)))

    def _is_namey(self, tok: Any) -> bool:
        return tok.pos_ == "PROPN" or tok.i in self.ent_of or is_technology(tok.text)

    def entity(self, tok: Any, want: str) -> Entity | None:
        """Entity for ``tok`` in a slot that expects type ``want`` (None when unsuitable)."""
        low = tok.lower_
        if low in SELF:
            return self.speaker if want == "Person" else None
        if tok.pos_ == "PRON":
            return None
        ent = self.ent_of.get(tok.i)
        label = ent.label_ if ent is not None else None
        name = self._phrase(tok)
        if not name:
            return None
        if want == "Technology":
            if label in PLACE_LABELS or label in ("DATE", "TIME", "CARDINAL", "MONEY"):
                return None
            # Named, in the lexicon, or CamelCase ("FastAPI" is often tagged NOUN).
            if self._is_namey(tok) or any(ch.isupper() for ch in tok.text[1:]):
                return self.out.add(Entity(name, "Technology"), override=True)
            return None
        if want == "Project":  # a depends-on subject: named tech, or "the billing service"
            if self._is_namey(tok):
                return self.out.add(Entity(name, "Technology"), override=label is None)
            if tok.lower_ in PROJECT_HEADS and name.casefold() != tok.lower_:
                return self.out.add(Entity(name, "Project"))
            return None
        expected = {"Person": {"PERSON"}, "Organization": {"ORG"}, "Place": PLACE_LABELS}[want]
        if label is not None:
            if label not in expected:
                return None
            return self.out.add(Entity(name, want))
        if tok.pos_ == "PROPN" and not is_technology(name):
            return self.out.add(Entity(name, want))
        return None

    # -- parse helpers ----------------------------------------------------------------------
    @staticmethod
    def _with_conj(tok: Any) -> Iterator[Any]:
        yield tok
        for c in tok.children:
            if c.dep_ == "conj":
                yield from Sentence._with_conj(c)

    def _subject(self, verb: Any, depth: int = 0) -> Any | None:
        for c in verb.children:
            if c.dep_ in ("nsubj", "nsubjpass"):
                return c
        # "I work at X and visited Y" / "we decided to use X": inherit from the governing verb.
        if depth < 3 and verb.dep_ in ("conj", "xcomp") and verb.head is not verb:
            return self._subject(verb.head, depth + 1)
        return None

    @staticmethod
    def _pobjs(head: Any, preps: set[str]) -> Iterator[Any]:
        for c in head.children:
            if c.dep_ == "prep" and c.lower_ in preps:
                for p in c.children:
                    if p.dep_ == "pobj":
                        yield from Sentence._with_conj(p)

    def _dobjs(self, verb: Any) -> Iterator[Any]:
        for c in verb.children:
            if c.dep_ in ("dobj", "obj"):
                yield from self._with_conj(c)

    # -- relation patterns ------------------------------------------------------------------
    def collect_relations(self) -> None:
        for verb in self.doc:
            if verb.pos_ not in ("VERB", "AUX"):
                continue
            lemma = verb.lemma_.lower()
            if lemma == "work":
                self._works_at(verb)
            elif lemma == "live":
                self._place_rel(verb, "LIVES_IN", self._pobjs(verb, {"in"}))
            elif lemma == "visit":
                self._place_rel(verb, "VISITED", self._dobjs(verb))
            elif lemma in ("go", "travel", "fly", "drive"):
                # Only with a recognised place: "went to the gym" is not a visit.
                targets = [
                    t
                    for t in self._pobjs(verb, {"to"})
                    if (e := self.ent_of.get(t.i)) is not None and e.label_ in PLACE_LABELS
                ]
                self._place_rel(verb, "VISITED", iter(targets))
            elif lemma in ("use", "adopt"):
                self._uses(verb)
            elif lemma in ("migrate", "move", "switch", "transition", "port"):
                self._migrated(verb)
            elif lemma == "replace":
                self._replaced(verb)
            elif lemma in ("depend", "rely"):
                self._depends(verb)
            elif lemma == "be":
                self._is_a(verb)

    def _person_subject(self, verb: Any) -> Entity | None:
        subj = self._subject(verb)
        return self.entity(subj, "Person") if subj is not None else None

    def _works_at(self, verb: Any) -> None:
        targets = list(self._pobjs(verb, {"at", "for"}))
        # "works as an engineer at Google": the prep hangs off the role noun.
        for c in verb.children:
            if c.dep_ == "prep" and c.lower_ == "as":
                for role in c.children:
                    targets += list(self._pobjs(role, {"at", "for"}))
        source = self._person_subject(verb)
        for t in targets:
            self.out.relate(source, "WORKS_AT", self.entity(t, "Organization"))

    def _place_rel(self, verb: Any, rtype: str, targets: Iterator[Any]) -> None:
        source = self._person_subject(verb)
        for t in targets:
            self.out.relate(source, rtype, self.entity(t, "Place"))

    def _uses(self, verb: Any) -> None:
        techs = [self.entity(t, "Technology") for t in self._dobjs(verb)]
        subj = self._subject(verb)
        if subj is None or not any(techs):
            return
        if subj.lower_ in SELF:
            source = self.speaker
        elif (
            (e := self.ent_of.get(subj.i)) is not None
            and e.label_ == "PERSON"
            and not is_technology(e.text)
        ):
            source = self.entity(subj, "Person")
        else:
            source = self.entity(subj, "Project")
        for t in techs:
            self.out.relate(source, "USES", t)

    def _migrated(self, verb: Any) -> None:
        olds = [self.entity(t, "Technology") for t in self._pobjs(verb, {"from"})]
        news = [self.entity(t, "Technology") for t in self._pobjs(verb, {"to", "onto"})]
        for old in olds:
            for new in news:
                self.out.relate(new, "REPLACES", old)

    def _replaced(self, verb: Any) -> None:
        olds = [self.entity(t, "Technology") for t in self._dobjs(verb)]
        news = [self.entity(t, "Technology") for t in self._pobjs(verb, {"with", "by"})]
        if not news and verb.dep_ == "ROOT":  # "Postgres replaced MySQL"
            subj = self._subject(verb)
            if subj is not None and subj.lower_ not in SELF and subj.pos_ != "PRON":
                news = [self.entity(subj, "Technology")]
        for old in olds:
            for new in news:
                self.out.relate(new, "REPLACES", old)

    def _is_a(self, verb: Any) -> None:
        """Classification: "Rex is a poodle", "Kafka is our event bus", "I'm a nurse" (the
        speaker). The subject must be named (or the speaker) and the complement a common
        noun, kept as the Concept `collect_concepts` makes of it; a negated copula or a
        question states nothing."""
        if any(c.dep_ == "neg" for c in verb.children) or verb.sent.text.rstrip().endswith("?"):
            return
        subj = self._subject(verb)
        source = self._named(subj) if subj is not None else None
        if source is None:
            return
        for attr in (c for c in verb.children if c.dep_ == "attr"):
            for t in self._with_conj(attr):
                lemma = self._content_lemma(t)
                if lemma is None or t.pos_ != "NOUN" or lemma in GENERIC_NOUNS:
                    continue  # only a noun `collect_concepts` makes a Concept of
                kind = compound_phrase(t, lemma) or lemma  # "our event bus": an event bus
                self.out.relate(source, "IS_A", self.out.add(Entity(kind, "Concept")))

    def _named(self, tok: Any) -> Entity | None:
        """The entity a named subject stands for: the speaker for "I", else by its NER
        label or the technology lexicon; None for anything unnamed."""
        if tok.lower_ == "i":
            return self.speaker
        if is_technology(tok.text):
            return self.entity(tok, "Technology")
        ent = self.ent_of.get(tok.i)
        if ent is None:
            return None
        if ent.label_ == "PERSON":
            return self.entity(tok, "Person")
        if ent.label_ == "ORG":
            return self.entity(tok, "Organization")
        if ent.label_ in PLACE_LABELS:
            return self.entity(tok, "Place")
        return None

    def _depends(self, verb: Any) -> None:
        subj = self._subject(verb)
        if subj is None:
            return
        source = self.entity(subj, "Project")
        for t in self._pobjs(verb, {"on", "upon"}):
            self.out.relate(source, "DEPENDS_ON", self.entity(t, "Technology"))
