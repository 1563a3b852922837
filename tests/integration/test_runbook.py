"""examples/pool-gate.sh against the control plane: a pool gated by check -l and planned by rollout,
the blockers read with -o jsonpath, each exit code branched on; no jq."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cluster_helpers import create, deployment, pdb, pool_nodes, wait_pods_running

ROOT = Path(__file__).resolve().parents[2]


def gate(cluster, selector, tmp_path):
    shims = tmp_path / "shims"
    shims.mkdir(exist_ok=True)
    (shims / "jq").write_text("#!/bin/sh\necho 'jq called' >&2\nexit 99\n")
    (shims / "jq").chmod(0o755)
    env = dict(os.environ, PATH=f"{shims}{os.pathsep}{os.environ['PATH']}",
               KUBECTL_SAFETY=f"{sys.executable} -m kubectl_safety")
    done = subprocess.run(["bash", str(ROOT / "examples" / "pool-gate.sh"), selector,
                           "--kubeconfig", str(cluster.kubeconfig)], env=env, capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert "jq called" not in done.stderr
    return done.returncode, done.stdout, done.stderr


def test_pool_gate_on_a_live_pool(cluster, namespace, make_node, tmp_path):
    nodes = pool_nodes(make_node, namespace, 2)
    web = deployment("web", 2, node_selector={"pool": namespace}, requests={"cpu": "100m"})
    web["spec"]["template"]["spec"]["topologySpreadConstraints"] = [  # one pod a node: each batch has one to move
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"app": "web"}}}]
    create(cluster, namespace, web, pdb("web", {"app": "web"}, max_unavailable=1))
    placed = {p["spec"]["nodeName"] for p in wait_pods_running(cluster, namespace, count=2)}
    assert placed == set(nodes)
    selector = f"pool={namespace}"

    code, out, err = gate(cluster, selector, tmp_path)  # ready, but pre-cordoning the pool leaves no room
    assert code == 3, out + err
    assert out.startswith("ready: ") and "cause: pre-cordoning the pool" in out and "SAFE with --no-precordon" in out

    create(cluster, namespace, pdb("never", {"app": "web"}, min_available=2))  # the pool's own PDB blocks it
    code, out, err = gate(cluster, selector, tmp_path)
    assert code == 3 and out.startswith("not ready; what blocks the pool:"), out + err
    assert "blocks 1 node(s): POD_NOT_EVICTABLE" in out  # two PDBs select each pod: the Eviction API refuses
    assert "finding error PDB_OVERLAP" in out and "finding error PDB_NEVER_ALLOWS" in out

    code, out, err = gate(cluster, "pool in (", tmp_path)  # a selector that does not parse: usage
    assert code == 2 and "error: check failed (exit 2)" in err
