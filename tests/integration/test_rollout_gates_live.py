"""`rollout --block-on-alerts` against a real Prometheus whose rule fires on demand (a gauge pushed to a
real Pushgateway it scrapes every second), and `--blocking-pod-selector` re-checked live, on the
control plane."""

from __future__ import annotations

import json

import pytest
from cluster_helpers import create, deployment, get_json, pod, wait_pods_running, wait_until

from tests import promstack
from tests.ci import unavailable
from tests.unit.cli_helpers import run_cli

pytestmark = pytest.mark.needs_build("prometheus")  # built after the control plane: runs last


@pytest.fixture
def stack(tmp_path):
    reason = promstack.unavailable("pushgateway") or promstack.unavailable("prometheus")
    if reason:
        unavailable(reason)
    s = promstack.Stack(tmp_path, prometheus=True)
    yield s
    s.close()


def _pool(cluster, namespace, make_node, tag):
    pool = [make_node(f"{tag}-{i}", labels={"role": tag, "tier": namespace})["metadata"]["name"] for i in range(2)]
    create(cluster, namespace, deployment("app", 2, node_selector={"tier": namespace}, requests={"cpu": "100m"}))
    wait_pods_running(cluster, namespace, count=2)
    return pool


def test_a_firing_alert_stops_the_rollout_before_anything_is_cordoned(cluster, namespace, make_node, stack):
    pool = _pool(cluster, namespace, make_node, f"al-{namespace[-6:]}")
    argv = ["rollout", "-l", f"role=al-{namespace[-6:]}", "--gate-timeout", "60s", "--lease-namespace", namespace,
            "--no-precordon", "--block-on-alerts", stack.prometheus, "--outside-window", "stop", "--yes",
            "--kubeconfig", str(cluster.kubeconfig)]
    stack.alert(True)
    wait_until(lambda: promstack.ALERT in stack.firing(), 60, "the test alert firing")
    code, out, err = run_cli(argv + ["-o", "json"])
    report = json.loads(out)
    assert code == 3 and report["status"] == "blocked", err
    assert f"1 alert(s) firing: {promstack.ALERT}" in report["message"]
    assert not any(get_json(cluster, f"node/{n}")["spec"].get("unschedulable") for n in pool)  # nothing touched

    code, out, err = run_cli(argv + ["--alert-filter", "severity=ticket"])  # the filter leaves it out
    assert code == 0, err

    stack.alert(False)
    wait_until(lambda: not stack.firing(), 60, "the test alert resolved")
    code, out, err = run_cli(argv)
    assert code == 0, err


def test_a_blocking_pod_holds_its_node_in_the_plan_and_live(cluster, namespace, make_node):
    tag = f"bp-{namespace[-6:]}"
    pool = _pool(cluster, namespace, make_node, tag)
    argv = ["rollout", "-l", f"role={tag}", "--gate-timeout", "60s", "--lease-namespace", namespace,
            "--no-precordon", "--blocking-pod-selector", "app=backup", "--outside-window", "stop", "--force",
            "--kubeconfig", str(cluster.kubeconfig)]
    create(cluster, namespace, *(pod(f"backup-{i}", node_name=n, labels={"app": "backup"}) for i, n in enumerate(pool)))
    wait_pods_running(cluster, namespace, count=4)
    code, out, err = run_cli(argv + ["--dry-run", "-o", "json"])
    plan = json.loads(out)
    assert plan["gates"]["heldNodes"] == [{"node": n, "pods": [f"{namespace}/backup-{i}"]} for i, n in enumerate(pool)]
    first = plan["batches"][0]["nodes"][0]
    code, out, err = run_cli(argv + ["--yes", "-o", "json"])
    report = json.loads(out)
    assert code == 3 and report["status"] == "blocked", err
    assert f"node {first} is held by pod(s) matching app=backup: {namespace}/backup-{pool.index(first)}" in \
        report["message"]
    assert not any(get_json(cluster, f"node/{n}")["spec"].get("unschedulable") for n in pool)


def test_outside_its_window_the_rollout_waits_for_the_window_then_runs(cluster, namespace, make_node):
    """--outside-window wait: started before the window opens, the rollout evicts nothing until it opens,
    says what it waits for, then maintains every node (minute-resolution windows: this waits up to 80 s)."""
    from datetime import datetime, timedelta, timezone

    tag = f"ow-{namespace[-6:]}"
    pool = _pool(cluster, namespace, make_node, tag)
    before = {p["metadata"]["uid"] for p in get_json(cluster, "pods", "-n", namespace)["items"]}
    now = datetime.now(timezone.utc)
    opens = (now + timedelta(seconds=20 + 60)).replace(second=0, microsecond=0)  # 20-80 s ahead
    window = f"Mon-Sun {opens:%H:%M}-{opens + timedelta(minutes=30):%H:%M} UTC"
    code, out, err = run_cli(["rollout", "-l", f"role={tag}", "--gate-timeout", "60s", "--lease-namespace",
                              namespace, "--no-precordon", "--window", window, "--outside-window", "wait",
                              "--yes", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    report = json.loads(out)
    assert code == 0 and report["status"] == "done", err
    assert "batch 1 waits: outside the maintenance windows" in err, err
    assert sorted(n["name"] for n in report["nodes"]) == sorted(pool), report["nodes"]
    replacements = [p for p in get_json(cluster, "pods", "-n", namespace)["items"] if p["metadata"]["uid"] not in before]
    assert replacements, "the rollout evicted nothing"
    created = min(datetime.fromisoformat(p["metadata"]["creationTimestamp"].replace("Z", "+00:00")) for p in replacements)
    assert created >= opens, (created, opens)  # the first eviction came once the window had opened
