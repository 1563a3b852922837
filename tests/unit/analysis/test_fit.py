"""analysis/fit.py: each default-profile Filter plugin, scenario by scenario."""

from functools import partial

import pytest

from kubectl_safety.analysis.fit import NodeState, filter_node
from kubectl_safety.model.pods import Pod
from tests import builders
from tests.builders import container, make_node, make_pod, snapshot, spread


def incoming(**kw):
    kw.setdefault("node", None)
    kw.setdefault("owner", None)
    return Pod(make_pod(kw.pop("name", "new"), **kw))


def codes(pod, objects, node="n1", state_fn=None):
    snap = snapshot(*objects)
    n = snap.node(node)
    state = None
    if state_fn:
        state = NodeState.from_snapshot(n, snap)
        state_fn(state, snap)
    return [(f.code, f.resolvable) for f in filter_node(pod, n, snap, state)]


ZONE = "topology.kubernetes.io/zone"
TAINT = {"key": "dedicated", "value": "db", "effect": "NoSchedule"}
TOLERATE = [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]

SIMPLE = [
    ("fits-empty-node", incoming(cpu="1"), [make_node("n1")], []),
    ("cordoned", incoming(), [make_node("n1", unschedulable=True)], [("node-unschedulable", False)]),
    ("cordoned-tolerated", incoming(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                                  "effect": "NoSchedule"}]),
     [make_node("n1", unschedulable=True)], []),
    ("node-name-other", incoming(nodeName="n2"), [make_node("n1")], [("node-name", False)]),
    ("taint-untolerated", incoming(), [make_node("n1", taints=[TAINT])], [("untolerated-taint", False)]),
    ("taint-tolerated", incoming(tolerations=TOLERATE), [make_node("n1", taints=[TAINT])], []),
    ("taint-prefer-ignored", incoming(), [make_node("n1", taints=[{"key": "x", "effect": "PreferNoSchedule"}])], []),
    ("taint-noexecute", incoming(), [make_node("n1", taints=[{"key": "x", "effect": "NoExecute"}])],
     [("untolerated-taint", False)]),
    ("node-selector-miss", incoming(nodeSelector={"disk": "ssd"}), [make_node("n1")], [("node-affinity", False)]),
    ("node-selector-hit", incoming(nodeSelector={"disk": "ssd"}), [make_node("n1", labels={"disk": "ssd"})], []),
    ("required-affinity-miss", incoming(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["b"]}]}]}}}),
     [make_node("n1", zone="a")], [("node-affinity", False)]),
]


@pytest.mark.parametrize("pod,objects,expected", [s[1:] for s in SIMPLE], ids=[s[0] for s in SIMPLE])
def test_simple_plugins(pod, objects, expected):
    assert codes(pod, objects) == expected


def hostport(port, ip=None, proto=None, sidecar=False):
    p = {"containerPort": port, "hostPort": port}
    if ip:
        p["hostIP"] = ip
    if proto:
        p["protocol"] = proto
    c = container(ports=[p])
    if sidecar:
        c["restartPolicy"] = "Always"
        return {"initContainers": [c], "containers": [container()]}
    return {"containers": [c]}


PORTS = [
    ("same-port", hostport(80), hostport(80), [("host-port", True)]),
    ("other-port", hostport(80), hostport(81), []),
    ("udp-vs-tcp", hostport(53, proto="UDP"), hostport(53), []),
    ("specific-ip-vs-any", hostport(80, ip="10.0.0.1"), hostport(80), [("host-port", True)]),
    ("two-specific-ips", hostport(80, ip="10.0.0.1"), hostport(80, ip="10.0.0.2"), []),
    ("sidecar-port-counts", hostport(80, sidecar=True), hostport(80), [("host-port", True)]),
]


@pytest.mark.parametrize("existing,wanted,expected", [s[1:] for s in PORTS], ids=[s[0] for s in PORTS])
def test_node_ports(existing, wanted, expected):
    objects = [make_node("n1"), make_pod("old", **existing)]
    pod = incoming(containers=wanted.get("containers"), initContainers=wanted.get("initContainers", []))
    assert codes(pod, objects) == expected


