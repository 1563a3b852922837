"""The capi and karpenter profiles against the engines' own drain code, on the same objects.

Each scenario places its pods on a node of its own pool, predicts the engine's drain of that node
(``profiles.outcome.simulate`` on a snapshot read from the control plane), then runs the engine's
oracle (controlplane/engines/<engine>: Cluster API's machine drain helper, Karpenter's terminator and
eviction queue) on that node and compares what it evicted, left in place and waited for, the order of
its groups or tiers, and when it gave up or deleted past a PDB. Under CI a missing oracle fails.
"""

from __future__ import annotations

import json

import pytest
from cluster_helpers import (deployment, get_json, in_ci, pdb, place_on, pool_nodes, pod, wait_pdb_settled,
                             wait_pods_running)

from kubectl_safety.analysis import profiles
from kubectl_safety.analysis.profiles.outcome import Outcome, simulate
from kubectl_safety.cluster.live import Connection
from kubectl_safety.cluster.scopes import cluster_scope
from kubectl_safety.cluster.source import load_snapshot
from tests import engine_oracles

pytestmark = pytest.mark.needs_build("engines")  # built after the control plane: runs last

STALL_HORIZON = 100  # controller seconds an oracle drains before it calls the drain stalled


def need(engine):
    reason = engine_oracles.available(engine)
    if reason:
        if in_ci():
            pytest.fail(f"CI: {reason}", pytrace=False)
        pytest.skip(reason)


def predict(cluster, engine, node, **settings):
    snap = load_snapshot(connection=Connection(kubeconfig=str(cluster.kubeconfig)), queries=cluster_scope())
    return simulate(profiles.load(engine, settings, snap), snap, [node]).nodes[0]


def refs(node, *actions) -> set:
    return {p.ref for p in node.pods if p.action in actions}


def groups(node, action="evict") -> list:
    """The predicted groups of evicted pods, lowest first (each a set of refs)."""
    out = {}
    for p in node.pods:
        if p.action == action:
            out.setdefault(p.group, set()).add(p.ref)
    ranks = {p.group: i for i, p in enumerate(node.pods)}
    return [out[g] for g in sorted(out, key=ranks.get)]


def web(ns, replicas=1, name="web", grace=0, **spec):
    obj = deployment(name, replicas, node_selector={"pool": ns}, **spec)
    obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = grace
    return obj


def daemonset(ns, name="agent", **meta):
    labels = {"app": name}
    spec = pod(name, labels, node_selector={"pool": ns})["spec"]
    spec.update(meta)
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": spec}}}


def with_template(obj, labels=None, annotations=None, volumes=None):
    meta = obj["spec"]["template"]["metadata"]
    meta.setdefault("labels", {}).update(labels or {})
    if annotations:
        meta["annotations"] = annotations
    if volumes:
        obj["spec"]["template"]["spec"]["volumes"] = volumes
    return obj


def setup(cluster, make_node, namespace, objects, count, budget=None):
    """Two pool nodes; ``objects`` placed on the first (the one drained); ``budget``: (name, healthy) of a PDB
    to wait for."""
    target, spare = pool_nodes(make_node, namespace, 2)
    place_on(cluster, namespace, [spare], objects, count)
    if budget:
        # A pod under two PDBs makes the disruption controller sync only one of them on the pod's changes
        # (getPdbForPod chooses one): once the pods are Ready, touch the awaited PDB so that it is synced too.
        wait_pods_running(cluster, namespace, count=count)
        cluster.kubectl("annotate", "pdb", budget[0], "-n", namespace, "kubectl-safety.test/resync=1", "--overwrite")
        wait_pdb_settled(cluster, namespace, budget[0], current_healthy=budget[1])
    return target


def on(cluster, namespace, node, prefix="") -> set:
    """The refs of the namespace's pods on ``node`` whose names start with ``prefix``."""
    items = get_json(cluster, "pods", "-n", namespace, "--field-selector", f"spec.nodeName={node}")["items"]
    return {f"{namespace}/{p['metadata']['name']}" for p in items if p["metadata"]["name"].startswith(prefix)}


# -- Cluster API ----------------------------------------------------------------------------------
def capi(cluster, tmp_path, node, settings):
    """The capi oracle's answer for ``node`` with the profile's settings (the same objects)."""
    machine = {"metadata": {"name": "m", "namespace": "default", "annotations": {}}, "spec": {"deletion": {}}}
    if settings.get("exclude-node-draining") == "true":
        machine["metadata"]["annotations"]["machine.cluster.x-k8s.io/exclude-node-draining"] = ""
    if "nodeDrainTimeoutSeconds" in settings:
        machine["spec"]["deletion"]["nodeDrainTimeoutSeconds"] = int(settings["nodeDrainTimeoutSeconds"])
    rules = [dict(r, apiVersion="cluster.x-k8s.io/v1beta2", kind="MachineDrainRule",
                  metadata=dict(r["metadata"], namespace="default"))
             for r in json.loads(settings.get("machineDrainRules", "[]"))]
    data = tmp_path / "capi.json"
    data.write_text(json.dumps({"machine": machine, "machineDrainRules": rules}))
    return engine_oracles.run("capi", "--kubeconfig", str(cluster.kubeconfig), "--node", node, "--input", str(data),
                              "--horizon", str(STALL_HORIZON))


