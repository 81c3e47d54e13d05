"""The alert rules and the Grafana dashboard: promtool checks the rules and runs their unit
tests (deploy/k8s/monitoring/alerts.test.yaml), every dashboard query parses as PromQL,
and every metric either names is one PCM really exports, with route labels PCM really
uses."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

import pcm_common.runtime.telemetry  # noqa: F401  (registers PCM's metrics)
from tests.k8s.render import K8S, Obj, find, tool

MONITORING = K8S / "monitoring"
DASHBOARD = MONITORING / "grafana-dashboard.json"
# Grafana's variables, given values so the queries parse as plain PromQL.
GRAFANA_VARS = {"$__rate_interval": "5m", "$namespace": ".*", "$job": ".*"}
# PromQL words that look like metric names.
PROMQL_WORDS = {
    "sum", "max", "min", "avg", "by", "without", "rate", "increase", "histogram_quantile",
    "unless", "on", "and", "or", "le", "count", "ignoring", "group_left", "group_right",
}  # fmt: skip


def _rule_spec(rendered: dict[str, list[Obj]]) -> dict[str, Any]:
    spec: dict[str, Any] = find(rendered["monitoring"], "PrometheusRule", "pcm")["spec"]
    return spec


def _promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tool("promtool")), *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def _dashboard_queries() -> list[tuple[str, str]]:
    dash = json.loads(DASHBOARD.read_text())
    out = []
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            out.append((panel["title"], target["expr"]))
    return out


def _plain(expr: str) -> str:
    for var, value in GRAFANA_VARS.items():
        expr = expr.replace(var, value)
    assert "$" not in expr, f"unresolved Grafana variable in {expr}"
    return expr


def _exported_names() -> set[str]:
    """Series names /metrics can show: PCM's metrics and prometheus_client's process and
    platform collectors, with the suffixes each type adds."""
    names = set()
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            names.add(sample.name)
        # A labelled metric with no child yet has no sample: name it from its type.
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"]}
        for suffix in suffixes.get(metric.type, [""]):
            names.add(metric.name + suffix)
    return names


def _metric_names(expr: str) -> set[str]:
    without_strings = re.sub(r'"[^"]*"', '""', expr)
    without_labels = re.sub(r"\{[^}]*\}", "", without_strings)
    without_by = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", without_labels)
    without_ranges = re.sub(r"\[[^\]]*\]", "", without_by)
    words = set(re.findall(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*\b", without_ranges))
    return {w for w in words if w not in PROMQL_WORDS and "_" in w}


def test_promtool_accepts_the_rules(rendered: dict[str, list[Obj]], tmp_path: Path) -> None:
    (tmp_path / "pcm-rules.yaml").write_text(yaml.safe_dump(_rule_spec(rendered)))
    done = _promtool("check", "rules", "pcm-rules.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout + done.stderr


def test_the_alerts_fire_on_their_cases(rendered: dict[str, list[Obj]], tmp_path: Path) -> None:
    spec = _rule_spec(rendered)
    for group in spec["groups"]:
        for rule in group["rules"]:
            # The summaries are compared as rendered; the long descriptions are not.
            rule.get("annotations", {}).pop("description", None)
    (tmp_path / "pcm-rules.yaml").write_text(yaml.safe_dump(spec))
    shutil.copy(MONITORING / "alerts.test.yaml", tmp_path / "alerts.test.yaml")
    done = _promtool("test", "rules", "alerts.test.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # Every alert has at least one case.
    cases = yaml.safe_load((MONITORING / "alerts.test.yaml").read_text())["tests"]
    tested = {t["alertname"] for case in cases for t in case.get("alert_rule_test", [])}
    alerts = {r["alert"] for g in spec["groups"] for r in g["rules"] if "alert" in r}
    assert alerts == tested


def test_the_alerts_cover_what_an_operator_needs(rendered: dict[str, list[Obj]]) -> None:
    rules = [r for g in _rule_spec(rendered)["groups"] for r in g["rules"]]
    by_metric = {m for r in rules for m in _metric_names(r["expr"])}
    # Lag, DLQ growth, recall p95, error rate, job failures (issue 39).
    assert "pcm_stream_pending" in by_metric
    assert "pcm_events_dead_lettered_total" in by_metric
    assert "pcm_http_request_seconds_bucket" in by_metric
    assert "pcm_http_request_seconds_count" in by_metric
    assert any("/v1/jobs/{name}" in r["expr"] for r in rules)
    for r in rules:
        assert r["labels"]["severity"] in ("warning", "critical"), r["alert"]
        assert r["annotations"]["summary"], r["alert"]


def test_dashboard_queries_parse_as_promql(tmp_path: Path) -> None:
    """promtool parses each query as a recording rule's expression."""
    queries = _dashboard_queries()
    assert len(queries) >= 15
    rules = [
        {"record": f"pcm:dashboard:{i}", "expr": _plain(q)} for i, (_, q) in enumerate(queries)
    ]
    (tmp_path / "dashboard-rules.yaml").write_text(
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]})
    )
    done = _promtool("check", "rules", "dashboard-rules.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_metric_named_is_one_pcm_exports(rendered: dict[str, list[Obj]]) -> None:
    exported = _exported_names()
    assert "pcm_stream_pending" in exported and "pcm_http_request_seconds_bucket" in exported
    exprs = [("dashboard " + title, q) for title, q in _dashboard_queries()]
    exprs += [
        ("rule " + r.get("alert", r.get("record", "")), r["expr"])
        for g in _rule_spec(rendered)["groups"]
        for r in g["rules"]
    ]
    adapter = yaml.safe_load((MONITORING / "prometheus-adapter-values.yaml").read_text())
    exprs += [("adapter", rule["seriesQuery"]) for rule in adapter["rules"]["external"]]
    for where, expr in exprs:
        names = _metric_names(expr)
        assert names, f"{where}: no metric in {expr}"
        assert names <= exported, f"{where}: {names - exported} not exported"


def test_route_labels_are_routes_pcm_serves(rendered: dict[str, list[Obj]]) -> None:
    """The HTTP middleware labels a request with its route template (pcm_common.runtime.http)."""
    from tests.k8s.test_manifests import _openapi_routes

    served = set().union(*_openapi_routes().values()) | {"/healthz", "/readyz", "/metrics"}
    exprs = [q for _, q in _dashboard_queries()]
    exprs += [r["expr"] for g in _rule_spec(rendered)["groups"] for r in g["rules"]]
    named = set()
    for expr in exprs:
        for value in re.findall(r'route(?:=|!~|=~)"([^"]+)"', expr):
            named |= set(value.split("|"))
    assert {"/v1/recall", "/v1/memories", "/v1/jobs/{name}"} <= named
    assert named <= served, named - served


def test_dashboard_is_well_formed() -> None:
    dash = json.loads(DASHBOARD.read_text())
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    assert dash["uid"] == "pcm-overview"
    variables = {v["name"] for v in dash["templating"]["list"]}
    for panel in dash["panels"]:
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]
        for t in panel["targets"]:
            used = set(re.findall(r"\$(\w+)", t["expr"])) - {"__rate_interval"}
            assert used <= variables, (panel["title"], used)


@pytest.mark.parametrize("path", ["prometheusrule.yaml", "podmonitor.yaml"])
def test_monitoring_objects_are_in_its_kustomization(path: str) -> None:
    k = yaml.safe_load((MONITORING / "kustomization.yaml").read_text())
    assert path in k["resources"]