RESOURCES = [
    ("fits-exactly", incoming(cpu="1"), [make_pod("a", cpu="3")], []),
    ("insufficient-cpu", incoming(cpu="2"), [make_pod("a", cpu="3")], [("insufficient-cpu", True)]),
    ("insufficient-memory", incoming(memory="9Gi"), [make_pod("a", memory="8Gi")], [("insufficient-memory", True)]),
    ("larger-than-node", incoming(cpu="5"), [], [("insufficient-cpu", False)]),
    ("larger-than-node-makes-all-unresolvable", incoming(cpu="5", memory="9Gi"), [make_pod("a", memory="8Gi")],
     [("insufficient-cpu", False), ("insufficient-memory", False)]),
    ("terminal-pods-consume-nothing", incoming(cpu="2"), [make_pod("a", cpu="3", phase="Succeeded")], []),
    ("terminating-pods-still-count", incoming(cpu="2"),
     [make_pod("a", cpu="3", meta={"deletionTimestamp": "2026-11-22T08:59:00Z"})], [("insufficient-cpu", True)]),
    ("limits-default-requests", incoming(limits={"cpu": "2"}), [make_pod("a", cpu="3")], [("insufficient-cpu", True)]),
    ("extended-resource-missing", incoming(containers=[container(requests={"nvidia.com/gpu": "1"})]), [],
     [("insufficient-nvidia.com/gpu", False)]),
    ("zero-request-on-full-node", incoming(), [make_pod("a", cpu="4")], []),
    ("init-container-peak", incoming(containers=[container(requests={"cpu": "1"})],
                                     initContainers=[container("i", requests={"cpu": "2"})]),
     [make_pod("a", cpu="3")], [("insufficient-cpu", True)]),
    ("sidecar-adds", incoming(containers=[container(requests={"cpu": "1"})],
                              initContainers=[container("s", requests={"cpu": "1"}, restartPolicy="Always")]),
     [make_pod("a", cpu="2500m")], [("insufficient-cpu", True)]),
    ("overhead-adds", incoming(cpu="1", overhead={"cpu": "500m"}), [make_pod("a", cpu="3")], [("insufficient-cpu", True)]),
]


@pytest.mark.parametrize("pod,existing,expected", [s[1:] for s in RESOURCES], ids=[s[0] for s in RESOURCES])
def test_node_resources_fit(pod, existing, expected):
    assert codes(pod, [make_node("n1"), *existing]) == expected


def test_too_many_pods_is_resolvable():
    objects = [make_node("n1", pods="2"), make_pod("a"), make_pod("b")]
    assert codes(incoming(), objects) == [("too-many-pods", True)]


def test_state_remove_and_add():
    objects = [make_node("n1"), make_pod("a", cpu="3"), make_pod("b", cpu="1")]
    pod = incoming(cpu="2")
    assert codes(pod, objects) == [("insufficient-cpu", True)]
    assert codes(pod, objects, state_fn=lambda st, snap: st.remove(snap.pod("default", "a"))) == []
    extra = Pod(make_pod("x", cpu="1", node="n1"))
    assert codes(incoming(cpu="1"), objects[:2], state_fn=lambda st, snap: st.add(extra)) == [("insufficient-cpu", True)]


def test_from_snapshot_is_a_private_copy():
    snap = snapshot(make_node("n1"), make_pod("a", cpu="3"))
    n = snap.node("n1")
    st = NodeState.from_snapshot(n, snap)
    st.remove(snap.pod("default", "a"))
    assert st.requested["cpu"] == 0 and NodeState.from_snapshot(n, snap).requested["cpu"] == 3000


def affinity(kind, labels, key="kubernetes.io/hostname", **term):
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **term}]}}


TWO_ZONES = [make_node("n1", zone="a"), make_node("n2", zone="a"), make_node("n3", zone="b")]

INTER_POD = [
    ("affinity-satisfied-same-node", incoming(affinity=affinity("podAffinity", {"app": "db"})),
     [make_pod("db", node="n1")], "n1", []),
    ("affinity-missing-on-node", incoming(affinity=affinity("podAffinity", {"app": "db"})),
     [make_pod("db", node="n2")], "n1", [("pod-affinity", False)]),
    ("affinity-zone-other-node", incoming(affinity=affinity("podAffinity", {"app": "db"}, key=ZONE)),
     [make_pod("db", node="n2")], "n1", []),
    ("affinity-first-pod-of-group", incoming(labels={"app": "db"}, affinity=affinity("podAffinity", {"app": "db"})),
     [], "n1", []),
    ("affinity-other-namespace-ignored", incoming(affinity=affinity("podAffinity", {"app": "db"})),
     [make_pod("db", namespace="other", node="n1")], "n1", [("pod-affinity", False)]),
    ("affinity-listed-namespace", incoming(affinity=affinity("podAffinity", {"app": "db"}, namespaces=["other"])),
     [make_pod("db", namespace="other", node="n1")], "n1", []),
    ("affinity-all-namespaces", incoming(affinity=affinity("podAffinity", {"app": "db"}, namespaceSelector={})),
     [make_pod("db", namespace="other", node="n1")], "n1", []),
    ("anti-affinity-same-zone", incoming(affinity=affinity("podAntiAffinity", {"app": "web"}, key=ZONE)),
     [make_pod("web", node="n2")], "n1", [("pod-anti-affinity", True)]),
    ("anti-affinity-other-zone", incoming(affinity=affinity("podAntiAffinity", {"app": "web"}, key=ZONE)),
     [make_pod("web", node="n3")], "n1", []),
    ("existing-anti-affinity", incoming(labels={"app": "web"}),
     [make_pod("db", node="n2", affinity=affinity("podAntiAffinity", {"app": "web"}, key=ZONE))], "n1",
     [("existing-anti-affinity", True)]),
    ("existing-anti-affinity-other-ns", incoming(namespace="x", labels={"app": "web"}),
     [make_pod("db", node="n2", affinity=affinity("podAntiAffinity", {"app": "web"}, key=ZONE))], "n1", []),
    ("terminal-pod-invisible", incoming(affinity=affinity("podAntiAffinity", {"app": "web"})),
     [make_pod("web", node="n1", phase="Failed")], "n1", []),
]


