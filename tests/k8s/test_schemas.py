"""Every rendered object against the Kubernetes API schemas, offline: kubernetes-validate
(PyPI) ships the JSON schemas of each Kubernetes release, and its strict mode refuses a
field the API does not have. Custom resources have no schema there: crdcheck
(deploy/k8s/crdcheck) decodes them strictly into their projects' Go types instead."""

from __future__ import annotations

import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.k8s.render import VARIANTS, Obj, name_of, tool

# The oldest release the manifests support (topologySpreadConstraints.matchLabelKeys on by
# default since 1.27; 1.30 is the oldest still patched) and the newest the package knows.
KUBERNETES_VERSIONS = ("1.30.0", kubernetes_validate.utils.latest_version())
# Custom resources: checked by crdcheck, or (KEDA) by test_manifests.py's own checks.
CRD_GROUPS = ("gateway.networking.k8s.io/", "monitoring.coreos.com/", "keda.sh/")
CRDCHECK_KINDS = {"HTTPRoute", "PrometheusRule", "PodMonitor"}


def _is_crd(o: Obj) -> bool:
    return str(o["apiVersion"]).startswith(CRD_GROUPS)


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_objects_match_the_kubernetes_schemas(
    rendered: dict[str, list[Obj]], variant: str, version: str
) -> None:
    checked = 0
    for o in rendered[variant]:
        if _is_crd(o):
            continue
        try:
            kubernetes_validate.validate(o, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = "/".join(str(p) for p in e.path)
            pytest.fail(f"{variant} {name_of(o)} at {path}: {e.message}")
        checked += 1
    assert checked


def test_the_schema_check_catches_a_misplaced_field(rendered: dict[str, list[Obj]]) -> None:
    """Strict mode is what turns a typo into a failure rather than a silent no-op."""
    deployment = next(o for o in rendered["dev"] if o["kind"] == "Deployment")
    broken = yaml.safe_load(yaml.safe_dump(deployment))
    broken["spec"]["template"]["spec"]["terminationGracePeriod"] = 50
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSIONS[0], strict=True)


def _crdcheck(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tool("crdcheck")), str(path)], capture_output=True, text=True, timeout=60
    )


def test_custom_resources_decode_strictly(rendered: dict[str, list[Obj]], tmp_path: Path) -> None:
    crds = [o for variant in VARIANTS for o in rendered[variant] if _is_crd(o)]
    assert CRDCHECK_KINDS <= {o["kind"] for o in crds}
    path = tmp_path / "crds.yaml"
    path.write_text(yaml.safe_dump_all(crds))
    done = _crdcheck(path)
    assert done.returncode == 0, done.stderr
    ok = {tuple(line.split()[2:4]) for line in done.stdout.splitlines() if line.startswith("ok ")}
    expected = {(o["kind"], o["metadata"]["name"]) for o in crds if o["kind"] in CRDCHECK_KINDS}
    assert ok == expected


def test_crdcheck_refuses_an_unknown_field(rendered: dict[str, list[Obj]], tmp_path: Path) -> None:
    route = next(o for o in rendered["prod"] if o["kind"] == "HTTPRoute")
    broken = yaml.safe_load(yaml.safe_dump(route))
    broken["spec"]["rules"][0]["backendRef"] = broken["spec"]["rules"][0].pop("backendRefs")
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    done = _crdcheck(path)
    assert done.returncode == 1
    assert "backendRef" in done.stderr
