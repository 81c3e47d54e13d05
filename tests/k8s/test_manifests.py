"""Static checks of the Kubernetes manifests in deploy/k8s (no cluster needed).

They pin the contract between the manifests and the code: every service runs as
`pcm serve <service>` on its port, probes the ops endpoints, is its own Redis consumer,
references the ConfigMap/Secret that the kustomization really ships, and the scalers name
streams and consumer groups that exist in pcm_common.events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

from pcm_common.events import PIPELINE_GROUPS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
SERVICES = {"ingest": 8081, "recall": 8082, "graph-extractor": 8083, "sweeper": 8084}
KUSTOMIZE_KINDS = {"Kustomization", "Component"}


def _yaml_files() -> list[Path]:
    return sorted([*K8S.rglob("*.yaml"), *K8S.rglob("*.yml")])


def _load(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def _is_object(doc: Any) -> bool:
    return isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc


def _kustomization(directory: Path) -> dict[str, Any]:
    for name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        if (directory / name).is_file():
            return _load(directory / name)[0]
    raise AssertionError(f"{directory} has no kustomization file")


def _resolve(directory: Path) -> list[dict[str, Any]]:
    """Objects a kustomization produces (resources only; enough for reference checks)."""
    out: list[dict[str, Any]] = []
    for entry in _kustomization(directory).get("resources", []):
        target = directory / entry
        if target.is_dir():
            out += _resolve(target)
        else:
            out += [d for d in _load(target) if _is_object(d)]
    return out


def _base() -> list[dict[str, Any]]:
    return _resolve(K8S)


def _all_objects() -> list[dict[str, Any]]:
    return [d for p in _yaml_files() for d in _load(p) if _is_object(d)]


def _find(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    hits = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(hits) == 1, f"expected one {kind}/{name}, found {len(hits)}"
    return hits[0]


def _containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    spec = workload["spec"]["template"]["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def test_every_yaml_file_parses() -> None:
    files = _yaml_files()
    assert files, "no manifests under deploy/k8s"
    for path in files:
        docs = _load(path)  # raises on a syntax error
        assert docs, f"{path} is empty"
        for doc in docs:
            assert isinstance(doc, dict), f"{path}: top-level document is not a mapping"


def test_kustomizations_list_files_that_exist() -> None:
    kustomizations = [
        p for p in _yaml_files() if p.name in ("kustomization.yaml", "kustomization.yml")
    ]
    assert K8S / "kustomization.yaml" in kustomizations
    for kfile in kustomizations:
        k = _load(kfile)[0]
        assert k["kind"] in KUSTOMIZE_KINDS
        entries = [*k.get("resources", []), *k.get("components", [])]
        entries += [p["path"] for p in k.get("patches", []) if "path" in p]
        assert entries or k.get("patches"), f"{kfile} lists nothing"
        for entry in entries:
            target = kfile.parent / entry
            assert target.exists(), f"{kfile} lists missing {entry}"
            if target.is_dir():
                _kustomization(target)


def test_every_manifest_file_is_reachable_or_documented_optional() -> None:
    # A manifest nobody applies is dead weight; the optional extras live in known folders.
    listed = set()
    for kfile in K8S.rglob("kustomization.yaml"):
        for entry in _load(kfile)[0].get("resources", []):
            listed.add((kfile.parent / entry).resolve())
    optional = {K8S / "keda", K8S / "monitoring"}
    for path in _yaml_files():
        if path.name == "kustomization.yaml" or path.parent in optional:
            continue
        assert path.resolve() in listed, f"{path} is not in any kustomization"


def test_base_objects_live_in_the_pcm_namespace() -> None:
    objs = _base()
    assert _find(objs, "Namespace", "pcm")
    for o in objs:
        if o["kind"] != "Namespace":
            assert o["metadata"].get("namespace") == "pcm", f"{o['kind']}/{o['metadata']['name']}"


@pytest.mark.parametrize("service", list(SERVICES))
def test_service_deployment(service: str) -> None:
    port = SERVICES[service]
    dep = _find(_base(), "Deployment", service)
    pod = dep["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    argv = [str(a) for a in [*container.get("command", []), *container.get("args", [])]]
    assert argv[:3] == ["pcm", "serve", service], argv
    assert argv[argv.index("--port") + 1] == str(port)
    assert [p["containerPort"] for p in container["ports"]] == [port]

    def probe_path(name: str) -> str:
        return container[name]["httpGet"]["path"]

    assert probe_path("livenessProbe") == "/healthz"
    assert probe_path("readinessProbe") == "/readyz"

    env = {e["name"]: e for e in container.get("env", [])}
    assert env["PCM_CONSUMER_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"

    assert pod["spec"]["terminationGracePeriodSeconds"] == 30
    ann = pod["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true"
    assert ann["prometheus.io/path"] == "/metrics"
    assert ann["prometheus.io/port"] == str(port)
    res = container["resources"]
    assert res["requests"]["cpu"] and res["requests"]["memory"]
    assert res["limits"]["cpu"] and res["limits"]["memory"]
    # Selector must pick the pod template, or the Deployment is rejected.
    labels = pod["metadata"]["labels"]
    for key, value in dep["spec"]["selector"]["matchLabels"].items():
        assert labels[key] == value


def test_workloads_reference_configmaps_and_secrets_that_exist() -> None:
    objs = _base()
    configmaps = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ConfigMap"}
    secrets = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Secret"}
    deployments = [o for o in objs if o["kind"] == "Deployment"]
    assert {d["metadata"]["name"] for d in deployments} == set(SERVICES)
    for workload in [o for o in objs if o["kind"] in ("Deployment", "StatefulSet")]:
        for c in _containers(workload):
            for src in c.get("envFrom", []):
                if "configMapRef" in src:
                    assert src["configMapRef"]["name"] in configmaps
                if "secretRef" in src:
                    assert src["secretRef"]["name"] in secrets
            for e in c.get("env", []):
                ref = e.get("valueFrom", {})
                if "secretKeyRef" in ref:
                    s = secrets[ref["secretKeyRef"]["name"]]
                    assert ref["secretKeyRef"]["key"] in s.get("stringData", s.get("data", {}))
                if "configMapKeyRef" in ref:
                    cm = configmaps[ref["configMapKeyRef"]["name"]]
                    assert ref["configMapKeyRef"]["key"] in cm["data"]
    for dep in deployments:
        (c,) = dep["spec"]["template"]["spec"]["containers"]
        kinds = {next(iter(src)) for src in c["envFrom"]}
        assert kinds == {"configMapRef", "secretRef"}, dep["metadata"]["name"]


def test_shared_settings_and_secret_keys() -> None:
    objs = _base()
    (cm,) = [o for o in objs if o["kind"] == "ConfigMap"]
    data = cm["data"]
    assert data["REDIS_URL"] == "redis://redis:6379/0"
    assert data["QDRANT_URL"] == "http://qdrant:6333"
    assert data["NEO4J_URI"] == "bolt://neo4j:7687"
    assert data["PCM_LOG_JSON"] == "true"
    assert data["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert data["PCM_DEV_KEY_ENABLED"] == "false"
    assert all(isinstance(v, str) for v in data.values()), "ConfigMap values must be strings"
    (secret,) = [o for o in objs if o["kind"] == "Secret"]
    assert {"PCM_API_KEYS", "NEO4J_PASSWORD"} <= set(secret["stringData"])
    assert isinstance(json.loads(secret["stringData"]["PCM_API_KEYS"]), dict)


def test_services_and_ingress_route_to_http_deployments() -> None:
    objs = _base()
    for name in ("ingest", "recall", "sweeper"):
        svc = _find(objs, "Service", name)
        dep = _find(objs, "Deployment", name)
        labels = dep["spec"]["template"]["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items())
        assert svc["spec"]["ports"][0]["port"] == SERVICES[name]
    (ingress,) = [o for o in objs if o["kind"] == "Ingress"]
    routes = {
        p["path"]: p["backend"]["service"]["name"]
        for rule in ingress["spec"]["rules"]
        for p in rule["http"]["paths"]
    }
    assert routes["/v1/memories"] == "ingest"
    assert routes["/v1/memories:batch"] == "ingest"
    assert routes["/v1/recall"] == "recall"
    assert routes["/v1/pipeline"] in ("ingest", "recall")
    assert routes["/v1/stats"] == routes["/v1/governance"] == "ingest"
    assert routes["/v1/jobs"] == "sweeper"
    assert routes["/v1/admin"] == "ingest"  # key administration (any service answers it)
    service_names = {o["metadata"]["name"] for o in objs if o["kind"] == "Service"}
    assert set(routes.values()) <= service_names


def test_autoscalers_target_deployments_and_real_consumer_groups() -> None:
    objs = _base()
    hpas = {o["metadata"]["name"]: o for o in objs if o["kind"] == "HorizontalPodAutoscaler"}
    for hpa in hpas.values():
        assert hpa["spec"]["scaleTargetRef"]["name"] in SERVICES
    assert hpas["recall"]["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    for worker in ("graph-extractor", "sweeper"):
        metrics = hpas[worker]["spec"]["metrics"]
        assert metrics
        for m in metrics:
            assert m["type"] == "External"
            assert m["external"]["metric"]["name"] == "pcm_stream_pending"
            labels = m["external"]["metric"]["selector"]["matchLabels"]
            assert labels["group"] in PIPELINE_GROUPS[labels["stream"]]
    groups = {
        m["external"]["metric"]["selector"]["matchLabels"]["group"]
        for m in hpas["sweeper"]["spec"]["metrics"]
    }
    assert {"sweeper-written", "sweeper-recalled"} <= groups


def test_keda_scaled_objects() -> None:
    scaled = [o for o in _all_objects() if o["kind"] == "ScaledObject"]
    assert {o["metadata"]["name"] for o in scaled} == {"graph-extractor", "sweeper"}
    # KEDA objects stay out of the base (they need KEDA's CRDs).
    assert not [o for o in _base() if o["kind"] == "ScaledObject"]
    for so in scaled:
        assert so["spec"]["scaleTargetRef"]["name"] in SERVICES
        for trig in so["spec"]["triggers"]:
            assert trig["type"] == "redis-streams"
            md = trig["metadata"]
            assert md["consumerGroup"] in PIPELINE_GROUPS[md["stream"]]
            assert "lagCount" in md or "pendingEntriesCount" in md
    ge = next(o for o in scaled if o["metadata"]["name"] == "graph-extractor")
    assert {t["metadata"]["consumerGroup"] for t in ge["spec"]["triggers"]} == {"graph-extractor"}


def test_stateful_dependencies() -> None:
    objs = _base()
    redis = _find(objs, "StatefulSet", "redis")
    args = [str(a) for a in redis["spec"]["template"]["spec"]["containers"][0]["args"]]
    assert args[args.index("--appendonly") + 1] == "yes"
    assert args[args.index("--appendfsync") + 1] == "always"
    for name in ("redis", "qdrant", "neo4j"):
        sts = _find(objs, "StatefulSet", name)
        assert sts["spec"]["volumeClaimTemplates"], f"{name} has no PVC"
        assert _find(objs, "Service", name)["metadata"]["name"] == sts["spec"]["serviceName"]
    (qdrant,) = _containers(_find(objs, "StatefulSet", "qdrant"))
    assert {p["containerPort"] for p in qdrant["ports"]} == {6333, 6334}
    (neo4j,) = _containers(_find(objs, "StatefulSet", "neo4j"))
    assert neo4j["image"].startswith("neo4j:5.26") and "community" in neo4j["image"]


def test_dockerfile_builds_the_locked_workspace() -> None:
    text = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert "FROM python:3.11-slim" in text
    assert "uv sync --frozen --no-dev" in text
    assert '"uv", "run", "--no-sync", "pcm"' in text