@pytest.mark.parametrize("pod,existing,node,expected", [s[1:] for s in INTER_POD], ids=[s[0] for s in INTER_POD])
def test_inter_pod_affinity(pod, existing, node, expected):
    assert codes(pod, [*TWO_ZONES, *existing], node) == expected


def test_removing_victims_updates_affinity_counts():
    pod = incoming(affinity=affinity("podAffinity", {"app": "db"}))
    objects = [*TWO_ZONES, make_pod("db", node="n1"), make_pod("db2", node="n2", labels={"app": "db"})]
    assert codes(pod, objects, "n1") == []
    assert codes(pod, objects, "n1", lambda st, snap: st.remove(snap.pod("default", "db"))) == [("pod-affinity", False)]
    anti = incoming(affinity=affinity("podAntiAffinity", {"app": "db"}))
    assert codes(anti, objects, "n1") == [("pod-anti-affinity", True)]
    assert codes(anti, objects, "n1", lambda st, snap: st.remove(snap.pod("default", "db"))) == []


def test_removing_pod_with_anti_affinity_lifts_it():
    pod = incoming(labels={"app": "web"})
    objects = [*TWO_ZONES, make_pod("db", node="n1", affinity=affinity("podAntiAffinity", {"app": "web"}))]
    assert codes(pod, objects, "n1") == [("existing-anti-affinity", True)]
    assert codes(pod, objects, "n1", lambda st, snap: st.remove(snap.pod("default", "db"))) == []


web = partial(builders.web, cpu=None)


SPREAD = [
    ("balanced-allows", [spread()], [web("w1", "n1"), web("w2", "n3")], "n1", []),
    ("skew-too-big", [spread()], [web("w1", "n1")], "n1", [("topology-spread", True)]),
    ("skew-ok-in-empty-zone", [spread()], [web("w1", "n1")], "n3", []),
    ("max-skew-2", [spread(max_skew=2)], [web("w1", "n1")], "n1", []),
    ("missing-label-unresolvable", [spread(key="rack")], [], "n1", [("topology-label-missing", False)]),
    ("min-domains-forces-zero", [spread(minDomains=3)], [web("w1", "n1"), web("w2", "n3")], "n1",
     [("topology-spread", True)]),
    ("schedule-anyway-ignored", [spread(when="ScheduleAnyway")], [web("w1", "n1")], "n1", []),
    ("terminating-not-counted", [spread()],
     [make_pod("w1", node="n1", labels={"app": "web"}, meta={"deletionTimestamp": "2026-11-22T08:00:00Z"})], "n1", []),
    ("selector-not-matching-self", [spread(labels={"app": "other"})], [web("w1", "n1")], "n1", []),
]


@pytest.mark.parametrize("constraints,existing,node,expected", [s[1:] for s in SPREAD], ids=[s[0] for s in SPREAD])
def test_topology_spread(constraints, existing, node, expected):
    pod = incoming(labels={"app": "web"}, topologySpreadConstraints=constraints)
    assert codes(pod, [*TWO_ZONES, *existing], node) == expected


def test_spread_counts_follow_state():
    pod = incoming(labels={"app": "web"}, topologySpreadConstraints=[spread()])
    objects = [*TWO_ZONES, web("w1", "n1"), web("w2", "n1")]
    assert codes(pod, objects, "n1") == [("topology-spread", True)]
    assert codes(pod, objects, "n1", lambda st, snap: (st.remove(snap.pod("default", "w1")),
                                                       st.remove(snap.pod("default", "w2")))) == []
    # adding to the minimum domain raises the minimum
    objects = [*TWO_ZONES, web("w1", "n1")]
    assert codes(pod, objects, "n1") == [("topology-spread", True)]
    assert codes(pod, objects, "n3", lambda st, snap: st.add(Pod(web("w9", "n3")))) == []  # 1 + 1 - 1
    two = lambda st, snap: (st.add(Pod(web("w8", "n3"))), st.add(Pod(web("w9", "n3"))))
    assert codes(pod, objects, "n3", two) == [("topology-spread", True)]  # 2 + 1 - 1


IMPLIED = [
    ("ready-unknown-implies-unreachable", make_node("n1", ready="Unknown"), None, [("untolerated-taint", False)]),
    ("ready-false-implies-not-ready", make_node("n1", ready="False"), None, [("untolerated-taint", False)]),
    ("tolerated-unreachable", make_node("n1", ready="Unknown"),
     [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}], []),
    ("ready-node", make_node("n1"), None, []),
]


@pytest.mark.parametrize("node,tolerations,expected", [s[1:] for s in IMPLIED], ids=[s[0] for s in IMPLIED])
def test_condition_taints_implied(node, tolerations, expected):
    pod = incoming(tolerations=tolerations) if tolerations else incoming()
    assert codes(pod, [node]) == expected
