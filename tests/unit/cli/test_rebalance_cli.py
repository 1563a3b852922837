"""`kubectl safety rebalance` on the demo snapshot: plan output, JSON, exit codes, flag errors."""

import json

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli


def rebalance(*args):
    return run_cli(["rebalance", *args, "--snapshot", DEMO, "--as-of", DEMO_NOW])


def test_demo_web_plan_moves_one_pod_to_the_empty_zone():
    code, out, err = rebalance("deployment/web", "-n", "shop", "--dry-run")
    assert code == 0, err
    assert "skew 3 VIOLATED [eu-west-1a=3, eu-west-1b=1, eu-west-1c=0]" in out
    assert "web-5d8f7c-2x2" in out and "node-c1 (eu-west-1c)" in out
    assert "the plan fixes every constraint (1 eviction(s))" in out


def test_demo_json_report():
    code, out, _ = rebalance("deploy/web", "-n", "shop", "--dry-run", "-o", "json")
    r = json.loads(out)
    assert code == 0 and r["kind"] == "RebalancePlan"
    assert r["constraints"][0]["domains"] == {"eu-west-1a": 3, "eu-west-1b": 1, "eu-west-1c": 0}
    assert [(e["name"], e["node"], e["domain"]) for e in r["evictions"]] == [("web-5d8f7c-2x2", "node-a1", "eu-west-1a")]
    assert r["expected"][0]["skew"] == 1 and r["blocked"] == []
    assert r["takenAt"] == "2026-11-22T09:00:00Z" and r["scope"]["workload"] == "Deployment/web"


def test_scan_all_namespaces_reports_only_violated_workloads():
    code, out, err = rebalance("-A", "--dry-run")
    assert code == 0, err
    assert "Deployment/shop/web" in out and "Deployment/shop/api" not in out


def test_selector_scopes_the_scan():
    code, out, _ = rebalance("-n", "shop", "-l", "app=api", "--dry-run", "-o", "json")
    r = json.loads(out)
    assert code == 0 and [w["name"] for w in r["workloads"]] == ["api"] and r["evictions"] == []


def test_max_evictions_zero_cannot_fix():
    code, out, _ = rebalance("deployment/web", "-n", "shop", "--dry-run", "--max-evictions", "0", "-o", "json")
    assert code == 3
    assert "--max-evictions 0" in json.loads(out)["blocked"][0]["reason"]


def test_acting_on_a_snapshot_is_refused():
    code, out, err = rebalance("deployment/web", "-n", "shop", "--yes")
    assert code == 2 and out == "" and "needs a live cluster" in err


@pytest.mark.parametrize("args,message", [
    (["pod/web", "--dry-run"], "invalid WORKLOAD"),
    (["deployment/web", "-l", "app=web", "--dry-run"], "not both"),
    (["deployment/web", "-A", "--dry-run"], "drop -A"),
], ids=["bad-kind", "workload-and-selector", "workload-and-all-namespaces"])
def test_usage_errors(args, message):
    code, _, err = rebalance(*args)
    assert code == 2 and message in err


def test_unknown_workload():
    code, _, err = rebalance("statefulset/nope", "-n", "shop", "--dry-run")
    assert code == 1 and 'statefulset "nope" not found in namespace "shop"' in err


def test_help_documents_usage_and_exit_codes():
    code, out, _ = run_cli(["rebalance", "--help"])
    assert code == 0
    assert "Usage: kubectl safety rebalance [WORKLOAD | -l SELECTOR]" in out and "RebalancePlan" in out
