"""The scheduler's Score stage against upstream: the default profile's Score plugins run by the
framework runtime (normalized, weighted, summed) versus ``scheduling.score.score_nodes`` on the
nodes upstream's Filter stage leaves.

Nodes with zones (some without), PreferNoSchedule taints, cordons, images of several sizes and
several allocatable sizes; existing pods with and without requests, preferred and required pod
(anti-)affinity, some terminating; an incoming pod with preferred node affinity, preferred pod
(anti-)affinity, ScheduleAnyway and DoNotSchedule spreads, tolerations, with or without requests.
The whole table (every plugin's weighted score on every node) and the best nodes must agree.
"""

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.scheduling.score import score_nodes
from tests.differential.conftest import PROPERTY, count, tally
from tests.builders import snapshot
from tests.differential.test_scheduler_properties import (APPS, NAMESPACES, affinity_term, ask_about, rarely,
                                                          scheduler_view, spread)

ZONES = ["z1", "z2", "z3"]
IMAGES = {"web:1": 300 * 2 ** 20, "db:2": 900 * 2 ** 20, "tiny": 10 * 2 ** 20}


@st.composite
def node(draw, name):
    labels = {"kubernetes.io/hostname": name, "disk": draw(st.sampled_from(["ssd", "hdd"]))}
    if not rarely(draw, 5):
        labels["topology.kubernetes.io/zone"] = draw(st.sampled_from(ZONES))
    spec = {}
    taints = []
    for key in ("spot", "old"):
        if draw(st.integers(0, 2)) == 0:
            taints.append({"key": key, "value": "x", "effect": "PreferNoSchedule"})
    if taints:
        spec["taints"] = taints
    cpu = draw(st.sampled_from(["2", "4", "8"]))
    memory = draw(st.sampled_from(["4Gi", "8Gi", "16Gi"]))
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    images = [{"names": [f"registry.example/{n}" if draw(st.booleans()) else n], "sizeBytes": size}
              for n, size in IMAGES.items() if draw(st.booleans())]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels, "uid": f"uid-{name}"},
            "spec": spec, "status": {"capacity": dict(alloc), "allocatable": dict(alloc), "images": images,
                                     "conditions": [{"type": "Ready", "status": "True"}]}}


def requests(draw):
    kind = draw(st.sampled_from(["none", "cpu", "both", "memory"]))
    cpu = draw(st.sampled_from(["100m", "500m", "1"]))
    memory = draw(st.sampled_from(["256Mi", "1Gi", "3Gi"]))
    return {"none": {}, "cpu": {"cpu": cpu}, "memory": {"memory": memory}, "both": {"cpu": cpu, "memory": memory}}[kind]


def preferred(draw, kind_weight=True):
    return [{"weight": draw(st.sampled_from([1, 10, 50, 100])), "podAffinityTerm": draw(affinity_term())}
            for _ in range(draw(st.integers(1, 2)))]


def pod_affinities(draw, one_in):
    out = {}
    if draw(st.integers(1, one_in)) == 1:
        out["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": preferred(draw)}
    if draw(st.integers(1, one_in)) == 1:
        out["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": preferred(draw)}
    if draw(st.integers(1, one_in * 2)) == 1:
        out.setdefault("podAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = [draw(affinity_term())]
    return out


def make(name, namespace, labels, node_name=None, image="web:1", reqs=None, **spec):
    container = {"name": "c", "image": image}
    if reqs:
        container["resources"] = {"requests": reqs}
    spec.setdefault("containers", [container])
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                           "uid": f"uid-{namespace}-{name}", "labels": labels},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


