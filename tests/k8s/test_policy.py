"""Policy checks of every rendered install (dev, prod, dev+KEDA), our own rules on top of the
schemas: the Pod Security `restricted` profile the namespace enforces, limits, probes,
read-only root filesystems, spread, the NetworkPolicies, and a grace period that covers
the drain the code really does."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pcm_common.messaging.bus import GRACEFUL_TIMEOUT_S
from tests.k8s.render import (
    INSTALLS,
    ROOT,
    SERVICES,
    STORES,
    Obj,
    containers,
    find,
    name_of,
    of_kind,
    pod_spec,
    selects,
    workloads,
)

# Store containers whose image must write outside its volumes, with the reason; every
# other container runs with a read-only root filesystem.
WRITABLE_ROOT = {
    "StatefulSet/qdrant": "Qdrant writes an init marker and temporary files under /qdrant",
    "StatefulSet/neo4j": "the entrypoint writes the NEO4J_* settings into its conf folder",
}
# Seconds past preStop + HTTP drain + consumer drain for closing stores and processes.
CLOSE_MARGIN_S = 5


def _installs(rendered: dict[str, list[Obj]]) -> list[tuple[str, Obj]]:
    return [(v, w) for v in INSTALLS for w in workloads(rendered[v])]


def _each_workload(rendered: dict[str, list[Obj]]) -> list[tuple[str, Obj]]:
    pairs = _installs(rendered)
    assert {name_of(w) for _, w in pairs} >= {f"Deployment/{s}" for s in SERVICES}
    return pairs


def test_pods_meet_the_restricted_pod_security_profile(rendered: dict[str, list[Obj]]) -> None:
    for variant, w in _each_workload(rendered):
        spec = pod_spec(w)
        pod_sc = spec.get("securityContext", {})
        where = f"{variant} {name_of(w)}"
        assert not spec.get("hostNetwork") and not spec.get("hostPID"), where
        assert pod_sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", where
        for c in containers(w):
            sc = c.get("securityContext", {})
            non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
            uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
            assert non_root is True, f"{where} {c['name']}: runAsNonRoot"
            assert isinstance(uid, int) and uid > 0, f"{where} {c['name']}: runAsUser {uid}"
            assert sc.get("allowPrivilegeEscalation") is False, f"{where} {c['name']}"
            assert sc.get("capabilities", {}).get("drop") == ["ALL"], f"{where} {c['name']}"
            assert not sc.get("capabilities", {}).get("add"), f"{where} {c['name']}"
            assert not sc.get("privileged"), f"{where} {c['name']}"


def test_root_filesystems_are_read_only(rendered: dict[str, list[Obj]]) -> None:
    for variant, w in _each_workload(rendered):
        for c in containers(w):
            read_only = c.get("securityContext", {}).get("readOnlyRootFilesystem") is True
            if name_of(w) in WRITABLE_ROOT:
                continue
            assert read_only, f"{variant} {name_of(w)} {c['name']}"
    # PCM writes only to /tmp (HOME: model cache, uv cache, temporary files).
    for s in SERVICES:
        w = find(rendered["dev"], "Deployment", s)
        (c,) = containers(w)
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        volumes = {v["name"]: v for v in pod_spec(w)["volumes"]}
        assert "emptyDir" in volumes[mounts["/tmp"]], s


def test_every_container_has_limits_and_probes(rendered: dict[str, list[Obj]]) -> None:
    for variant, w in _each_workload(rendered):
        for c in pod_spec(w)["containers"]:
            where = f"{variant} {name_of(w)} {c['name']}"
            res = c.get("resources", {})
            for side in ("requests", "limits"):
                assert res.get(side, {}).get("cpu") and res[side].get("memory"), f"{where} {side}"
            assert "readinessProbe" in c and "livenessProbe" in c, where


def test_grace_period_covers_prestop_and_both_drains(rendered: dict[str, list[Obj]]) -> None:
    """The budget is recomputed from the code: uvicorn's graceful shutdown in `_serve`
    (pcm_cli.main) and the consumers' drain (pcm_common.messaging.bus.GRACEFUL_TIMEOUT_S)."""
    main = ast.parse((ROOT / "libs/pcm_cli/pcm_cli/main.py").read_text())
    http_drain = [
        float(kw.value.value)
        for node in ast.walk(main)
        if isinstance(node, ast.Call)
        for kw in node.keywords
        if kw.arg == "timeout_graceful_shutdown"
        and isinstance(kw.value, ast.Constant)
        and isinstance(kw.value.value, int | float)
    ]
    assert len(http_drain) == 1, "pcm_cli.main should set timeout_graceful_shutdown once"
    for variant in INSTALLS:
        for s in SERVICES:
            w = find(rendered[variant], "Deployment", s)
            (c,) = containers(w)
            pre_stop = c["lifecycle"]["preStop"]["exec"]["command"]
            assert pre_stop[0] == "sleep"
            needed = float(pre_stop[1]) + http_drain[0] + GRACEFUL_TIMEOUT_S + CLOSE_MARGIN_S
            grace = pod_spec(w)["terminationGracePeriodSeconds"]
            assert grace >= needed, f"{variant} {s}: {grace} s < {needed} s"


