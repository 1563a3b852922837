"""Pod-level answers against upstream: QoS, requests, oom_score_adj, memory-pressure rank,
priority admission and the DELETE grace period."""

import copy
from datetime import datetime, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kubectl_safety.analysis import node_pressure, priority, qos, resources, termination
from kubectl_safety.model.pods import Pod
from tests.builders import snapshot
from tests.differential import strategies as gen
from tests.differential.conftest import PROPERTY, count


def nonzero(amounts: dict) -> dict:
    return {k: v for k, v in amounts.items() if v}


@PROPERTY
@given(raw=gen.pod(states=False))
def test_qos_class(oracle, raw):
    count("test_qos_class")
    created = oracle.ask("defaultPod", pod=raw)
    expected = oracle.ask("qos", pod=created)
    assert qos.compute_qos(Pod(created)) == expected["compute"], created["spec"]
    assert qos.qos_class(Pod(created)) == expected["get"], created["spec"]


@PROPERTY
@given(raw=gen.pod(states=False))
@example(raw={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
              "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"memory": "0"}}}],
                       "resources": {"limits": {"cpu": "4", "memory": "16Gi"}}}})
def test_qos_class_of_manifest(oracle, raw):
    count("test_qos_class_of_manifest")
    created = oracle.ask("defaultPod", pod=raw)
    expected = oracle.ask("qos", pod=created)
    assert qos.compute_qos(Pod(raw)) == expected["compute"], raw["spec"]


@PROPERTY
@given(raw=gen.pod(states=False))
def test_pod_requests(oracle, raw):
    count("test_pod_requests")
    created = oracle.ask("defaultPod", pod=raw)
    expected = oracle.ask("podRequests", pod=created)
    assert nonzero(resources.pod_requests(Pod(created))) == nonzero(expected["requests"]), created["spec"]


SUB_MILLI = [
    # (name, one container's requests, three of them request)
    ("sub-millicore cpu is rounded per container on create", {"cpu": "0.0001"}, {"cpu": 3}),
    ("sub-unit memory is summed at milli precision, then rounded once", {"memory": "0.5"}, {"memory": 2}),
]


@pytest.mark.parametrize("requests,expected", [c[1:] for c in SUB_MILLI], ids=[c[0] for c in SUB_MILLI])
def test_sub_milli_quantities_are_rounded_on_create_then_summed(oracle, requests, expected):
    """The API server rounds every quantity up to milli precision on create
    (SetDefaults_ResourceList); PodRequests then adds them exactly and the scheduler rounds the
    total once. (Upstream's PodRequests of a manifest never created would sum before the
    rounding: 3 x "0.0001" cpu is 1m there, but 3m once stored, and 3m is what nodes are charged.)"""
    count("test_sub_milli_quantities_are_rounded_on_create_then_summed")
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"containers": [{"name": f"c{i}", "image": "x", "resources": {"requests": requests}}
                                   for i in range(3)]}}
    created = oracle.ask("defaultPod", pod=raw)
    upstream = oracle.ask("podRequests", pod=created)["requests"]
    ours = resources.pod_requests(Pod(raw))
    assert {r: ours[r] for r in expected} == {r: upstream[r] for r in expected} == expected


@PROPERTY
@given(raw=gen.pod(states=False), data=st.data())
def test_pod_requests_of_resized_pods(oracle, raw, data):
    """What the scheduler charges for a pod mid-resize (UseStatusResources, pod-level resizing)."""
    count("test_pod_requests_of_resized_pods")
    created = oracle.ask("defaultPod", pod=raw)
    created["status"] = raw["status"]  # PrepareForCreate resets the status
    created = data.draw(gen.resized(created))
    expected = oracle.ask("podRequests", pod=created, useStatusResources=True, inPlacePodLevel=True)
    assert nonzero(resources.pod_requests(Pod(created))) == nonzero(expected["requests"]), created


@PROPERTY
@given(raw=gen.pod(states=False), capacity=st.sampled_from([1000, 2**30, 16 * 2**30, 64 * 2**30]),
       critical=st.sampled_from([None, "system-node-critical", "system-cluster-critical"]))