@st.composite
def cluster(draw):
    nodes = [draw(node(f"n{i}")) for i in range(draw(st.integers(1, 5)))]
    names = [n["metadata"]["name"] for n in nodes]
    pods = []
    for i in range(draw(st.integers(0, 8))):
        spec = {}
        affinity = pod_affinities(draw, 6)
        if affinity:
            spec["affinity"] = affinity
        p = make(f"e{i}", draw(st.sampled_from(NAMESPACES)),
                 {"app": draw(st.sampled_from(APPS)), "tier": draw(st.sampled_from(["1", "2"]))},
                 draw(st.sampled_from(names)), image=draw(st.sampled_from(list(IMAGES))), reqs=requests(draw), **spec)
        if rarely(draw, 8):
            p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
            p["metadata"]["deletionGracePeriodSeconds"] = 30
        pods.append(p)
    spec = {}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "spot", "operator": "Exists",
                                "effect": draw(st.sampled_from(["PreferNoSchedule", "NoSchedule", ""]))}]
    affinity = pod_affinities(draw, 3)
    affinity.pop("podAffinity", None) if rarely(draw, 2) else None
    if draw(st.integers(0, 2)) == 0:
        affinity["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": draw(st.sampled_from([1, 20, 100])), "preference": {"matchExpressions": [
                {"key": draw(st.sampled_from(["disk", "topology.kubernetes.io/zone"])), "operator": "In",
                 "values": [draw(st.sampled_from(["ssd", "z1"]))]}]}} for _ in range(draw(st.integers(1, 2)))]}
    if affinity:
        spec["affinity"] = affinity
    if draw(st.booleans()):
        spec["topologySpreadConstraints"] = [draw(spread()) for _ in range(draw(st.integers(1, 2)))]
    images = draw(st.lists(st.sampled_from(list(IMAGES)), min_size=1, max_size=2, unique=True))
    spec["containers"] = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    reqs = requests(draw)
    if reqs:
        spec["containers"][0]["resources"] = {"requests": reqs}
    incoming = make("incoming", draw(st.sampled_from(NAMESPACES)), {"app": draw(st.sampled_from(APPS)), "tier": "1"},
                    **spec)
    namespaces = [{"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}}} for n in NAMESPACES]
    return nodes, pods, incoming, namespaces


@PROPERTY
@given(case=cluster())
def test_scheduler_scores(oracle, case):
    """Every plugin's weighted score on every feasible node, the totals and the best nodes."""
    count("test_scheduler_scores")
    expected, snap, pod = ask_about(oracle, "score", case)
    feasible = [snap.node(name) for name in expected["feasible"]]
    if not feasible:
        tally("test_scheduler_scores", "no feasible node")
        return
    ours = score_nodes(pod, feasible, snap)
    theirs = {name: {"total": row["total"], "plugins": {k: v for k, v in row["plugins"].items()}}
              for name, row in expected["scores"].items()}
    mine = {name: {"total": row["total"], "plugins": {k: v for k, v in row["plugins"].items()}}
            for name, row in ours.table.items()}
    for row in (*theirs.values(), *mine.values()):  # a plugin that scores 0 everywhere may be skipped
        row["plugins"] = {k: v for k, v in row["plugins"].items() if v}
    assert mine == theirs
    for plugin in sorted({k for row in theirs.values() for k in row["plugins"]}):
        tally("test_scheduler_scores", plugin)
    assert ours.best == expected["best"]
    if ours.tied:
        tally("test_scheduler_scores", "tied")


RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "uid-rs", "controller": True}
UNSCHEDULABLE = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


@st.composite
def drain_cluster(draw):
    """A cluster of 2-6 nodes whose first node, n0, is drained: its running pods (each the
    ReplicaSet's, some with ScheduleAnyway or DoNotSchedule spreads, preferred (anti-)affinity,
    a toleration of the cordon) leave and their replacements are placed one after another."""
    nodes, pods, _, namespaces = draw(cluster())
    nodes = [draw(node("n0"))] + [draw(node(f"n{i}")) for i in range(1, draw(st.integers(2, 6)))]
    names = [n["metadata"]["name"] for n in nodes]
    for p in pods:  # the generated pods' nodes were named for the first cluster
        p["spec"]["nodeName"] = draw(st.sampled_from(names[1:]))
    for i in range(draw(st.integers(1, 4))):
        spec = {}
        affinity = pod_affinities(draw, 3)
        if affinity:
            spec["affinity"] = affinity
        if draw(st.integers(0, 2)) == 0:
            spec["topologySpreadConstraints"] = [draw(spread())]
        if rarely(draw, 4):
            spec["tolerations"] = [dict(UNSCHEDULABLE)]
        p = make(f"d{i}", draw(st.sampled_from(NAMESPACES)), {"app": draw(st.sampled_from(APPS)), "tier": "1"},
                 "n0", image=draw(st.sampled_from(list(IMAGES))), reqs=requests(draw), **spec)
        p["metadata"]["ownerReferences"] = [dict(RS)]
        pods.append(p)
    return nodes, pods, namespaces


def _cordoned(raw):
    spec = {**raw["spec"], "unschedulable": True}
    spec["taints"] = [*spec.get("taints", []), {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    return {**raw, "spec": spec}


@PROPERTY
@given(case=drain_cluster())
def test_drain_placement_scores(oracle, case):
    """Drain's replacement placement, replayed on upstream's Score stage: each replacement, in the
    plan's order, goes to a node the scheduler ranks first given the replacements placed before it,
    the plan names the other nodes tied with it, and a replacement it leaves unplaceable fits
    nowhere once every other replacement is placed."""
    from kubectl_safety.analysis.capacity import Capacity
    from kubectl_safety.analysis.drain import needs_replacement

    count("test_drain_placement_scores")
    nodes, pods, namespaces = case
    pods = [{**oracle.ask("defaultPod", pod=p), "status": p["status"]} for p in pods]
    snap = snapshot(*nodes, *pods, *namespaces)
    leaving = [p for p in snap.pods_on("n0")]
    capacity = Capacity(snap, {"n0"}, {p.key for p in leaving})
    order = sorted((p for p in leaving if needs_replacement(p)), key=lambda p: (-p.priority_value, p.key))
    result = capacity.place_all(order)
    state_nodes = [_cordoned(n) if n["metadata"]["name"] == "n0" else n for n in nodes]
    state = [p for p in scheduler_view(pods) if p["spec"]["nodeName"] != "n0"]
    for placed in capacity.added:
        raw = placed.raw
        incoming = {**raw, "spec": {k: v for k, v in raw["spec"].items() if k != "nodeName"},
                    "status": {"phase": "Pending"}}
        expected = oracle.ask("score", pod=incoming, nodes=state_nodes, pods=state, namespaces=namespaces)
        key = (placed.namespace, placed.name.removesuffix("-replacement"))
        chosen = placed.node_name
        assert chosen in expected["best"], (key, chosen, expected.get("scores"))
        tied = [n for n in expected["best"] if n != chosen]
        assert capacity.tied[key] == tied, (key, expected["scores"])
        tally("test_drain_placement_scores", "tied" if tied else "one best")
        if chosen == "n0":
            tally("test_drain_placement_scores", "back on the drained node")
        state.append(raw)
    for key, (where, _) in result.items():
        if where is None:
            pod = snap.pod(*key)
            incoming = {**pod.raw, "metadata": {**pod.raw["metadata"], "name": pod.name + "-replacement"},
                        "spec": {k: v for k, v in pod.raw["spec"].items() if k != "nodeName"},
                        "status": {"phase": "Pending"}}
            expected = oracle.ask("score", pod=incoming, nodes=state_nodes, pods=state, namespaces=namespaces)
            assert expected["feasible"] == [], (key, expected)
            tally("test_drain_placement_scores", "unplaceable")
