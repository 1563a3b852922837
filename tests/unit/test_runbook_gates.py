"""What a maintenance runbook relies on: pool-scoped gates, exit codes, plans that name their cause."""

import json

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW]
A1 = ["-l", "kubernetes.io/hostname=node-a1"]


def check(*flags):
    code, out, err = run_cli(["check", "-o", "json", *flags] + OFFLINE)
    return code, json.loads(out), err


# -- item 1: check -l POOL is a pool gate -----------------------------------------------------------
def test_check_l_pool_gates_on_what_the_pool_touches():
    code, report, err = check(*A1)
    assert code == 0, err
    assert report["summary"]["scope"] == "pool" and report["summary"]["ready"]
    other = {f["code"]: f["reason"] for f in report["otherFindings"]}
    assert other["PDB_NEVER_ALLOWS"] == "outside"  # shop/db has no pod on node-a1
    assert "PDB_NEVER_ALLOWS" not in {f["code"] for f in report["findings"]}
    touched = {(o["kind"], o["name"]) for f in report["findings"] for o in f["objects"]}
    assert ("Deployment", "web") in touched  # web runs on node-a1: its finding stays in the gate


def test_check_scope_cluster_gates_on_every_finding():
    code, report, _ = check(*A1, "--scope", "cluster")
    assert code == 3 and report["summary"]["scope"] == "cluster" and report["otherFindings"] == []
    assert "PDB_NEVER_ALLOWS" in {f["code"] for f in report["findings"]}


def test_check_text_reports_the_rest_apart():
    code, out, _ = run_cli(["check", *A1] + OFFLINE)
    assert code == 0
    assert "Elsewhere in the cluster (not gating; --scope cluster gates on them):" in out
    assert out.index("Elsewhere") < out.index("READY")


def test_check_fail_on_none_gates_on_nodes_only():
    code, report, _ = check("-l", "topology.kubernetes.io/zone=eu-west-1a", "--fail-on", "none")
    assert report["summary"]["failOn"] == "none" and report["summary"]["failing"] == 0
    assert code == (0 if report["summary"]["notDrainable"] == 0 else 3)
    code, report, _ = check(*A1, "--scope", "cluster", "--fail-on", "none")
    assert code == 0 and report["findings"]


def test_check_ignore_finding_keeps_a_code_from_gating():
    code, report, _ = check(*A1, "--scope", "cluster", "--ignore-finding", "PDB_NEVER_ALLOWS",
                            "--ignore-finding", "BOTTOM_UP_ROLLOUT_RISK,NODE_NOT_READY")
    assert code == 0, report["findings"]
    assert {f["code"] for f in report["otherFindings"] if f["reason"] == "ignored"} >= {"PDB_NEVER_ALLOWS"}


def test_check_ignore_finding_refuses_what_is_not_a_code():
    code, _, err = run_cli(["check", "--ignore-finding", "not a code"] + OFFLINE)
    assert code == 2 and err.startswith("error: --ignore-finding")


# -- item 3: blocked nodes go last; --skip-blocked ---------------------------------------------------
DEMO_POOL = ["node-a1", "node-a2", "node-b1", "node-b2", "node-c1", "node-c2"]
ROLLOUT = ["rollout", *DEMO_POOL, "--dry-run", "--no-precordon", "--ignore-daemonsets", "-o", "json"] + OFFLINE


def test_rollout_puts_blocked_nodes_last():
    code, out, _ = run_cli(ROLLOUT)
    plan = json.loads(out)
    assert code == 3
    verdicts = [b["safe"] for b in plan["batches"]]
    assert verdicts[:2] == [True, True] and not any(verdicts[2:]), verdicts  # what can go goes first
    assert plan["stopsAtBatch"] == 3
    assert sorted(plan["leftNodes"]) == sorted(n for b in plan["batches"][2:] for n in b["nodes"])


def test_rollout_skip_blocked_plan_names_the_nodes_left():
    code, out, _ = run_cli(ROLLOUT + ["--skip-blocked"])
    plan = json.loads(out)
    assert code == 3 and plan["options"]["skipBlocked"]
    assert set(plan["leftNodes"]) == {n for b in plan["batches"] if not b["safe"] for n in b["nodes"]}
    code, text, _ = run_cli([a for a in ROLLOUT + ["--skip-blocked"] if a not in ("-o", "json")])
    assert "Left unmaintained: 4 node(s): " in text and "would be left (--skip-blocked); exit 3" in text


def test_rollout_that_blocks_at_the_first_batch_says_which_nodes_would_be_left():
    code, out, _ = run_cli([a for a in ROLLOUT if a != "--no-precordon"])
    plan = json.loads(out)
    stop = plan["stopsAtBatch"]
    assert code == 3 and plan["leftNodes"] == [n for b in plan["batches"][stop - 1:] for n in b["nodes"]]
