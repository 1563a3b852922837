"""QoS class, oom_score_adj and cgroup values: what `explain pod` says against what the kubelet set.

This machine has cgroup v1 only and refuses negative oom_score_adj values (docs/deviations.md):
the cgroup files are v1's, and a Guaranteed container is checked for its order (below the
Burstable one), not for -997.
"""

from __future__ import annotations

from pathlib import Path

from cluster_helpers import create, get_json
from kubelet_helpers import app_pod, running_pids
from test_kubelet_termination import tool

from kubectl_safety.model.quantity import parse_quantity

CGROUP = Path("/sys/fs/cgroup")
UNLIMITED = 9223372036854771712  # cgroup v1 memory.limit_in_bytes without a limit
CFS_PERIOD = 100_000

PODS = {
    "besteffort": {},
    "burstable": {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "300m", "memory": "2Gi"}},
    "guaranteed": {"requests": {"cpu": "200m", "memory": "96Mi"}, "limits": {"cpu": "200m", "memory": "96Mi"}},
}


def cgroup_dir(pid: int, controller: str) -> Path:
    """The v1 cgroup of ``pid`` in ``controller``'s hierarchy."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return CGROUP / controller / path.lstrip("/")
    raise AssertionError(f"no {controller} cgroup for {pid}")


def read_int(path: Path) -> int:
    return int(path.read_text().split()[0])


def test_qos_oom_score_adj_and_cgroups_match_explain_pod(cluster, real_node, namespace):
    create(cluster, namespace, *(app_pod(namespace, name, grace=0, **resources) for name, resources in PODS.items()))
    pids = running_pids(cluster, namespace, [(name, "app") for name in PODS])
    said = {name: tool(cluster, "explain", "pod", name, "-n", namespace) for name in PODS}

    observed = {}
    for name in PODS:
        pid = pids[f"{name}.app"]
        container_cpu = cgroup_dir(pid, "cpu")
        pod_cpu, pod_memory = container_cpu.parent, cgroup_dir(pid, "memory").parent
        observed[name] = {
            "qosClass": get_json(cluster, "pod", name, "-n", namespace)["status"]["qosClass"],
            "oomScoreAdj": read_int(Path(f"/proc/{pid}/oom_score_adj")),
            "podCpuShares": read_int(pod_cpu / "cpu.shares"),
            "podCfsQuota": read_int(pod_cpu / "cpu.cfs_quota_us"),
            "podMemoryLimit": read_int(pod_memory / "memory.limit_in_bytes"),
            "qosCgroup": pod_cpu.parent.name,
        }

    for name, resources in PODS.items():
        report, seen = said[name], observed[name]
        print(f"{name}: tool {report['qos']['class']} requests {report['requests']} oom {report['oomScoreAdj']}; "
              f"kubelet {seen}")
        assert report["qos"]["class"] == seen["qosClass"], name
        # The class picks the cgroup parent: kubepods/besteffort, kubepods/burstable, kubepods itself.
        assert seen["qosCgroup"] == {"BestEffort": "besteffort", "Burstable": "burstable"}.get(seen["qosClass"],
                                                                                               "kubepods"), name
        requests = {r: parse_quantity(v) for r, v in report["requests"].items()}
        limits = {r: parse_quantity(v) for r, v in resources.get("limits", {}).items()}
        # cpu.shares from the cpu request the tool shows (2, the minimum, without one).
        assert seen["podCpuShares"] == max(2, int(requests.get("cpu", 0) * 1024)), name
        assert seen["podCfsQuota"] == (int(limits["cpu"] * CFS_PERIOD) if "cpu" in limits else -1), name
        assert seen["podMemoryLimit"] == (int(limits["memory"]) if "memory" in limits else UNLIMITED), name
        if seen["qosClass"] == "Guaranteed":  # limits equal to the requests the tool shows
            assert seen["podMemoryLimit"] == requests["memory"], name

    # oom_score_adj: exact for BestEffort and Burstable; Guaranteed's -997 is clamped to 0 on this
    # machine (no CAP_SYS_RESOURCE), so only its order relative to the others is checked.
    for name in ("besteffort", "burstable"):
        assert observed[name]["oomScoreAdj"] == said[name]["oomScoreAdj"], name
    assert said["guaranteed"]["oomScoreAdj"] == -997
    assert observed["guaranteed"]["oomScoreAdj"] < observed["burstable"]["oomScoreAdj"] < \
        observed["besteffort"]["oomScoreAdj"]