def test_env_references_name_variables_defined_before_them(
    rendered: dict[str, list[Obj]],
) -> None:
    """Kubernetes expands $(VAR) only from variables listed earlier; else it stays literal."""
    for variant, w in _each_workload(rendered):
        for c in containers(w):
            seen: set[str] = set()
            for e in c.get("env", []):
                for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", e.get("value", "")):
                    assert ref in seen, f"{variant} {name_of(w)}: {e['name']} uses $({ref})"
                seen.add(e["name"])


def test_pcm_pods_spread_over_zones_and_nodes(rendered: dict[str, list[Obj]]) -> None:
    for variant in INSTALLS:
        for s in SERVICES:
            w = find(rendered[variant], "Deployment", s)
            spread = pod_spec(w)["topologySpreadConstraints"]
            keys = {t["topologyKey"] for t in spread}
            assert keys == {"topology.kubernetes.io/zone", "kubernetes.io/hostname"}
            labels = w["spec"]["template"]["metadata"]["labels"]
            for t in spread:
                # Counted per service: the selector and the keys pick this Deployment's pods.
                assert "app.kubernetes.io/name" in t["matchLabelKeys"]
                for k, v in t["labelSelector"]["matchLabels"].items():
                    assert labels[k] == v


def test_namespace_enforces_the_restricted_profile(rendered: dict[str, list[Obj]]) -> None:
    for variant in INSTALLS:
        (ns,) = of_kind(rendered[variant], "Namespace")
        assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def _selects(policy: Obj, labels: dict[str, str]) -> bool:
    return selects(policy["spec"]["podSelector"], labels)


