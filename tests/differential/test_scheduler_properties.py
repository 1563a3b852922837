"""The scheduler's Filter stage against upstream: the default profile's node-judging PreFilter and
Filter plugins run by the framework runtime over a cache snapshot, versus ``fit.filter_node``.

Nodes with zones, missing topology labels, taints and cordons; existing pods with labels in two
namespaces, some terminating or terminal, some with required pod (anti-)affinity; an incoming pod
in either namespace with node affinity, one or two required pod (anti-)affinity terms (nil and
empty labelSelectors, namespaces and namespaceSelectors of every operator, matchLabelKeys,
mismatchLabelKeys), topology spread constraints with every policy field, tolerations, host ports
and resources. Pods reach the oracle as the API server stores them and the scheduler's cache holds them.
"""

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.fit import NodeState, filter_node
from kubectl_safety.model.pods import Pod
from tests.builders import snapshot
from tests.differential.conftest import PROPERTY, count

ZONES = ["z1", "z2"]
APPS = ["a", "b"]
NAMESPACES = ["ns", "other"]


def rarely(draw, one_in):
    """True once in ``one_in`` draws, and never in hypothesis's simplest example (a plain case)."""
    return draw(st.integers(1, one_in)) == one_in


@st.composite
def node(draw, name):
    labels = {"kubernetes.io/hostname": name, "disk": draw(st.sampled_from(["ssd", "hdd"]))}
    if not rarely(draw, 5):
        labels["topology.kubernetes.io/zone"] = draw(st.sampled_from(ZONES))
    spec = {}
    if rarely(draw, 5):
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": draw(st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]))}]
    if rarely(draw, 6):
        spec["unschedulable"] = True
    alloc = {"cpu": draw(st.sampled_from(["1", "2", "4"])), "memory": "8Gi", "pods": draw(st.sampled_from(["110", "3"]))}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels, "uid": f"uid-{name}"},
            "spec": spec, "status": {"capacity": dict(alloc), "allocatable": dict(alloc),
                                     "conditions": [{"type": "Ready", "status": "True"}]}}


def selector(draw):
    kind = draw(st.sampled_from(["labels", "labels", "empty", "in", "exists"]))
    app = draw(st.sampled_from(APPS))
    return {"labels": {"matchLabels": {"app": app}}, "empty": {},
            "in": {"matchExpressions": [{"key": "app", "operator": "In", "values": [app]}]},
            "exists": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}[kind]


NAME_LABEL = "kubernetes.io/metadata.name"
# namespaceSelectors on kubernetes.io/metadata.name only: the snapshot keeps no other namespace
# label (docs/deviations.md, "Namespace labels")
NAMESPACE_SELECTORS = [{}, {"matchLabels": {NAME_LABEL: "other"}},
                       {"matchExpressions": [{"key": NAME_LABEL, "operator": "In", "values": ["ns", "other"]}]},
                       {"matchExpressions": [{"key": NAME_LABEL, "operator": "NotIn", "values": ["other"]}]},
                       {"matchExpressions": [{"key": NAME_LABEL, "operator": "Exists"}]},
                       {"matchExpressions": [{"key": NAME_LABEL, "operator": "DoesNotExist"}]}]


@st.composite
def affinity_term(draw):
    term = {"topologyKey": draw(st.sampled_from(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]))}
    if draw(st.integers(0, 7)):
        term["labelSelector"] = selector(draw)
    ns = draw(st.sampled_from(["none", "none", "selector", "list", "both"]))
    if ns in ("selector", "both"):
        term["namespaceSelector"] = draw(st.sampled_from(NAMESPACE_SELECTORS))
    if ns in ("list", "both"):
        term["namespaces"] = draw(st.sampled_from([["other"], ["ns"], ["ns", "other"]]))
    if "labelSelector" in term:  # label keys need a labelSelector (validation)
        keys = draw(st.sampled_from(["none", "none", "none", "match", "mismatch"]))
        if keys == "match":
            term["matchLabelKeys"] = ["tier"]
        elif keys == "mismatch":
            term["mismatchLabelKeys"] = ["tier"]
    return term


def required(draw):
    return {"requiredDuringSchedulingIgnoredDuringExecution": [draw(affinity_term())
                                                               for _ in range(draw(st.sampled_from([1, 1, 1, 2])))]}


@st.composite
def init_ports(draw):
    """Sometimes an init container (a sidecar or not) with a host port."""
    if draw(st.integers(0, 5)):
        return {}
    c = {"name": "i", "image": "x", "ports": [{"containerPort": 81, "hostPort": 8080,
                                              "protocol": draw(st.sampled_from(["TCP", "UDP"]))}]}
    if draw(st.booleans()):
        c["restartPolicy"] = "Always"
    return {"initContainers": [c]}


def pod_affinity(draw, anti, affine):
    """Required pod anti-affinity (1 in ``anti``) and affinity (1 in ``affine``)."""
    out = {}
    if draw(st.integers(1, anti)) == 1:
        out["podAntiAffinity"] = required(draw)
    if draw(st.integers(1, affine)) == 1:
        out["podAffinity"] = required(draw)
    return out


@st.composite
def spread(draw):
    c = {"maxSkew": draw(st.sampled_from([1, 1, 2])),
         "topologyKey": draw(st.sampled_from(["kubernetes.io/hostname", "topology.kubernetes.io/zone"])),
         "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"]))}
    if draw(st.integers(0, 7)):
        c["labelSelector"] = selector(draw)
    if draw(st.booleans()):
        c["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
    if draw(st.booleans()):
        c["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
    if draw(st.integers(0, 3)) == 0:
        c["minDomains"] = draw(st.sampled_from([1, 3]))
    if "labelSelector" in c and draw(st.integers(0, 4)) == 0:
        c["matchLabelKeys"] = ["tier"]
    return c


def make(name, namespace, labels, node_name=None, **spec):
    spec.setdefault("containers", [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "500m"}}}])
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                                                           "labels": labels},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


