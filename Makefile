# PCM developer commands. `make run` and `make test` work on a fresh machine: they install
# what is missing (uv, the Python workspace, Redis, the inspector's npm libraries; Java's
# Neo4j artifacts and Debian's Chromium for tests).
SHELL := /bin/bash
UV ?= $(shell command -v uv 2>/dev/null || echo $(HOME)/.local/bin/uv)
export LITELLM_LOCAL_MODEL_COST_MAP := True
# The embedded default: ArcadeDB's Bolt server from PyPI stands in for Neo4j.
ARCADE_URI ?= bolt://127.0.0.1:7688
PORT ?= 8080

.PHONY: install run test test-unit test-faults test-cluster lint bench bench-100k bench-inspector bench-feedback \
	bench-load servers-test stop clean dist \
	k8s-tools validate-k8s k8s-dev-secrets

$(UV):
	python3 -m pip install --user --quiet uv || python3 -m pip install --quiet uv

install: $(UV)
	$(UV) sync --frozen
	scripts/inspector_assets.sh

run: install
	scripts/redis.sh start
	scripts/arcadedb.sh start
	@echo ""
	@echo "PCM is starting on http://127.0.0.1:$(PORT)  (API docs: http://127.0.0.1:$(PORT)/docs)"
	@echo "Inspector: http://127.0.0.1:$(PORT)/ui/  (sign in with pcm-dev-key)"
	@echo "Try:"
	@echo "  curl -s -XPOST http://127.0.0.1:$(PORT)/v1/memories -H 'Authorization: Bearer pcm-dev-key' \\"
	@echo "       -H 'content-type: application/json' -d '{\"text\": \"Alice moved to Berlin in March.\"}'"
	@echo "  curl -s -XPOST http://127.0.0.1:$(PORT)/v1/recall -H 'Authorization: Bearer pcm-dev-key' \\"
	@echo "       -H 'content-type: application/json' -d '{\"query\": \"Where does Alice live now?\"}'"
	@echo ""
	NEO4J_URI=$(ARCADE_URI) PCM_ENV=dev $(UV) run pcm dev --port $(PORT)

servers-test:
	scripts/redis.sh start
	scripts/neo4j.sh start
	scripts/arcadedb.sh start

# The inspector's browser tests (tests/browser) drive Debian's Chromium: installed if missing.
test: install servers-test validate-k8s
	scripts/chromium.sh
	$(UV) run ruff check .
	$(UV) run mypy
	$(UV) run pytest -q --ignore=tests/k8s -m "not faults"
	$(UV) run pytest -q -m faults tests/faults

# The fault suite (tests/faults, docs/operations.md): workers and the all-in-one server
# killed, Redis restarted, the graph server killed, the vector store failing, a poison
# event; each case on a Redis and an ArcadeDB of its own that the suite starts.
test-faults: install
	scripts/redis.sh start
	$(UV) run pytest -q -m faults tests/faults

# Redis Cluster (docs/cluster.md): three primaries on loopback that the tests start with
# Debian's redis-server (scripts/redis.sh installs it); `make test` runs these too.
test-cluster: install
	scripts/redis.sh start
	$(UV) run pytest -q -m cluster tests/integration/test_redis_cluster.py

test-unit: install
	$(UV) run pytest -q tests/unit

# Benchmarks (bench/): LoCoMo retrieval, precise recall, latency, lifecycle, surprisal/absence
# flags; writes bench-results/ and the tables in docs/benchmarks.md (~45 minutes on 2 cores: the
# outliers part replays the dev routines live in two protocols, the routines part the
# generated sets).
# bench-100k: the latency run to 100k memories (15-35 minutes more); bench-inspector: the
# inspector's memory page and listing at 100k memories (~20 minutes, most of it seeding).
bench: install
	scripts/redis.sh start
	scripts/arcadedb.sh start
	$(UV) run python -m bench

bench-100k: install
	scripts/redis.sh start
	scripts/arcadedb.sh start
	$(UV) run python -m bench --only latency-100k

bench-inspector: install
	scripts/redis.sh start
	scripts/arcadedb.sh start
	scripts/chromium.sh
	$(UV) run python -m bench --only inspector-100k

# bench-load: 3 tenants x 4 clients mixing single writes, batches and recalls on the
# all-in-one server for 3 minutes, then the pipeline's drain (~5 minutes in all);
# bench-results/load.json and load-default.svg. SOAK=1: 30 minutes of load instead.
bench-load: install
	scripts/redis.sh start
	scripts/arcadedb.sh start
	$(UV) run python -m bench.load $(if $(SOAK),--soak --out bench-results/load-soak.json)

# bench-feedback: retrieval feedback replayed on LoCoMo dev (~25 minutes per mode on 2 cores): feedback
# on half the questions, then every question again, beside a store without feedback.
bench-feedback: install
	scripts/redis.sh start
	scripts/arcadedb.sh start
	$(UV) run python -m bench.feedback --out bench-results/feedback.json
	$(UV) run python -m bench.feedback --missed --out bench-results/feedback-missed.json

# Wheels of the client and of the agent tooling (MCP server, hooks, client commands) in
# dist/, to install on a machine without the repository (docs/agents.md).
dist: $(UV)
	$(UV) build --package pcm-client --wheel --out-dir dist
	$(UV) build --package pcm-agent --wheel --out-dir dist

# Kubernetes manifests (deploy/k8s), offline: render every overlay with kustomize, validate
# against the Kubernetes schemas (kubernetes-validate) and the CRDs' Go types (crdcheck),
# policy checks, promtool on the alert rules. k8s-tools builds the pinned Go tools into
# .tools/bin once (a few minutes on a fresh machine, nothing after).
k8s-tools:
	scripts/k8s_tools.sh

validate-k8s: install k8s-tools
	$(UV) run pytest -q tests/k8s

# The dev overlay's secrets.env (random keys; kept if it exists): deploy/k8s/README.md.
k8s-dev-secrets: install
	$(UV) run python scripts/k8s_dev_secrets.py

lint: install
	$(UV) run ruff check .
	$(UV) run mypy

stop:
	-scripts/arcadedb.sh stop
	-scripts/neo4j.sh stop
	-scripts/redis.sh stop

clean: stop
	rm -rf var dist .pytest_cache .ruff_cache .mypy_cache
