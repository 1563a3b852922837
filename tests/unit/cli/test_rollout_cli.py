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


def test_dry_run_shows_the_windows_and_what_is_checked_before_every_batch():
    args = ("--dry-run", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--no-precordon",
            "--window", "Sun 08:00-12:00 Europe/Berlin", "--window", "Mon-Fri 02:00-05:00 Europe/Berlin",
            "--block-on-alerts", "http://prometheus:9090", "--alert-filter", "severity=page",
            "--blocking-pod-selector", "app=web")
    code, out, err = rollout("node-a1", "node-b1", *args, "-o", "json")
    gates = json.loads(out)["gates"]
    assert gates["windows"] == ["Sun 08:00-12:00 Europe/Berlin", "Mon-Fri 02:00-05:00 Europe/Berlin"]
    assert (gates["windowClosesAt"], gates["nextWindowOpensAt"]) == ("2026-11-22T11:00:00Z", "2026-11-22T09:00:00Z")
    assert len(gates["batchStarts"]) == len(json.loads(out)["batches"]) and gates["batchStarts"][0] == DEMO_NOW
    assert (gates["alertsUrl"], gates["alertFilter"], gates["outsideWindow"]) == (
        "http://prometheus:9090", "severity=page", "wait")
    assert {h["node"] for h in gates["heldNodes"]} <= {"node-a1", "node-b1"}
    assert gates["blockingPodSelector"] == "app=web"
    code, text, err = rollout("node-a1", "node-b1", *args)
    assert "Before every batch (--outside-window wait):" in text
    assert "maintenance windows: Sun 08:00-12:00 Europe/Berlin; Mon-Fri 02:00-05:00 Europe/Berlin (open now, " \
           "closes 2026-11-22T11:00:00Z)" in text
    assert "no firing alert at http://prometheus:9090 matching severity=page (a failed query blocks)" in text
    code, plain, err = rollout("node-a1", "node-b1", "--dry-run", "--ignore-daemonsets", "-o", "json")
    assert "gates" not in json.loads(plain)  # without the flags the plan is as before


@pytest.mark.parametrize("args, message", [
    (["--window", "Mon-Fir 02:00-05:00"], "--window 'Mon-Fir 02:00-05:00': 'Fir' is not a day"),
    (["--alert-filter", "x"], "--alert-filter needs --block-on-alerts"),
    (["--block-on-alerts", "prometheus:9090"], "must be an http:// or https:// URL"),
    (["--block-on-alerts", "http://p", "--alert-filter", "("], "is not a regular expression"),
    (["--blocking-pod-selector", "a in (b"], "must be a valid label selector"),
    (["--outside-window", "later"], "Invalid value for '--outside-window'"),
])
def test_gate_flag_usage_errors(args, message):
    code, out, err = rollout("node-a1", "--dry-run", *args)
    assert code == 2 and message in err, err
