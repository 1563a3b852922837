"""`why pod` on the real kubelet node: a container past its memory limit (OOM killed by the kernel, the
kubelet reporting OOMKilled) and a node-pressure eviction (the kubelet's Evicted status, message and event),
each answered live and from a dump taken right after, its time compared with what the test did."""

from __future__ import annotations

import json

from cluster_helpers import create, wait_until
from kubelet_helpers import app_pod
from test_kubelet_eviction import PRESSURE
from test_why_live import answered, now


def status(cluster, namespace, name):
    return json.loads(cluster.kubectl("get", "pod", name, "-n", namespace, "-o", "json").stdout)["status"]


def test_why_oom_killed_container_on_the_real_node(cluster, real_node, namespace, tmp_path):
    before = now()
    create(cluster, namespace, app_pod(namespace, "hog", hold_mib=256, requests={"memory": "64Mi"},
                                       limits={"memory": "64Mi"}))

    def killed():
        for c in status(cluster, namespace, "hog").get("containerStatuses") or []:
            for state in ("state", "lastState"):
                if ((c.get(state) or {}).get("terminated") or {}).get("reason") == "OOMKilled":
                    return c
        return None

    wait_until(killed, 120, "the container OOM-killed")
    r = answered(cluster, tmp_path, ("pod", "hog", "-n", namespace), "OOM_KILLED", "OOM killer", before, now(),
                 "container past its memory limit on the real kubelet node")
    assert r["cause"]["details"]["container"] == "app" and r["cause"]["details"]["memoryLimit"] == "64Mi"
    assert real_node.name in r["cause"]["actor"]


def test_why_node_pressure_eviction_on_the_real_node(cluster, real_node, namespace, tmp_path):
    create(cluster, namespace, app_pod(namespace, "pressed", grace=3))
    wait_until(lambda: status(cluster, namespace, "pressed").get("phase") == "Running", 90, "the pod running")
    before = now()
    try:
        real_node.start_kubelet(**PRESSURE)
        wait_until(lambda: status(cluster, namespace, "pressed").get("reason") == "Evicted", 120, "the eviction")
        after = now()
    finally:
        real_node.start_kubelet()
    r = answered(cluster, tmp_path, ("pod", "pressed", "-n", namespace), "KUBELET_EVICTION",
                 f"kubelet on {real_node.name}", before, after, "node-pressure eviction by the real kubelet")
    details = r["cause"]["details"]
    assert (details["kind"], details["resource"], details["messageFormat"]) == ("pressure", "memory", "current")
    assert details["threshold"] and details["usage"][0]["container"] == "app"
    # its place among the node's pods (the node's static and system pods may rank around it)
    assert 1 <= details["evictionRank"] <= details["evictionRankOf"], details
    assert f"of {details['evictionRankOf']} (" in details["evictionOrder"]
