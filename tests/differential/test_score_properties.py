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
from tests.differential.test_scheduler_properties import APPS, NAMESPACES, affinity_term, ask_about, rarely, spread

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