@st.composite
def cluster(draw):
    nodes = [draw(node(f"n{i}")) for i in range(draw(st.integers(1, 4)))]
    pods = []
    for i in range(draw(st.integers(0, 6))):
        ns = draw(st.sampled_from(NAMESPACES))
        spec = {}
        affinity = pod_affinity(draw, anti=5, affine=9)
        if affinity:
            spec["affinity"] = affinity
        if draw(st.integers(0, 5)) == 0:
            spec["containers"] = [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
        spec.update(draw(init_ports()))
        state = draw(st.sampled_from(["running"] * 6 + ["terminating", "succeeded", "failed", "pending"]))
        p = make(f"e{i}", ns, {"app": draw(st.sampled_from(APPS)), "tier": draw(st.sampled_from(["1", "2"]))},
                 None if state == "pending" else draw(st.sampled_from([n["metadata"]["name"] for n in nodes])), **spec)
        if state == "terminating":
            p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
            p["metadata"]["deletionGracePeriodSeconds"] = 30
        elif state in ("succeeded", "failed"):
            p["status"]["phase"] = state.capitalize()
        pods.append(p)
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": draw(st.sampled_from(["100m", "1", "3"]))}}}]}
    if draw(st.integers(0, 3)) == 0:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    spec.update(draw(init_ports()))
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": draw(st.sampled_from(["NoSchedule", "NoExecute"]))}]
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {"disk": "ssd"}
    affinity = {}
    if draw(st.integers(0, 4)) == 0:
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]}]}}
    affinity.update(pod_affinity(draw, anti=3, affine=3))
    if affinity:
        spec["affinity"] = affinity
    if draw(st.booleans()):
        spec["topologySpreadConstraints"] = [draw(spread()) for _ in range(draw(st.integers(1, 2)))]
    incoming = make("incoming", draw(st.sampled_from(NAMESPACES)), {"app": draw(st.sampled_from(APPS)), "tier": "1"}, **spec)
    namespaces = [{"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}}} for n in NAMESPACES]
    return nodes, pods, incoming, namespaces


def scheduler_view(pods):
    """The pods the scheduler's cache holds: its pod informer lists with the field selector
    ``status.phase!=Succeeded,status.phase!=Failed`` (``newPodInformer``), so terminal pods never
    reach it, and only assigned pods (spec.nodeName) are added to it; the snapshot holds the others
    too and the filters must ignore them."""
    return [p for p in pods if p["status"].get("phase") not in ("Succeeded", "Failed") and p["spec"].get("nodeName")]


def created(oracle, case):
    """Pods as the API server stores them (matchLabelKeys merged into the selectors), status kept."""
    nodes, pods, incoming, namespaces = case

    def stored(raw):
        return {**oracle.ask("defaultPod", pod=raw), "status": raw["status"]}

    return nodes, [stored(p) for p in pods], stored(incoming), namespaces


def ask_about(oracle, question, case):
    """The oracle's answer to ``question`` on the case as stored, our snapshot of it and the incoming Pod."""
    nodes, pods, incoming, namespaces = created(oracle, case)
    expected = oracle.ask(question, pod=incoming, nodes=nodes, pods=scheduler_view(pods), namespaces=namespaces)
    return expected, snapshot(*nodes, *pods, *namespaces), Pod(incoming)


def assert_agrees(expected, node, failures):
    theirs = expected[node.name]
    ours = {"fits": not failures, "plugin": failures[0].plugin if failures else None}
    assert ours == {"fits": theirs["fits"], "plugin": theirs.get("plugin")}, \
        (node.name, theirs, [(f.plugin, f.message) for f in failures])


@PROPERTY
@given(case=cluster())
def test_scheduler_filters(oracle, case):
    """Fits or not on every node, and the first failing plugin, as the scheduler's Filter stage."""
    count("test_scheduler_filters")
    expected, snap, pod = ask_about(oracle, "filter", case)
    for n in snap.nodes:
        assert_agrees(expected, n, filter_node(pod, n, snap))


@PROPERTY
@given(case=cluster(), data=st.data())
def test_scheduler_filters_without_some_pods(oracle, case, data):
    """Preemption's question "would it fit if these pods were gone": a node's modified state
    (the PreFilter counts corrected like upstream's RemovePod) against the Filter stage after
    upstream's own removal of those pods (NodeInfo.RemovePod and the PreFilter extensions'
    RemovePod, as SelectVictimsOnNode does; a host port two pods share is freed by either)."""
    count("test_scheduler_filters_without_some_pods")
    nodes, pods, incoming, namespaces = created(oracle, case)
    snap = snapshot(*nodes, *pods, *namespaces)
    node = snap.node(data.draw(st.sampled_from([n["metadata"]["name"] for n in nodes])))
    state = NodeState.from_snapshot(node, snap)
    gone = {p.key for p in state.pods.values() if data.draw(st.booleans())}
    for key in gone:
        state.remove(snap.pod(*key))
    expected = oracle.ask("filter", pod=incoming, nodes=nodes, pods=scheduler_view(pods), namespaces=namespaces,
                          remove=[f"{ns}/{name}" for ns, name in sorted(gone)])
    assert_agrees(expected, node, filter_node(Pod(incoming), node, snap, state))
