"""The real node's lifecycle: a crashed run's leftovers are wiped when the node starts again."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from cluster_helpers import create
from kubelet_helpers import app_pod, running_pids

from controlplane import node as real


def netns() -> set:
    return {p.name for p in Path("/run/netns").glob("cni-*")}


def dead(pid: int) -> bool:
    """Gone, or a zombie: killed, and left for its new parent (the machine's init) to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_node_up_wipes_what_a_crashed_run_left(cluster, real_node, namespace):
    create(cluster, namespace, app_pod(namespace, "survivor", grace=30))
    pid = running_pids(cluster, namespace, [("survivor", "app")])["survivor.app"]
    namespaces = netns()
    for component in ("kubelet", "containerd"):  # a crash: the daemons die, shims and containers stay
        for daemon in real._pids_matching(real._marker(component)):
            os.kill(daemon, signal.SIGKILL)
    assert Path(f"/proc/{pid}").exists() and namespaces

    real_node.up()

    assert dead(pid)  # a loaded machine's init may not have reaped it yet
    assert not namespaces & netns()
    assert real.owned_by(cluster)
    # The wiped node works: the kubelet starts the pod's container again, as a new process.
    assert running_pids(cluster, namespace, [("survivor", "app")])["survivor.app"] != pid
