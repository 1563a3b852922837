"""`explain pod|node|priorities` on the bundled demo dump: exit codes, JSON keys, answers."""

import json

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli


def explain(*args):
    code, out, err = run_cli(["explain", *args, "--snapshot", DEMO, "--as-of", DEMO_NOW, "-o", "json"])
    assert code == 0, err
    return json.loads(out)


def test_pod_explanation_schema():
    r = explain("pod", "web-5d8f7c-0x0", "-n", "shop")
    assert r["kind"] == "PodExplanation"
    assert r["qos"]["class"] == "Burstable"
    assert (r["priority"]["value"], r["priority"]["className"], r["priority"]["preemptionPolicy"]) == (1000, "standard", "PreemptLowerPriority")
    assert r["termination"]["gracePeriodSeconds"] == 30
    assert isinstance(r["oomScoreAdj"], int)
    assert [p["name"] for p in r["pdbs"]] == ["web"]
    assert {"TOPOLOGY_SKEW_VIOLATED"} <= {f["code"] for f in r["findings"]}
    assert r["topologySpread"][0]["domains"] == {"eu-west-1a": 3, "eu-west-1b": 1, "eu-west-1c": 0}


@pytest.mark.parametrize("pod,ns,codes", [
    ("db-0", "shop", {"PDB_NEVER_ALLOWS"}),
    ("legacy-0", "shop", {"UNREPLICATED", "NODE_UNREACHABLE"}),  # its node is Unknown: the code check uses
    ("debug-shell", "default", {"QOS_BEST_EFFORT", "PRIORITY_ZERO", "UNREPLICATED", "MEMORY_LIMIT_MISSING"}),
    ("batch-6f5d-0b0", "jobs", {"QOS_BEST_EFFORT", "NO_PDB"}),
], ids=["blocking PDB", "partitioned bare pod", "best-effort bare pod", "batch without PDB"])
def test_pod_findings(pod, ns, codes):
    assert codes <= {f["code"] for f in explain("pod", pod, "-n", ns)["findings"]}


def test_global_flags_accepted_before_and_after_the_subcommand():
    code, out, _ = run_cli(["-o", "json", "--snapshot", DEMO, "explain", "-n", "shop", "pod", "db-0"])
    assert code == 0 and json.loads(out)["pod"]["name"] == "db-0"


def test_node_explanation_orders_pods_for_eviction():
    r = explain("node", "node-a1")
    assert r["kind"] == "NodeExplanation" and r["state"]["state"] == "Ready"
    ranks = [p["rank"] for p in r["pods"]]
    assert ranks[-1] is None  # the node-critical DaemonSet pod is never evicted by the kubelet
    assert r["pods"][0]["qos"] == "Burstable"


def test_partitioned_node():
    r = explain("node", "node-d1")
    assert r["state"]["partitioned"] is True and r["state"]["heartbeatAgeSeconds"] == 1200


def test_priority_audit():
    r = explain("priorities")
    assert r["kind"] == "PriorityAudit" and r["globalDefault"] == "standard"
    assert "BOTTOM_UP_ROLLOUT_RISK" in {f["code"] for f in r["findings"]}


@pytest.mark.parametrize("args,code,message", [
    (["explain", "pod", "nope", "-n", "shop"], 1, 'pod "nope" not found in namespace "shop"'),
    (["explain", "node", "nope"], 1, 'node "nope" not found'),
    (["explain", "pod"], 2, "Missing argument"),
    (["explain", "pod", "x", "-o", "xml"], 2, "Invalid value"),
], ids=["unknown pod", "unknown node", "missing name", "bad output"])
def test_errors_are_one_line(args, code, message):
    rc, out, err = run_cli(args + ["--snapshot", DEMO])
    assert rc == code and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("output", ["table", "wide", "yaml"])
def test_every_output_renders(output):
    for args in (["pod", "api-7c9b4-0q0", "-n", "shop"], ["node", "node-b1"], ["priorities"]):
        rc, out, err = run_cli(["explain", *args, "--snapshot", DEMO, "-o", output])
        assert rc == 0 and out.strip(), err


def test_the_termination_timeline_times_are_one_column():
    code, out, err = run_cli(["explain", "pod", "web-5d8f7c-0x0", "-n", "shop", "--snapshot", DEMO, "--as-of", DEMO_NOW])
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("  t+")]
    assert [r.split()[0] for r in rows] == ["t+0s", "t+0s", "t+5s", "t+30s"]
    assert len({r.index(r.split()[1]) for r in rows}) == 1, "\n".join(rows)  # the events start in one column
