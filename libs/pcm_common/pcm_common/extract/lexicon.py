"""The local extractor's vocabulary: spaCy's entity labels mapped onto the closed entity
types, the technology lexicon, the words that make a subject a software project, the light
verbs and generic nouns left out of concepts and activities, and the clean-up of a name."""

from __future__ import annotations

import re
from typing import Any

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
PLACE_LABELS = frozenset({"GPE", "LOC", "FAC"})

# Technology names matched case-insensitively: unambiguous as English words.
TECH_ANYCASE = frozenset(
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
TECH_EXACT = frozenset("Go Rust Swift Java Ruby React Flask Express Lua Dart Julia".split())

# Heads that make a common-noun subject a software "Project" ("the billing service").
PROJECT_HEADS = frozenset(
    "service services app application api backend frontend module project system pipeline "
    "library package server worker repo repository job cluster microservice platform bot "
    "tool cli sdk database db".split()
)
SELF = frozenset({"i", "we", "me", "us"})
DETERMINERS = frozenset({"the", "a", "an", "our", "my", "their", "his", "her", "its", "your"})
MONTHS = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|"
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|"
    r"fall|winter|christmas|easter)\b",
    re.IGNORECASE,
)
EDGE_JUNK = " \t\r\n\"'`“”‘’()[]{}<>,;:!?*"

# Concepts and activities (nouns and verbs, by lemma) make the graph an index of what a
# memory is about, which is what links the turns of a multi-hop question ("Where has
# Melanie camped?" -> the turns about camping). Light verbs and generic nouns would link
# everything to everything, so they are left out; recall also weighs every entity by its
# rarity (IDF), so a common one that slips through costs little.
LIGHT_VERBS = frozenset(
    """be have do go get make take come give say tell know think feel look see seem want
    need let try keep put use find mean guess hope wish sound love like hear thank start
    begin end happen become remain stay show ask call talk speak help mind care bet wonder
    believe share check appreciate glad miss got gotta wanna gonna can will would could
    should may might must""".split()
)
GENERIC_NOUNS = frozenset(
    """thing time day lot way people person kind stuff bit today yesterday tomorrow week
    month year moment part one something anything everything nothing someone anyone
    everyone life world place idea sort type reason point case fact side end start hey hi
    thanks yeah yes wow hello bye question news guy guys lol omg""".split()
)


def is_technology(name: str) -> bool:
    """True for names in the technology lexicon."""
    return name in TECH_EXACT or name.casefold() in TECH_ANYCASE


def clean_name(name: str) -> str:
    name = " ".join(name.split()).strip(EDGE_JUNK)
    if name.endswith(("'s", "’s")):
        name = name[:-2]
    words = name.split(" ")
    while len(words) > 1 and words[0].casefold() in DETERMINERS:
        words = words[1:]
    return " ".join(words).strip(EDGE_JUNK)


def keep_time(text: str) -> bool:
    # "yesterday" or "last year" would link unrelated memories; keep anchored dates only.
    return bool(re.search(r"\d", text) or MONTHS.search(text))


def compound_phrase(tok: Any, lemma: str) -> str | None:
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
