"""`kubectl safety rollout` on the demo dump: the plan, JSON, exit codes, usage errors."""

import json

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

POOL = ["node-a1", "node-a2", "node-b1", "node-b2", "node-c1", "node-c2"]


def rollout(*args):
    return run_cli(["rollout", *args, "--snapshot", DEMO, "--as-of", DEMO_NOW])


def test_demo_pool_plan_is_not_safe_and_names_the_stopping_batch():
    code, out, err = rollout(*POOL, "--dry-run", "--ignore-daemonsets", "--max-unavailable", "2")
    assert code == 3, err
    assert "BATCH" in out and "NOT SAFE" in out and "would stop at batch 1" in out


def test_demo_plan_json():
    code, out, err = rollout(*POOL, "--dry-run", "--ignore-daemonsets", "--delete-emptydir-data", "--force",
                             "--no-precordon", "--by-zone", "-o", "json")
    assert code in (0, 3), err
    plan = json.loads(out)
    assert (plan["kind"], plan["apiVersion"]) == ("RolloutPlan", "safety.kubectl.io/v1")
    assert sorted(n for b in plan["batches"] for n in b["nodes"]) == POOL
    assert all(len(b["zones"]) == 1 for b in plan["batches"])
    assert all(b["drain"]["kind"] == "DrainPlan" for b in plan["batches"])
    assert plan["safe"] == all(b["safe"] for b in plan["batches"]) and plan["rollout"].startswith("kubectl-safety-rollout-")


def test_selector_picks_the_pool():
    code, out, err = rollout("-l", "topology.kubernetes.io/zone=eu-west-1a", "--dry-run", "-o", "json",
                             "--ignore-daemonsets", "--no-precordon")
    assert json.loads(out)["nodes"] == ["node-a1", "node-a2"], err


@pytest.mark.parametrize("args, code, message", [
    ((), 2, "specify the pool"),
    (("node-a1", "-l", "x=y"), 2, "cannot specify both"),
    (("node-a1", "--max-unavailable", "0"), 2, "--max-unavailable=0"),
    (("node-a1", "--wait-for", "boot-id"), 2, "--wait-for=boot-id needs --exec"),
    (("node-a1", "--wait-for", "sometimes"), 2, "boot-id, kubelet-version or label="),
    (("node-a1", "--accept-risk", "nonsense"), 2, "unknown risk"),
    (("node-zz", "--dry-run"), 1, 'node "node-zz" not found'),
    (("node-a1",), 2, "needs a live cluster"),
])
def test_usage_errors(args, code, message):
    got, out, err = rollout(*args)
    assert got == code and message in err, err


def test_help_documents_kinds_and_exit_codes():
    code, out, _ = run_cli(["rollout", "--help"])
    assert code == 0 and "RolloutPlan" in out and "RolloutReport" in out and "--max-unavailable" in out


@pytest.mark.parametrize("recorded, surges", [
    ('["Deployment default/web 3->4"]', {"n1": ("Deployment default/web 3->4",)}),
    ("not json", {}),
    ("[]", {}),
])
def test_surges_an_earlier_run_recorded_are_read_from_the_node(recorded, surges):
    from kubectl_safety.engine.rollout import recorded as recorded_on
    from tests.builders import make_node

    n1, n2, n3 = make_node("n1"), make_node("n2"), make_node("n3")
    n1["metadata"]["annotations"] = {"safety.kubectl.io/rollout": "ro", "safety.kubectl.io/rollout-state": "draining",
                                     "safety.kubectl.io/rollout-surges": recorded}
    n2["metadata"]["annotations"] = {"safety.kubectl.io/rollout": "ro", "safety.kubectl.io/rollout-state": "done"}
    n3["metadata"]["annotations"] = {"safety.kubectl.io/rollout": "other", "safety.kubectl.io/rollout-state": "done"}
    assert recorded_on({"n1": n1, "n2": n2, "n3": n3}, "ro") == ({"n1": "draining", "n2": "done"}, surges)
