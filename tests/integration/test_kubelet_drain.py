"""A real drain of the real node: each wave's estimated duration against the measured one.

Two waves: a PDB (maxUnavailable 1) over a two-replica Deployment lets one of its pods go per
wave; the replacements run on a kwok node that carries the real node's label. A bare pod whose
preStop hook overruns its grace period leaves in the first wave.
"""

from __future__ import annotations

import json
import time

from cluster_helpers import create, pdb, wait_until
from kubelet_helpers import TOLERANCE, ExitWatch, app_container, app_pod, running_pids
from test_kubelet_termination import kubelet_start

from controlplane.node import LABEL
from tests.unit.cli_helpers import run_cli


def test_drain_waves_take_the_time_the_plan_estimates(cluster, real_node, namespace, make_node):
    spare = make_node(f"spare-{namespace[-6:]}", labels=dict([LABEL.split("=")]))["metadata"]["name"]
    cluster.kubectl("cordon", spare)  # the originals must land on the real node
    spec = app_pod(namespace, "web", grace=3)["spec"]
    spec["containers"] = [app_container(namespace, "$(POD_NAME)", "app")]
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec}}}
    create(cluster, namespace, deployment, pdb("web", {"app": "web"}, max_unavailable=1),
           app_pod(namespace, "overrun", grace=2, pre_stop_sleep=10))
    web = wait_until(lambda: _pods(cluster, namespace, "app=web", 2), timeout=60, what="the web pods")
    try:
        pids = running_pids(cluster, namespace, [(n, "app") for n in [*web, "overrun"]])
    except AssertionError:
        print(cluster.kubectl("get", "pods", "-n", namespace, "-o", "wide").stdout)
        raise
    wait_until(lambda: json.loads(cluster.kubectl("get", "pdb", "web", "-n", namespace, "-o", "json").stdout)
               .get("status", {}).get("disruptionsAllowed") == 1, timeout=30, what="the PDB to allow 1")
    cluster.kubectl("uncordon", spare)
    watch = ExitWatch(pids)
    args = ["drain", real_node.name, "--force", "-o", "json", "--kubeconfig", str(cluster.kubeconfig)]
    code, out, err = run_cli([*args, "--dry-run"])
    assert code == 0, err
    plan = json.loads(out)

    start = time.monotonic()
    try:
        code, out, err = run_cli([*args, "--yes"])
        took = time.monotonic() - start
        assert code == 0, err
        exits = watch.wait(timeout=10)
    finally:
        cluster.kubectl("uncordon", real_node.name)  # the node serves the other tests

    waves = {pod.split("/")[1]: w for w in plan["waves"] for pod in w["pods"] if pod.startswith(namespace + "/")}
    assert sorted(w["wave"] for w in waves.values()) == [1, 1, 2]
    terms = {n: kubelet_start(namespace, n) for n in waves}
    for n, w in waves.items():  # each pod stops within its wave's grace period as the plan counts it
        stopped = exits[f"{n}.app"] - terms[n]
        print(f"{n}: wave {w['wave']} grace {w['gracePeriodSeconds']}s (est. {w['estimatedSeconds']}s); "
              f"stopped {stopped:.2f}s after the kubelet began")
        assert stopped < w["gracePeriodSeconds"] + TOLERANCE, (n, stopped, w)
    second = min(terms[n] for n, w in waves.items() if w["wave"] == 2)
    wave_one = second - min(terms[n] for n, w in waves.items() if w["wave"] == 1)
    print(f"wave 1 measured {wave_one:.1f}s; drain {took:.1f}s, estimated {plan['estimatedSeconds']}s")
    assert wave_one < plan["waves"][0]["estimatedSeconds"] + TOLERANCE
    assert took < plan["estimatedSeconds"] + 2 * TOLERANCE


def _pods(cluster, namespace, selector, count):
    items = json.loads(cluster.kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "json").stdout)["items"]
    names = [p["metadata"]["name"] for p in items if p["status"].get("phase") == "Running"]
    return names if len(names) == count else None
