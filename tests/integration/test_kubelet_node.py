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


def test_node_up_wipes_what_a_crashed_run_left(cluster, real_node, namespace):
    create(cluster, namespace, app_pod(namespace, "survivor", grace=30))
    pid = running_pids(cluster, namespace, [("survivor", "app")])["survivor.app"]
    namespaces = netns()
    for component in ("kubelet", "containerd"):  # a crash: the daemons die, shims and containers stay
        for daemon in real._pids_matching(real._marker(component)):
            os.kill(daemon, signal.SIGKILL)
    assert Path(f"/proc/{pid}").exists() and namespaces

    real_node.up()

    assert not Path(f"/proc/{pid}").exists()
    assert not namespaces & netns()
    assert real.owned_by(cluster)
    # The wiped node works: the kubelet starts the pod's container again, as a new process.
    assert running_pids(cluster, namespace, [("survivor", "app")])["survivor.app"] != pid
