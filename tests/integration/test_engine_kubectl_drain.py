"""kured and system-upgrade-controller drain with kubectl's drain helper and fixed flags: their oracle is the
real ``kubectl drain`` with those flags on the test control plane. Our ``drain --dry-run --engine kured|suc``
prediction must name the pods kubectl evicts or deletes, the pods it leaves, and whether the drain ends
(COMPLETES) or not (kubectl gives up at its --timeout or refuses the node).

The flags below are the engines', from their source, not from our profiles: kured 1.23.0
cmd/kured/main.go ``drain`` (Force, DeleteEmptyDirData, IgnoreAllDaemonSets; --drain-timeout,
--drain-pod-selector); system-upgrade-controller v0.20.1 pkg/upgrade/job/job.go ``New``
(--ignore-daemonsets and --delete-emptydir-data unless the Plan says false, --pod-selector
'!upgrade.cattle.io/controller[,selector]', --force, --disable-eviction, --timeout).
"""

from __future__ import annotations

import json

import pytest
from cluster_helpers import (create, daemonset, deployment, pdb, place_on, pod, pods_by_uid, pool_nodes,
                             wait_pdb_settled)

from tests.unit.cli_helpers import run_cli

TIMEOUT = "20s"  # the engines' drain timeout in these scenarios, and kubectl's --timeout
KURED = ["--force", "--delete-emptydir-data", "--ignore-daemonsets"]
SUC = ["--ignore-daemonsets", "--delete-emptydir-data", "--pod-selector", "!upgrade.cattle.io/controller"]
EMPTYDIR = {"name": "scratch", "emptyDir": {}}


def web(namespace, replicas=3, **kw):
    return deployment("web", replicas, node_selector={"pool": namespace}, requests={"cpu": "10m"}, **kw)


def solo(namespace):
    return deployment("solo", 1, node_selector={"pool": namespace}, requests={"cpu": "10m"})


def with_volume(obj, volume):
    obj["spec"]["template"]["spec"]["volumes"] = [volume]
    return obj


def bare(name, node, labels=None):
    return pod(name, labels, node_name=node)


# -- scenarios: (objects, pods expected running, PDBs to settle) -----------------------------------
def never_allows(ns, nodes):
    return [web(ns), solo(ns), pdb("web", {"app": "web"}, min_available=3)], 4, ["web"]


def single_replica(ns, nodes):
    return [solo(ns)], 1, []


def local_storage(ns, nodes):
    return [with_volume(solo(ns), EMPTYDIR)], 1, []


def unmanaged(ns, nodes):
    return [solo(ns), bare("bare", nodes[0])], 2, []


def kured_selector_opt_out(ns, nodes):
    return [solo(ns), bare("keep", nodes[0], {"app": "keep"})], 2, []


def suc_controller_opt_out(ns, nodes):
    return [solo(ns), bare("upgrader", nodes[0], {"app": "upgrader", "upgrade.cattle.io/controller": "suc"})], 2, []


def several_nodes(ns, nodes):
    return [web(ns), pdb("web", {"app": "web"}, max_unavailable=1)], 3, ["web"]


# id, builder, drained nodes (of 3), engine, its settings, kubectl drain's flags for them, predicted verdict
SCENARIOS = [
    ("kured-pdb-never-allows", never_allows, 1, "kured", ["drain-timeout=20s"], KURED, "FAILS"),
    ("kured-single-replica", single_replica, 1, "kured", [], KURED, "COMPLETES"),
    ("kured-local-storage", local_storage, 1, "kured", [], KURED, "COMPLETES"),
    ("kured-unmanaged-pod-deleted", unmanaged, 1, "kured", [], KURED, "COMPLETES"),
    ("kured-drain-pod-selector-opt-out", kured_selector_opt_out, 1, "kured", ["drain-pod-selector=app!=keep"],
     KURED + ["--pod-selector", "app!=keep"], "COMPLETES"),
    ("kured-several-nodes", several_nodes, 2, "kured", ["concurrency=2"], KURED, "COMPLETES"),
    ("suc-pdb-never-allows", never_allows, 1, "suc", ["concurrency=1", "drain.timeout=20s"], SUC, "FAILS"),
    ("suc-single-replica", single_replica, 1, "suc", ["concurrency=1"], SUC, "COMPLETES"),
    ("suc-local-storage-refused", local_storage, 1, "suc", ["concurrency=1", "drain.deleteEmptydirData=false"],
     ["--ignore-daemonsets", "--pod-selector", "!upgrade.cattle.io/controller"], "FAILS"),
    ("suc-unmanaged-refused", unmanaged, 1, "suc", ["concurrency=1"], SUC, "FAILS"),
    ("suc-controller-label-opt-out", suc_controller_opt_out, 1, "suc", ["concurrency=1", "drain.force=true"],
     SUC + ["--force"], "COMPLETES"),
    ("suc-disable-eviction-forces", never_allows, 1, "suc", ["concurrency=1", "drain.disableEviction=true"],
     SUC + ["--disable-eviction"], "FORCES"),
    ("suc-several-nodes", several_nodes, 2, "suc", ["concurrency=2"], SUC, "COMPLETES"),
]


def predict(cluster, targets, engine, settings):
    args = ["drain", *targets, "--dry-run", "--engine", engine]
    for s in settings:
        args += ["--engine-setting", s]
    code, out, err = run_cli([*args, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    assert out.strip(), err
    return code, json.loads(out)["engine"]


@pytest.mark.parametrize("build, drained, engine, settings, flags, verdict", [s[1:] for s in SCENARIOS],
                         ids=[s[0] for s in SCENARIOS])
def test_engine_prediction_matches_kubectl_drain(cluster, namespace, make_node, build, drained, engine, settings,
                                                  flags, verdict):
    nodes = pool_nodes(make_node, namespace, 3, engine)
    targets, spare = nodes[:drained], nodes[drained:]
    objects, count, pdbs = build(namespace, targets)
    place_on(cluster, namespace, spare, objects, count)
    create(cluster, namespace, daemonset(namespace))
    for name in pdbs:
        wait_pdb_settled(cluster, namespace, name)
    before = pods_by_uid(cluster, namespace)
    on_targets = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in before.values()
                  if p["spec"].get("nodeName") in targets}

    code, engine_plan = predict(cluster, targets, engine, settings)
    assert engine_plan["verdict"] == verdict and code == (0 if verdict == "COMPLETES" else 3), engine_plan
    going = {f"{p['namespace']}/{p['name']}" for n in engine_plan["nodes"] for p in n["pods"]
             if p["action"] in ("evict", "delete", "forced")}
    assert going <= on_targets

    result = cluster.kubectl("drain", *targets, f"--timeout={TIMEOUT}", *flags, check=False, timeout=90)
    after = pods_by_uid(cluster, namespace)
    gone = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for uid, p in before.items()
            if uid not in after and p["spec"].get("nodeName") in targets}
    assert gone == going, (engine_plan["nodes"], result.stdout, result.stderr)
    assert (result.returncode == 0) == (verdict in ("COMPLETES", "FORCES")), result.stderr
    if verdict == "FAILS" and any(n["atSeconds"] for n in engine_plan["nodes"]):
        assert "global timeout reached: 20s" in result.stderr, result.stderr
