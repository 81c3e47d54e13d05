"""The contract between the rendered manifests and the code: every service runs as
`pcm serve <service>` on its port and probes the ops endpoints, each replica is its own
Redis consumer, every public route reaches a service that serves it (Ingress and HTTPRoute
alike; the inspector's page included), the scalers name streams and groups that exist, and
the stores are configured as PCM needs them (durable, authenticated)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from pcm_common.messaging.events import PIPELINE_GROUPS
from tests.k8s.render import (
    INSTALLS,
    K8S,
    ROOT,
    SERVICES,
    Obj,
    containers,
    find,
    of_kind,
    pod_spec,
)


def test_every_yaml_file_parses_and_every_manifest_is_used() -> None:
    """A manifest no kustomization lists is dead weight (or a forgotten resource)."""
    listed: set[Path] = set()
    kustomizations = list(K8S.rglob("kustomization.yaml"))
    for kfile in kustomizations:
        k = yaml.safe_load(kfile.read_text())
        assert k["kind"] in ("Kustomization", "Component")
        for entry in [*k.get("resources", []), *k.get("components", [])]:
            target = (kfile.parent / entry).resolve()
            assert target.exists(), f"{kfile} lists missing {entry}"
            listed.add(target)
        listed |= {
            (kfile.parent / p["path"]).resolve() for p in k.get("patches", []) if "path" in p
        }
        listed |= {(kfile.parent / c).resolve() for c in k.get("configurations", [])}
    not_manifests = {"kustomization.yaml", "alerts.test.yaml", "prometheus-adapter-values.yaml"}
    for path in K8S.rglob("*.yaml"):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        assert docs and all(isinstance(d, dict) for d in docs), path
        if path.name not in not_manifests:
            assert path.resolve() in listed, f"{path} is not in any kustomization"


@pytest.mark.parametrize("variant", INSTALLS)
@pytest.mark.parametrize("service", list(SERVICES))
def test_service_deployment(rendered: dict[str, list[Obj]], variant: str, service: str) -> None:
    port = SERVICES[service]
    dep = find(rendered[variant], "Deployment", service)
    pod = dep["spec"]["template"]
    (container,) = containers(dep)
    argv = [str(a) for a in [*container.get("command", []), *container.get("args", [])]]
    assert argv[:3] == ["pcm", "serve", service], argv
    assert argv[argv.index("--port") + 1] == str(port)
    assert [p["containerPort"] for p in container["ports"]] == [port]
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    env = {e["name"]: e for e in container.get("env", [])}
    assert env["PCM_CONSUMER_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    ann = pod["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true"
    assert ann["prometheus.io/path"] == "/metrics"
    assert ann["prometheus.io/port"] == str(port)
    # The ConfigMap first, the Secret last: a key in both is the Secret's.
    assert [next(iter(src)) for src in container["envFrom"]] == ["configMapRef", "secretRef"]
    labels = pod["metadata"]["labels"]
    for key, value in dep["spec"]["selector"]["matchLabels"].items():
        assert labels[key] == value
    assert not pod_spec(dep).get("automountServiceAccountToken")


def test_every_service_of_the_code_is_deployed_on_its_port() -> None:
    from pcm_cli.app import DEFAULT_PORTS

    assert SERVICES == DEFAULT_PORTS


@pytest.mark.parametrize("variant", INSTALLS)
def test_shared_settings(rendered: dict[str, list[Obj]], variant: str) -> None:
    (cm,) = of_kind(rendered[variant], "ConfigMap")
    data = cm["data"]
    assert data["PCM_LOG_JSON"] == "true"
    assert data["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert data["PCM_DEV_KEY_ENABLED"] == "false"
    assert data["QDRANT_URL"] and data["NEO4J_URI"]  # the server, not the embedded shard
    assert all(isinstance(v, str) for v in data.values())


def _openapi_routes() -> dict[str, set[str]]:
    """Public paths each service really serves (from its app's OpenAPI document)."""
    from pcm_cli.app import build_app
    from pcm_common.runtime.config import PcmSettings

    routes: dict[str, set[str]] = {}
    for service in SERVICES:
        # Nothing connects: building the app only wires routes.
        app = build_app([service], PcmSettings(redis_url="redis://127.0.0.1:1/0"))
        paths = app.openapi()["paths"]
        routes[service] = {p for p in paths if p.startswith("/v1/")}
    return routes


def _example(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def _ingress_backend(ingress: Obj, path: str) -> str | None:
    """The Service an Ingress sends `path` to: Exact first, then the longest Prefix."""
    best: tuple[int, str] | None = None
    for rule in ingress["spec"]["rules"]:
        for p in rule["http"]["paths"]:
            name = p["backend"]["service"]["name"]
            if p["pathType"] == "Exact" and p["path"] == path:
                return str(name)
            if p["pathType"] == "Prefix" and _segment_prefix(p["path"], path):
                if best is None or len(p["path"]) > best[0]:
                    best = (len(p["path"]), str(name))
    return best[1] if best else None


def _route_backend(route: Obj, path: str) -> str | None:
    best: tuple[int, str] | None = None
    for rule in route["spec"]["rules"]:
        (backend,) = rule["backendRefs"]
        for m in rule["matches"]:
            kind, value = m["path"]["type"], m["path"]["value"]
            if kind == "Exact" and value == path:
                return str(backend["name"])
            if kind == "PathPrefix" and _segment_prefix(value, path):
                if best is None or len(value) > best[0]:
                    best = (len(value), str(backend["name"]))
    return best[1] if best else None


def _segment_prefix(prefix: str, path: str) -> bool:
    """Both Ingress Prefix and Gateway PathPrefix match whole path segments."""
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


# The inspector's page (outside the OpenAPI document): its root, a page of it, a static file.
PAGE = ("/ui", "/ui/", "/ui/memories/x1", "/ui/static/app.js")


def _page_is_served() -> dict[str, int]:
    """Status of each page path from the inspector's app (its lifespan not run: nothing
    connects); a page path it did not serve would be 404."""
    from fastapi.testclient import TestClient

    from pcm_cli.app import build_app
    from pcm_common.runtime.config import PcmSettings

    app = build_app(["inspector"], PcmSettings(redis_url="redis://127.0.0.1:1/0"))
    web = TestClient(app)
    return {p: web.get(p, follow_redirects=False).status_code for p in PAGE}


def test_every_public_route_reaches_a_service_that_serves_it(
    rendered: dict[str, list[Obj]],
) -> None:
    served = _openapi_routes()
    assert "/v1/recall" in served["recall"] and "/v1/memories:batch" in served["ingest"]
    # The inspector's routes are ingest's; its own process is the page.
    assert {"/v1/memories:search", "/v1/dead-letters/{letter_id}:retry"} <= served["ingest"]
    page = _page_is_served()
    assert all(status != 404 for status in page.values()), page
    (ingress,) = of_kind(rendered["dev"], "Ingress")
    (route,) = of_kind(rendered["prod"], "HTTPRoute")
    owners: dict[str, Any] = {}
    for service, paths in served.items():
        for p in paths:
            owners.setdefault(p, set()).add(service)
    for path, services in owners.items():
        for router, backend in (("Ingress", _ingress_backend), ("HTTPRoute", _route_backend)):
            target = backend(ingress if router == "Ingress" else route, _example(path))
            assert target in services, f"{router}: {path} -> {target}, served by {services}"
    for path in page:
        assert _ingress_backend(ingress, path) == "inspector", path
        assert _route_backend(route, path) == "inspector", path
    # Services named by the routes exist, on the port the route uses.
    services = {s["metadata"]["name"]: s for s in of_kind(rendered["prod"], "Service")}
    for rule in route["spec"]["rules"]:
        for ref in rule["backendRefs"]:
            assert ref["port"] == services[ref["name"]]["spec"]["ports"][0]["port"]


@pytest.mark.parametrize("variant", INSTALLS)
def test_services_select_their_deployments(rendered: dict[str, list[Obj]], variant: str) -> None:
    objs = rendered[variant]
    for name in ("ingest", "recall", "sweeper", "inspector"):
        svc = find(objs, "Service", name)
        labels = find(objs, "Deployment", name)["spec"]["template"]["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items())
        assert svc["spec"]["ports"][0]["port"] == SERVICES[name]


def test_autoscalers_target_deployments_and_real_consumer_groups(
    rendered: dict[str, list[Obj]],
) -> None:
    objs = rendered["dev"]
    hpas = {o["metadata"]["name"]: o for o in of_kind(objs, "HorizontalPodAutoscaler")}
    assert set(hpas) == set(SERVICES)
    assert hpas["recall"]["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    for worker in ("graph-extractor", "sweeper"):
        for m in hpas[worker]["spec"]["metrics"]:
            assert m["type"] == "External"
            assert m["external"]["metric"]["name"] == "pcm_stream_pending"
            labels = m["external"]["metric"]["selector"]["matchLabels"]
            assert labels["group"] in PIPELINE_GROUPS[labels["stream"]]


def test_keda_scaled_objects(rendered: dict[str, list[Obj]]) -> None:
    objs = rendered["dev+keda"]
    scaled = of_kind(objs, "ScaledObject")
    assert {o["metadata"]["name"] for o in scaled} == {"graph-extractor", "sweeper"}
    hpas = {h["metadata"]["name"] for h in of_kind(objs, "HorizontalPodAutoscaler")}
    assert hpas == {"ingest", "recall", "inspector"}  # KEDA makes the workers' own
    (auth,) = of_kind(objs, "TriggerAuthentication")
    for so in scaled:
        assert so["spec"]["scaleTargetRef"]["name"] in SERVICES
        for trig in so["spec"]["triggers"]:
            assert trig["type"] == "redis-streams"
            assert trig["authenticationRef"]["name"] == auth["metadata"]["name"]
            md = trig["metadata"]
            assert md["address"] == "redis.pcm.svc.cluster.local:6379"
            assert md["consumerGroup"] in PIPELINE_GROUPS[md["stream"]]
            assert "lagCount" in md or "pendingEntriesCount" in md
    # The bundled Redis lets the KEDA operator in.
    keda_in = find(objs, "NetworkPolicy", "redis-from-keda")
    assert keda_in["spec"]["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "redis"}


def _redis_config(sts: Obj) -> dict[str, str]:
    """The settings the Redis container pipes into `redis-server -`."""
    (c,) = containers(sts)
    script = "\n".join(c["args"])
    assert "exec redis-server - <<EOF" in script
    body = script.split("<<EOF", 1)[1].split("\nEOF", 1)[0]
    return dict(line.split(" ", 1) for line in body.strip().splitlines())


def test_stores_are_durable_and_authenticated(rendered: dict[str, list[Obj]]) -> None:
    objs = rendered["dev"]
    conf = _redis_config(find(objs, "StatefulSet", "redis"))
    assert conf["appendonly"] == "yes" and conf["appendfsync"] == "always"
    assert conf["maxmemory-policy"] == "noeviction"
    assert conf["requirepass"] == "$REDIS_PASSWORD"
    (redis,) = containers(find(objs, "StatefulSet", "redis"))
    env = {e["name"]: e["valueFrom"]["secretKeyRef"]["key"] for e in redis["env"]}
    assert env == {"REDIS_PASSWORD": "REDIS_PASSWORD", "REDISCLI_AUTH": "REDIS_PASSWORD"}
    (qdrant,) = containers(find(objs, "StatefulSet", "qdrant"))
    qenv = {e["name"]: e for e in qdrant["env"]}
    assert qenv["QDRANT__SERVICE__API_KEY"]["valueFrom"]["secretKeyRef"]["key"] == "QDRANT_API_KEY"
    assert qdrant["image"].endswith("-unprivileged")
    (neo4j,) = containers(find(objs, "StatefulSet", "neo4j"))
    nenv = {e["name"]: e for e in neo4j["env"]}
    assert nenv["NEO4J_AUTH"]["value"] == "neo4j/$(PCM_GRAPH_PASSWORD)"
    assert neo4j["image"].startswith("neo4j:5.26") and "community" in neo4j["image"]
    for name in ("redis", "qdrant", "neo4j"):
        sts = find(objs, "StatefulSet", name)
        assert find(objs, "Service", name)["metadata"]["name"] == sts["spec"]["serviceName"]


def test_dockerfile_builds_the_locked_workspace() -> None:
    text = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert "FROM python:3.11-slim" in text
    assert "uv sync --frozen --no-dev" in text
    assert "USER 10001" in text  # the pods' runAsUser
    # Every service's project is in the dependency layer.
    for service in (ROOT / "services").iterdir():
        if (service / "pyproject.toml").is_file():
            rel = f"services/{service.name}/pyproject.toml"
            assert f"COPY {rel} {rel}" in text, rel


def test_the_image_vendors_the_inspectors_libraries_from_the_lock() -> None:
    """They are not in git: a stage runs the script `make install` runs, with the lock,
    and the image takes its copy, never the build machine's (kept out of the context)."""
    text = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    vendor = "services/inspector/pcm_inspector/static/vendor"
    stage = text.split("FROM node:", 1)[1].split("\nFROM ", 1)[0]
    assert re.match(r"\d+[-.\w]* AS inspector-assets\n", stage), stage.splitlines()[0]
    for needed in ("scripts/inspector_assets.sh", "web/package.json", "web/package-lock.json"):
        assert needed in stage, needed
    assert "RUN bash scripts/inspector_assets.sh" in stage
    assert f"COPY --from=inspector-assets /src/{vendor} {vendor}" in text
    # After the workspace's sources (which would not hold it), before the install.
    assert text.index("COPY services services") < text.index("--from=inspector-assets")
    assert text.index("--from=inspector-assets") < text.rindex("uv sync --frozen --no-dev")
    ignored = (ROOT / "deploy" / "Dockerfile.dockerignore").read_text().splitlines()
    assert vendor in ignored
    # The script copies what the page loads (ui.py checks for uPlot).
    script = (ROOT / "scripts" / "inspector_assets.sh").read_text()
    assert "VENDOR=pcm_inspector/static/vendor" in script and "uPlot.iife.min.js" in script