def test_dev_fences_the_stores(rendered: dict[str, list[Obj]]) -> None:
    objs = rendered["dev"]
    policies = of_kind(objs, "NetworkPolicy")
    deny = find(objs, "NetworkPolicy", "default-deny")
    assert deny["spec"]["podSelector"] == {} and "ingress" not in deny["spec"]
    assert set(deny["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    pcm_labels = find(objs, "Deployment", "ingest")["spec"]["template"]["metadata"]["labels"]
    for store in STORES:
        sts = find(objs, "StatefulSet", store)
        labels = sts["spec"]["template"]["metadata"]["labels"]
        ports = {p["containerPort"] for c in containers(sts) for p in c["ports"]}
        rules = [
            r
            for p in policies
            if _selects(p, labels) and p["metadata"]["name"] != "default-deny"
            for r in p["spec"].get("ingress", [])
        ]
        assert rules, f"{store}: no ingress allowed"
        for rule in rules:
            # Only PCM's pods may connect, and only to the store's own ports.
            assert all(_peer_is(peer, pcm_labels) for peer in rule["from"]), store
            assert {p["port"] for p in rule["ports"]} <= ports, store


def _peer_is(peer: Obj, labels: dict[str, str]) -> bool:
    if set(peer) != {"podSelector"}:
        return False
    return selects(peer["podSelector"], labels)


def _labels(objs: list[Obj], kind: str, name: str) -> dict[str, str]:
    labels: dict[str, str] = find(objs, kind, name)["spec"]["template"]["metadata"]["labels"]
    return labels


def test_dev_lets_the_inspector_reach_redis_only(rendered: dict[str, list[Obj]]) -> None:
    """Its page reads no data (the browser calls the services); Redis answers its
    readiness. Qdrant and Neo4j neither are reached by it nor let it in."""
    objs = rendered["dev"]
    policies = of_kind(objs, "NetworkPolicy")
    inspector = _labels(objs, "Deployment", "inspector")
    stores = {s: _labels(objs, "StatefulSet", s) for s in STORES}
    egress = [r for p in policies if _selects(p, inspector) for r in p["spec"].get("egress", [])]
    reached = {
        store
        for rule in egress
        for peer in rule.get("to", [])
        for store, labels in stores.items()
        if "podSelector" in peer and selects(peer["podSelector"], labels)
    }
    assert reached == {"redis"}
    for store in ("qdrant", "neo4j"):
        peers = [
            peer
            for p in policies
            if _selects(p, stores[store])
            for r in p["spec"].get("ingress", [])
            for peer in r["from"]
        ]
        assert peers and not any(_peer_is(peer, inspector) for peer in peers), store
    # Every other PCM service still reaches all three.
    ingest = _labels(objs, "Deployment", "ingest")
    for store, labels in stores.items():
        assert any(
            "podSelector" in peer and selects(peer["podSelector"], labels)
            for p in policies
            if _selects(p, ingest)
            for r in p["spec"].get("egress", [])
            for peer in r.get("to", [])
        ), store


@pytest.mark.parametrize("variant", INSTALLS)
def test_pcm_pods_accept_only_their_http_port(rendered: dict[str, list[Obj]], variant: str) -> None:
    objs = rendered[variant]
    for s in SERVICES:
        labels = find(objs, "Deployment", s)["spec"]["template"]["metadata"]["labels"]
        rules = [
            r
            for p in of_kind(objs, "NetworkPolicy")
            if _selects(p, labels)
            for r in p["spec"].get("ingress", [])
        ]
        assert rules, s
        assert all([p["port"] for p in r["ports"]] == ["http"] for r in rules), s


def test_no_secret_lives_in_a_configmap(rendered: dict[str, list[Obj]]) -> None:
    for variant in INSTALLS:
        for cm in of_kind(rendered[variant], "ConfigMap"):
            for key, value in cm["data"].items():
                assert not re.search(r"PASSWORD|SECRET|TOKEN|API_KEY", key), (variant, key)
                assert not re.search(r"://[^/@\s]*:[^/@\s]*@", value), (variant, key)


def test_pod_disruption_budgets_and_autoscalers_match_their_deployments(
    rendered: dict[str, list[Obj]],
) -> None:
    for variant in INSTALLS:
        objs = rendered[variant]
        names = {d["metadata"]["name"] for d in of_kind(objs, "Deployment")}
        for pdb in of_kind(objs, "PodDisruptionBudget"):
            target = find(objs, "Deployment", pdb["metadata"]["name"])
            labels = target["spec"]["template"]["metadata"]["labels"]
            assert all(labels[k] == v for k, v in pdb["spec"]["selector"]["matchLabels"].items())
        scaled = [
            h["spec"]["scaleTargetRef"]["name"] for h in of_kind(objs, "HorizontalPodAutoscaler")
        ]
        scaled += [s["spec"]["scaleTargetRef"]["name"] for s in of_kind(objs, "ScaledObject")]
        assert sorted(scaled) == sorted(names), variant  # each scaled by exactly one
        for d in of_kind(objs, "Deployment"):
            assert "replicas" not in d["spec"], f"{d['metadata']['name']}: the HPA owns it"


def test_a_store_volume_backs_every_snapshot_and_data_path(
    rendered: dict[str, list[Obj]],
) -> None:
    objs = rendered["dev"]
    for store, paths in (
        ("redis", ["/data"]),
        ("qdrant", ["/qdrant/storage", "/qdrant/snapshots"]),
        ("neo4j", ["/data"]),
    ):
        sts = find(objs, "StatefulSet", store)
        claims = {t["metadata"]["name"] for t in sts["spec"]["volumeClaimTemplates"]}
        mounts = {m["mountPath"]: m["name"] for c in containers(sts) for m in c["volumeMounts"]}
        for path in paths:
            assert mounts[path] in claims, f"{store}: {path} is not on a PersistentVolumeClaim"


def test_policy_exemptions_are_still_needed() -> None:
    """An exemption for a workload that no longer exists would hide a new one."""
    text = (Path(ROOT) / "deploy/k8s/overlays/dev/stores").glob("*.yaml")
    names = {f"StatefulSet/{p.stem}" for p in text}
    assert set(WRITABLE_ROOT) <= names
