"""`kubectl safety drain` on the demo dump: output, exit codes, kubectl-compatible flags."""

import json

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli


def drain(*args, input=None):
    return run_cli(["drain", *args, "--snapshot", DEMO, "--as-of", DEMO_NOW], input=input)


def test_demo_dry_run_table():
    code, out, err = drain("node-a1", "--dry-run", "--ignore-daemonsets")
    assert code == 0, err
    assert "SAFE: the drain can complete: 2 evict now, 1 wait" in out
    assert "shop/web-5d8f7c-2x2" in out and "PDB_WAIT" in out


def test_demo_dry_run_json():
    code, out, err = drain("node-a1", "--dry-run", "-o", "json")
    assert code == 3, err
    plan = json.loads(out)
    assert (plan["kind"], plan["apiVersion"], plan["safe"]) == ("DrainPlan", "safety.kubectl.io/v1", False)
    by_name = {p["name"]: p for p in plan["pods"]}
    assert by_name["node-exporter-a1"]["action"] == "blocked"
    assert [r["code"] for r in by_name["node-exporter-a1"]["reasons"]] == ["DAEMONSET"]
    assert (by_name["web-5d8f7c-2x2"]["action"], by_name["web-5d8f7c-2x2"]["wave"]) == ("wait", 2)
    assert by_name["api-7c9b4-0q0"]["pdb"] == "shop/api"
    assert {b["name"] for b in plan["pdbs"]} == {"api", "web"}
    assert plan["estimatedSeconds"] == sum(w["estimatedSeconds"] for w in plan["waves"])
    assert plan["nodes"][0]["filterErrors"] == ["monitoring/node-exporter-a1"]


def test_no_capacity_keeps_the_budgets_and_says_capacity_was_not_checked():
    code, out, err = drain("node-a1", "--dry-run", "--ignore-daemonsets", "--no-capacity")
    assert code == 0, err
    assert "Capacity: not checked (--no-capacity)" in out and "2 evict now, 1 wait" in out
    code, out, err = drain("node-a1", "--dry-run", "--ignore-daemonsets", "--no-capacity", "-o", "json")
    plan = json.loads(out)
    assert plan["capacity"] == {"checked": False, "ok": None, "unplaceable": []}
    assert all(p["replacementNode"] is None for p in plan["pods"])


@pytest.mark.parametrize("args, code, message", [
    (["node-a2", "--dry-run", "--ignore-daemonsets"], 3, "PDB_NEVER_ALLOWS"),
    (["node-b2", "--dry-run", "--ignore-daemonsets"], 3, "UNMANAGED"),
    (["node-b2", "--dry-run", "--ignore-daemonsets", "--force"], 3, "PDB_NEVER_ALLOWS"),
    (["--dry-run", "node-a1", "--ignore-daemonsets"], 0, "SAFE"),  # bare --dry-run before a node, like kubectl
    (["-l", "topology.kubernetes.io/zone=eu-west-1a", "--dry-run", "--ignore-daemonsets", "--delete-emptydir-data"], 3,
     "Node node-a2"),
], ids=["statefulset-pdb-never-allows", "bare-pod", "bare-pod-forced-still-db", "bare-dry-run-flag", "node-selector"])
def test_demo_scenarios(args, code, message):
    got, out, err = drain(*args)
    assert got == code, err
    assert message in out


@pytest.mark.parametrize("args, code, message", [
    (["node-a1", "-l", "a=b", "--dry-run"], 2, "cannot specify both a node name and a --selector option"),
    (["--dry-run"], 2, "specify the nodes to drain"),
    (["node-zz", "--dry-run"], 1, 'node "node-zz" not found'),
    (["--dry-run=sever", "node-a1"], 2, 'invalid dry-run value (sever): must be "none", "server", or "client"'),
    (["--dry-run", "sever", "node-a1"], 1, "--dry-run takes none, client or server"),
    (["node-a1", "--dry-run", "--pod-selector", "a in b"], 2, "must be a valid label selector"),
    (["node-a1", "--dry-run", "--timeout", "soon"], 2, "invalid --timeout"),
    (["node-a1", "--ignore-daemonsets"], 2, "needs a live cluster"),
    (["node-a1", "--dry-run=server"], 2, "needs a live cluster"),
], ids=["node-and-selector", "no-node", "unknown-node", "bad-dry-run-mode", "dry-run-then-unknown-node", "bad-pod-selector", "bad-timeout",
        "real-drain-on-a-dump", "server-dry-run-on-a-dump"])
def test_usage_errors(args, code, message):
    got, out, err = drain(*args)
    assert got == code
    assert message in err


def test_help_documents_kind_and_exit_codes():
    code, out, _ = run_cli(["drain", "--help"])
    assert code == 0
    assert "DrainPlan" in out and "DrainReport" in out and "Usage: kubectl safety drain" in out
    for flag in ("--ignore-daemonsets", "--delete-emptydir-data", "--force", "--grace-period", "--timeout",
                 "--pod-selector", "--disable-eviction", "--skip-wait-for-delete-timeout", "--chunk-size", "--yes"):
        assert flag in out