@example(raw={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
              "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"memory": "1Gi"}}}],
                       "initContainers": [{"name": "i", "image": "x", "restartPolicy": "Always",
                                           "resources": {"requests": {"memory": "1Gi"}}}],
                       "resources": {"requests": {"memory": "8Gi"}}}},
         capacity=16 * 2**30, critical=None)
def test_oom_score_adj(oracle, raw, capacity, critical):
    count("test_oom_score_adj")
    if critical:
        raw["spec"]["priorityClassName"] = critical
        raw["spec"]["priority"] = 2_000_001_000 if critical == "system-node-critical" else 2_000_000_000
    created = oracle.ask("defaultPod", pod=raw)
    expected = oracle.ask("oomScoreAdj", pod=created, memoryCapacity=capacity)
    pod = Pod(created)
    ours = {c.name: node_pressure.container_oom_score_adj(pod, c, capacity)
            for c in list(pod.init_containers) + list(pod.containers)}
    assert ours == expected


@st.composite
def ranked_pods(draw):
    pods, usage = [], {}
    for i in range(draw(st.integers(2, 8))):
        raw = draw(gen.pod(name=f"p{i}", states=False))
        raw["spec"]["priority"] = draw(st.sampled_from([0, 0, 10, 1000, -5]))
        pods.append(raw)
        stats = draw(st.sampled_from(["none", "zero", "small", "big"]))
        if stats != "none":
            usage[("ns", f"p{i}")] = {"zero": 0, "small": 50 * 2**20, "big": 3 * 2**30}[stats]
    return pods, usage


@PROPERTY
@given(case=ranked_pods())
def test_memory_pressure_rank(oracle, case):
    """Our order, fed to the kubelet's sort (insertion sort below 12 pods keeps a valid order)."""
    count("test_memory_pressure_rank")
    raws, usage = case
    created = [oracle.ask("defaultPod", pod=r) for r in raws]
    snap = snapshot(*created)
    ours = [r["pod"] for r in node_pressure.memory_pressure_order(snap.pods, snap, usage)
            if r["rank"] is not None]
    order = oracle.ask("memoryRank", pods=[p.raw for p in ours],
                       usage={f"{ns}/{name}": v for (ns, name), v in usage.items()})
    assert [f"{p.namespace}/{p.name}" for p in ours] == order


@PROPERTY
@given(raw=gen.pod(states=False), classes=gen.priority_classes(),
       name=st.sampled_from(["", "", "", "pc0", "pc1", "pc3", "missing", "system-node-critical"]),
       system_in_snapshot=st.booleans())
@example(raw={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
              "spec": {"containers": [{"name": "c", "image": "x"}]}},
         classes=[{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n},
                   "value": v, "globalDefault": True} for n, v in (("pc0", 50), ("pc1", 5))],
         name="", system_in_snapshot=False)
def test_priority_admission(oracle, raw, classes, name, system_in_snapshot):
    count("test_priority_admission")
    if name:
        raw["spec"]["priorityClassName"] = name
    expected = oracle.ask("admitPriority", pod=raw, classes=classes + gen.SYSTEM_CLASSES)
    snap = snapshot(*(classes + (gen.SYSTEM_CLASSES if system_in_snapshot else [])))
    try:
        ours = priority.resolve(Pod(raw), snap)
    except priority.UnknownPriorityClass as e:
        assert expected.get("rejected") and str(e) in expected["rejected"]
        return
    assert "rejected" not in expected, expected
    assert (ours["value"], ours["className"] or "", ours["preemptionPolicy"]) == \
        (expected["priority"], expected["priorityClassName"], expected["preemptionPolicy"])


@PROPERTY
@given(raw=gen.pod(), requested=st.sampled_from([None, None, -1, 0, 1, 5, 10, 60, 600]))
def test_delete_grace_period(oracle, raw, requested):
    count("test_delete_grace_period")
    raw["spec"].setdefault("terminationGracePeriodSeconds", 30)  # as stored (API defaulting)
    expected = oracle.ask("deleteGrace", pod=copy.deepcopy(raw), gracePeriodSeconds=requested)
    ours = termination.api_grace_period(Pod(raw), requested, now=datetime.now(timezone.utc))
    assert ours["seconds"] == expected["seconds"], (ours, expected)
