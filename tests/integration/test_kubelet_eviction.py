"""`explain node`'s memory-pressure eviction rank against the order a real kubelet evicts in.

The kubelet is restarted with a soft ``memory.available`` threshold that is always crossed, so
its eviction manager evicts one pod at a time (waiting for each one's cleanup), with the
soft-eviction grace period capped by ``evictionMaxPodGracePeriod``.
"""

from __future__ import annotations

import json

from cluster_helpers import create, priority_class, wait_until
from kubelet_helpers import TOLERANCE, ExitWatch, app_pod, events, first, running_pids
from test_kubelet_termination import tool

MAX_POD_GRACE = 3
PRESSURE = {
    "evictionSoft": {"memory.available": "99%"},
    "evictionSoftGracePeriod": {"memory.available": "1s"},
    "evictionMaxPodGracePeriod": MAX_POD_GRACE,
    "evictionPressureTransitionPeriod": "1s",
}
# Two pods without a memory request (any usage exceeds it), two well within theirs; priorities
# break the ties, so the kubelet's order does not depend on measured usage.
WITHIN = {"requests": {"memory": "256Mi"}}


def test_memory_pressure_eviction_order_matches_explain_node(cluster, real_node, namespace):
    low, high = f"{namespace}-low", f"{namespace}-high"
    create(cluster, None, priority_class(low, 10), priority_class(high, 1000))
    pods = [app_pod(namespace, "exceeds-low", priority_class=low),
            app_pod(namespace, "exceeds-high", priority_class=high),
            app_pod(namespace, "within-low", priority_class=low, **WITHIN),
            app_pod(namespace, "within-high", priority_class=high, **WITHIN)]
    try:
        create(cluster, namespace, *pods)
        names = [p["metadata"]["name"] for p in pods]
        pids = running_pids(cluster, namespace, [(n, "app") for n in names])
        report = tool(cluster, "explain", "node", real_node.name)
        ranked = [p["name"] for p in sorted(report["pods"], key=lambda p: p["rank"] or 1e9)
                  if p["namespace"] == namespace]
        soft = {n: tool(cluster, "explain", "pod", n, "-n", namespace)["termination"]["kubeletSoftEviction"]
                for n in names}
        watch = ExitWatch(pids)

        real_node.start_kubelet(**PRESSURE)
        exits = watch.wait(timeout=90)
        statuses = wait_until(lambda: _evicted_statuses(cluster, namespace, names), timeout=30,
                              what="the evicted pods' status")
        # A hard threshold: the eviction manager's 1 s grace period.
        real_node.start_kubelet()
        create(cluster, namespace, app_pod(namespace, "hard", priority_class=low))
        hard_watch = ExitWatch(running_pids(cluster, namespace, [("hard", "app")]))
        hard = tool(cluster, "explain", "pod", "hard", "-n", namespace)["termination"]["kubeletHardEviction"]
        real_node.start_kubelet(evictionHard={**real_node.base_eviction_hard(), "memory.available": "99%"})
        hard_exit = hard_watch.wait(timeout=60)["hard.app"]
    finally:
        real_node.start_kubelet()
        cluster.kubectl("delete", "priorityclass", low, high, "--ignore-not-found", check=False)

    evicted = sorted(names, key=lambda n: exits[f"{n}.app"])
    gaps = [exits[f"{b}.app"] - exits[f"{a}.app"] for a, b in zip(evicted, evicted[1:])]
    print(f"explain node rank: {ranked}; kubelet evicted: {evicted}, {[round(g, 1) for g in gaps]} s apart")
    assert ranked == ["exceeds-low", "exceeds-high", "within-low", "within-high"]
    assert evicted == ranked
    for n in names:
        assert statuses[n].get("reason") == "Evicted", (n, statuses[n])
        # The tool: min(pod grace period, the kubelet's evictionMaxPodGracePeriod).
        assert soft[n]["gracePeriodSeconds"] == 30 and "eviction-max-pod-grace-period" in soft[n]["note"]
        term = first(events(namespace, n, "app"), "signal SIGTERM")
        assert abs(exits[f"{n}.app"] - term - min(soft[n]["gracePeriodSeconds"], MAX_POD_GRACE)) < TOLERANCE, n
    hard_term = first(events(namespace, "hard", "app"), "signal SIGTERM")
    print(f"hard eviction: tool {hard}; kubelet SIGKILL {hard_exit - hard_term:.2f}s after SIGTERM")
    assert "SIGKILL 2 s after SIGTERM" in hard["note"]
    assert abs(hard_exit - hard_term - 2) < TOLERANCE
    # One pod at a time: the eviction manager waits for an evicted pod's cleanup before the next.
    for a, b in zip(evicted, evicted[1:]):
        assert first(events(namespace, b, "app"), "signal SIGTERM") > exits[f"{a}.app"], (a, b)


def _evicted_statuses(cluster, namespace, names):
    pods = json.loads(cluster.kubectl("get", "pods", "-n", namespace, "-o", "json").stdout)["items"]
    statuses = {p["metadata"]["name"]: p["status"] for p in pods}
    return statuses if all(statuses.get(n, {}).get("phase") == "Failed" for n in names) else None