CAPI_OUTCOME = {"completed": Outcome.COMPLETES, "stalled": Outcome.STALLS, "timeout": Outcome.FORCES,
                "excluded": Outcome.FORCES}


def capi_pdb_never_allows(ns):
    return [web(ns, 2), pdb("web", {"app": "web"}, min_available=2)], 2, ("web", 2), {}


def capi_pdb_never_allows_timeout(ns):
    return [web(ns, 2), pdb("web", {"app": "web"}, min_available=2)], 2, ("web", 2), {"nodeDrainTimeoutSeconds": "30"}


def capi_single_replica(ns):
    return [web(ns, 1)], 1, None, {}


def capi_local_storage(ns):
    return [with_template(web(ns, 1), volumes=[{"name": "scratch", "emptyDir": {}}])], 1, None, {}


def capi_drain_label_skip(ns):
    return [web(ns, 1), with_template(web(ns, 1, "keep"), labels={"cluster.x-k8s.io/drain": "skip"})], 2, None, {}


def capi_exclude_node_draining(ns):
    return [web(ns, 1)], 1, None, {"exclude-node-draining": "true"}


def capi_order_groups(ns):
    rules = [{"metadata": {"name": "db-last"}, "spec": {"drain": {"behavior": "Drain", "order": 10},
                                                         "pods": [{"selector": {"matchLabels": {"app": "db"}}}]}},
             {"metadata": {"name": "logs-skip"}, "spec": {"drain": {"behavior": "Skip"},
                                                          "pods": [{"selector": {"matchLabels": {"app": "logs"}}}]}},
             {"metadata": {"name": "queue-first"}, "spec": {"drain": {"behavior": "Drain", "order": -5},
                                                            "pods": [{"selector": {"matchLabels": {"app": "queue"}}}]}}]
    objects = [web(ns, 2), web(ns, 1, "db"), web(ns, 1, "logs"), web(ns, 1, "queue"), daemonset(ns)]
    return objects, 7, None, {"machineDrainRules": json.dumps(rules)}


def capi_wait_completed_holds_higher_orders(ns):
    rules = [{"metadata": {"name": "db-last"}, "spec": {"drain": {"behavior": "Drain", "order": 10},
                                                         "pods": [{"selector": {"matchLabels": {"app": "db"}}}]}}]
    job = with_template(web(ns, 1, "job"), labels={"cluster.x-k8s.io/drain": "wait-completed"})
    return [web(ns, 1), job, web(ns, 1, "db")], 3, None, {"machineDrainRules": json.dumps(rules)}


CAPI = [capi_pdb_never_allows, capi_pdb_never_allows_timeout, capi_single_replica, capi_local_storage,
        capi_drain_label_skip, capi_exclude_node_draining, capi_order_groups, capi_wait_completed_holds_higher_orders]


@pytest.mark.parametrize("scenario", CAPI, ids=[f.__name__ for f in CAPI])
def test_capi_prediction_matches_the_machine_drain(cluster, namespace, make_node, tmp_path, scenario):
    need("capi")
    objects, count, budget, settings = scenario(namespace)
    node = setup(cluster, make_node, namespace, objects, count, budget)
    predicted = predict(cluster, "capi", node, **settings)
    there = on(cluster, namespace, node)
    oracle = capi(cluster, tmp_path, node, settings)
    mine = lambda names: {n for n in names if n.startswith(namespace + "/")}
    assert predicted.outcome is CAPI_OUTCOME[oracle["outcome"]], (predicted.reason, json.dumps(oracle))
    if oracle["outcome"] == "timeout":
        assert predicted.at_seconds == oracle["atSeconds"]
    if oracle["outcome"] == "excluded":
        assert predicted.at_seconds == 0 and refs(predicted, "forced") == there
        return
    assert refs(predicted, "evict", "delete") == mine(oracle["evicted"])
    assert refs(predicted, "skip") == mine(oracle["skipped"]) == set(predicted.left_in_place)
    assert refs(predicted, "blocked", "wait", "forced") == mine(oracle["left"])
    passes = [mine(p["evicted"]) for p in oracle["passes"] if mine(p["evicted"])]
    assert groups(predicted) == passes


