"""Render deploy/k8s the way an operator would, offline, for the manifest tests.

`kustomize build` runs on a temporary copy of deploy/k8s where each overlay gets a
throwaway secrets.env (random values, as `scripts/k8s_dev_secrets.py` makes them), so the
checkout is never touched. The variants are every overlay, the dev overlay with the KEDA
component, and the monitoring kustomization.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
TOOLS = ROOT / ".tools" / "bin"
NAMESPACE = "pcm"
# Every PCM Deployment and its port (`pcm serve <name>`, pcm_cli.app.DEFAULT_PORTS).
SERVICES = {
    "ingest": 8081,
    "recall": 8082,
    "graph-extractor": 8083,
    "sweeper": 8084,
    "inspector": 8085,
}
STORES = ("redis", "qdrant", "neo4j")

Obj = dict[str, Any]

# Variant name -> its kustomization directory, relative to the copy's root.
VARIANTS = {
    "dev": "overlays/dev",
    "prod": "overlays/prod",
    "dev+keda": "variants/dev-keda",
    "monitoring": "monitoring",
}
# The variants that are a whole install (the monitoring one only adds to one).
INSTALLS = ("dev", "prod", "dev+keda")


def tool(name: str) -> Path:
    """A pinned tool from `make k8s-tools`; CI must have it, a developer is told how."""
    path = TOOLS / name
    if not path.is_file():
        message = f"{path} missing: run `make k8s-tools` (scripts/k8s_tools.sh)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def throwaway_secrets(overlay: str) -> str:
    """A secrets.env for one overlay: the keys its README asks for, random values."""
    key = f"pcm-{secrets.token_urlsafe(16)}"
    lines = {"PCM_API_KEYS": json.dumps({key: "tenant-a"})}
    if overlay == "dev":
        lines["REDIS_PASSWORD"] = secrets.token_hex(12)
    else:
        lines["REDIS_URL"] = f"rediss://pcm:{secrets.token_hex(12)}@redis.pcm.example:6380/0"
    lines["QDRANT_API_KEY"] = secrets.token_hex(12)
    lines["NEO4J_PASSWORD"] = secrets.token_hex(12)
    return "".join(f"{k}={v}\n" for k, v in lines.items())


def copy_tree(dest: Path, *, with_secrets: bool = True) -> Path:
    """deploy/k8s copied under `dest` (without local secrets.env files), ready to build."""
    root = dest / "k8s"
    shutil.copytree(K8S, root, ignore=shutil.ignore_patterns("secrets.env", "crdcheck"))
    if with_secrets:
        for overlay in ("dev", "prod"):
            (root / "overlays" / overlay / "secrets.env").write_text(throwaway_secrets(overlay))
    keda = root / "variants" / "dev-keda"
    keda.mkdir(parents=True)
    (keda / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "namespace": NAMESPACE,
                "resources": ["../../overlays/dev"],
                "components": ["../../components/keda"],
            }
        )
    )
    return root


def build(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tool("kustomize")), "build", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def render(root: Path, variant: str) -> list[Obj]:
    done = build(root / VARIANTS[variant])
    assert done.returncode == 0, f"kustomize build {variant} failed:\n{done.stderr}"
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def find(objs: list[Obj], kind: str, name: str) -> Obj:
    hits = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(hits) == 1, f"expected one {kind}/{name}, found {len(hits)}"
    return hits[0]


def of_kind(objs: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o["kind"] == kind]


def workloads(objs: list[Obj]) -> list[Obj]:
    return [o for o in objs if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job")]


def pod_spec(workload: Obj) -> Obj:
    spec: Obj = workload["spec"]["template"]["spec"]
    return spec


def containers(workload: Obj) -> list[Obj]:
    spec = pod_spec(workload)
    return [*spec.get("initContainers", []), *spec["containers"]]


def name_of(o: Obj) -> str:
    return f"{o['kind']}/{o['metadata']['name']}"


def selects(selector: Obj, labels: dict[str, str]) -> bool:
    """Whether a label selector (matchLabels and matchExpressions) picks these labels."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for e in selector.get("matchExpressions", []):
        key, op, values = e["key"], e["operator"], e.get("values", [])
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True
