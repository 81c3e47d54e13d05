"""What the overlays render to: secrets only from the operator, names that roll the pods,
pinned images, and nothing that works as a key in the repository."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
import yaml

from tests.k8s.render import (
    INSTALLS,
    K8S,
    SERVICES,
    Obj,
    build,
    containers,
    copy_tree,
    find,
    name_of,
    of_kind,
    render,
    workloads,
)


def _secret_data(objs: list[Obj]) -> dict[str, str]:
    (secret,) = of_kind(objs, "Secret")
    return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


@pytest.mark.parametrize("overlay", ["dev", "prod"])
def test_an_overlay_without_its_secrets_file_does_not_build(overlay: str, tmp_path: Path) -> None:
    root = copy_tree(tmp_path, with_secrets=False)
    done = build(root / "overlays" / overlay)
    assert done.returncode != 0
    assert "secrets.env" in done.stderr


def test_the_base_ships_no_secret(rendered: dict[str, list[Obj]], tmp_path: Path) -> None:
    root = copy_tree(tmp_path, with_secrets=False)
    done = build(root / "base")
    assert done.returncode == 0, done.stderr
    base = [d for d in yaml.safe_load_all(done.stdout) if d]
    assert not of_kind(base, "Secret")
    # Every install gets exactly the Secret its operator's secrets.env holds.
    for variant in INSTALLS:
        assert len(of_kind(rendered[variant], "Secret")) == 1


def test_no_file_in_the_repository_holds_a_working_key() -> None:
    """The old template shipped `CHANGE-ME-api-key` as a key that worked once applied."""
    for path in K8S.rglob("*"):
        if not path.is_file() or path.name == "secrets.env":
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "CHANGE-ME" not in text, path
        if path.name == "secrets.env.example":
            values = [
                line.split("=", 1)[1]
                for line in text.splitlines()
                if line and not line.startswith("#")
            ]
            assert values and all(v == "" for v in values), path


def test_generated_names_roll_the_pods_when_a_value_changes(tmp_path: Path) -> None:
    root = copy_tree(tmp_path)
    before = render(root, "dev")
    env = root / "overlays" / "dev" / "secrets.env"
    env.write_text(env.read_text().replace("QDRANT_API_KEY=", "QDRANT_API_KEY=x"))
    kustomization = root / "overlays" / "dev" / "kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text().replace("NEO4J_USER=neo4j", "NEO4J_USER=pcm")
    )
    after = render(root, "dev")

    def names(objs: list[Obj], kind: str) -> set[str]:
        return {o["metadata"]["name"] for o in of_kind(objs, kind)}

    for kind, prefix in (("Secret", "pcm-secrets-"), ("ConfigMap", "pcm-config-")):
        (old,), (new,) = names(before, kind), names(after, kind)
        assert old.startswith(prefix) and new.startswith(prefix) and old != new, kind
    for service in SERVICES:
        old_pod = find(before, "Deployment", service)["spec"]["template"]
        new_pod = find(after, "Deployment", service)["spec"]["template"]
        assert old_pod != new_pod, f"{service}'s pods would not roll"
        refs = json.dumps(new_pod)
        assert names(after, "Secret").pop() in refs
        assert names(after, "ConfigMap").pop() in refs


@pytest.mark.parametrize("variant", INSTALLS)
def test_every_configmap_and_secret_reference_resolves(
    rendered: dict[str, list[Obj]], variant: str
) -> None:
    """A reference to a generated object must carry its hashed name, in the same namespace."""
    objs = rendered[variant]
    have = {
        (o["kind"], o["metadata"]["name"]) for o in objs if o["kind"] in ("Secret", "ConfigMap")
    }
    for w in workloads(objs):
        for c in containers(w):
            for src in c.get("envFrom", []):
                for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
                    if key in src:
                        assert (kind, src[key]["name"]) in have, name_of(w)
            for e in c.get("env", []):
                ref = e.get("valueFrom", {})
                if "secretKeyRef" in ref:
                    assert ("Secret", ref["secretKeyRef"]["name"]) in have, name_of(w)
                    (secret,) = of_kind(objs, "Secret")
                    assert ref["secretKeyRef"]["key"] in secret["data"], (name_of(w), e["name"])
    for auth in of_kind(objs, "TriggerAuthentication"):
        for ref in auth["spec"]["secretTargetRef"]:
            assert ("Secret", ref["name"]) in have
    for o in objs:
        if o["kind"] != "Namespace":
            assert o["metadata"].get("namespace") == "pcm", name_of(o)


def test_dev_keys_are_the_ones_the_stores_and_pcm_read(rendered: dict[str, list[Obj]]) -> None:
    data = _secret_data(rendered["dev"])
    assert set(data) == {"PCM_API_KEYS", "REDIS_PASSWORD", "QDRANT_API_KEY", "NEO4J_PASSWORD"}
    assert isinstance(json.loads(data["PCM_API_KEYS"]), dict)
    # REDIS_URL is composed in each PCM pod from REDIS_PASSWORD (defined before it).
    for service in SERVICES:
        (c,) = containers(find(rendered["dev"], "Deployment", service))
        env = [e["name"] for e in c["env"]]
        url = next(e["value"] for e in c["env"] if e["name"] == "REDIS_URL")
        assert url == "redis://:$(REDIS_PASSWORD)@redis:6379/0"
        assert env.index("REDIS_PASSWORD") < env.index("REDIS_URL")


def test_prod_reaches_external_stores_only(rendered: dict[str, list[Obj]]) -> None:
    objs = rendered["prod"]
    assert not of_kind(objs, "StatefulSet")
    assert not {"redis", "qdrant", "neo4j"} & {
        o["metadata"]["name"] for o in of_kind(objs, "Service")
    }
    (cm,) = of_kind(objs, "ConfigMap")
    assert cm["data"]["QDRANT_URL"].startswith("https://")
    assert cm["data"]["NEO4J_URI"].startswith("neo4j+s://")
    assert "REDIS_URL" not in cm["data"]  # it carries a password: Secret only
    assert _secret_data(objs)["REDIS_URL"].startswith("rediss://")
    # Public traffic through the Gateway API there, the Ingress in dev.
    assert of_kind(objs, "HTTPRoute") and not of_kind(objs, "Ingress")
    assert of_kind(rendered["dev"], "Ingress") and not of_kind(rendered["dev"], "HTTPRoute")


@pytest.mark.parametrize("variant", INSTALLS)
def test_images_are_pinned_by_the_overlay(rendered: dict[str, list[Obj]], variant: str) -> None:
    for w in workloads(rendered[variant]):
        for c in containers(w):
            image = c["image"]
            digest = "@sha256:" in image
            tag = image.rsplit("/", 1)[-1].partition(":")[2]
            assert digest or (tag and tag != "latest"), f"{name_of(w)}: {image}"
            assert c["imagePullPolicy"] == "IfNotPresent", name_of(w)
    pcm_tags = {
        c["image"] for s in SERVICES for c in containers(find(rendered[variant], "Deployment", s))
    }
    assert len(pcm_tags) == 1, pcm_tags  # one image, one version for the four services
    assert re.search(r":\d+\.\d+\.\d+$", pcm_tags.pop())