# -- Karpenter ------------------------------------------------------------------------------------
def karpenter(cluster, node, settings):
    args = ["--kubeconfig", str(cluster.kubeconfig), "--node", node, "--horizon", str(STALL_HORIZON)]
    if settings.get("terminationGracePeriod"):
        from kubectl_safety.model.duration import parse_duration

        args += ["--termination-grace-period", str(int(parse_duration(settings["terminationGracePeriod"])))]
    return engine_oracles.run("karpenter", *args)


def karp_pdb_never_allows(ns):
    return [web(ns, 2), pdb("web", {"app": "web"}, min_available=2)], 2, ("web", 2), {}


def karp_pdb_never_allows_grace_period(ns):
    objects = [web(ns, 2, grace=20), pdb("web", {"app": "web"}, min_available=2)]
    return objects, 2, ("web", 2), {"terminationGracePeriod": "30s"}


def karp_single_replica(ns):
    return [web(ns, 1)], 1, None, {}


def karp_local_storage(ns):
    return [with_template(web(ns, 1), volumes=[{"name": "scratch", "emptyDir": {}}])], 1, None, {}


def karp_do_not_disrupt(ns):
    return [web(ns, 1), with_template(web(ns, 1, "pinned"), annotations={"karpenter.sh/do-not-disrupt": "true"})], \
        2, None, {}


def karp_do_not_disrupt_grace_period(ns):
    pinned = with_template(web(ns, 1, "pinned", grace=5), annotations={"karpenter.sh/do-not-disrupt": "true"})
    return [pinned], 1, None, {"terminationGracePeriod": "15s"}


def karp_tolerates_disrupted(ns):
    tolerant = web(ns, 1, "tolerant", tolerations=[{"key": "karpenter.sh/disrupted", "operator": "Exists"}])
    return [web(ns, 1), tolerant], 2, None, {}


def karp_tiers(ns):
    objects = [web(ns, 2), web(ns, 1, "crit", priority_class="system-cluster-critical"), daemonset(ns),
               daemonset(ns, "critical-agent", priorityClassName="system-node-critical")]
    return objects, 7, None, {}


def karp_two_pdbs(ns):
    objects = [web(ns, 2), pdb("one", {"app": "web"}, max_unavailable=1), pdb("two", {"app": "web"}, max_unavailable=1)]
    return objects, 2, ("two", 2), {}


KARPENTER = [karp_pdb_never_allows, karp_pdb_never_allows_grace_period, karp_single_replica, karp_local_storage,
             karp_do_not_disrupt, karp_do_not_disrupt_grace_period, karp_tolerates_disrupted, karp_tiers, karp_two_pdbs]


@pytest.mark.parametrize("scenario", KARPENTER, ids=[f.__name__ for f in KARPENTER])
def test_karpenter_prediction_matches_its_termination_drain(cluster, namespace, make_node, scenario):
    need("karpenter")
    objects, count, budget, settings = scenario(namespace)
    node = setup(cluster, make_node, namespace, objects, count, budget)
    predicted = predict(cluster, "karpenter", node, **settings)
    there = on(cluster, namespace, node)
    oracle = karpenter(cluster, node, settings)
    mine = lambda names: {n for n in names if n.startswith(namespace + "/")}
    forced = {f["pod"]: f["atSeconds"] for f in oracle["forceDeleted"] if f["pod"].startswith(namespace + "/")}
    if forced:
        assert predicted.outcome is Outcome.FORCES
        # Karpenter deletes a pod once its clock is past deadline minus the pod's grace: the next reconcile,
        # one second after the time the prediction gives.
        assert {p.ref: p.at_seconds + 1 for p in predicted.pods if p.action == "forced"} == forced
    else:
        assert predicted.outcome is {"drained": Outcome.COMPLETES, "stalled": Outcome.STALLS}[oracle["outcome"]]
    evicted = {e["pod"] for e in oracle["evicted"]}
    assert refs(predicted, "evict", "delete") == mine(evicted)
    assert refs(predicted, "skip") == set(predicted.left_in_place) == (there - mine(evicted) - set(forced)
                                                                         if oracle["outcome"] == "drained"
                                                                         else refs(predicted, "skip"))
    if oracle["outcome"] == "stalled":
        assert refs(predicted, "blocked", "wait") == mine(oracle["left"]) - refs(predicted, "skip")
        blocked = {k: v for k, v in oracle["blocked"].items() if k.startswith(namespace + "/")}
        assert refs(predicted, "blocked") == set(blocked)
    tiers = [mine(g) & evicted for g in oracle["enqueued"] if mine(g) & evicted]
    assert groups(predicted) == tiers
