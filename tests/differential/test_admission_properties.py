"""A pod create against upstream's admission chain (the oracle's ``admitPods``: defaulting, then
LimitRanger, Priority, DefaultTolerationSeconds, RuntimeClass, the pod strategy, ResourceQuota)
versus ``admission.admit``, as ``preemption -f`` previews a manifest's pod.

LimitRanges with Container and Pod items (default, defaultRequest, min, max, ratio), PriorityClasses
(a global default or not, either policy) and pods that set priority/preemptionPolicy, RuntimeClasses
with overhead and scheduling, ResourceQuotas on pods, cpu and memory (requests, limits, bare),
computed or not, maybe scoped (PriorityClass expressions, QoS, deadline); pods with init
containers, sidecars, pod-level resources. Rejected or not and by which plugin, and what the
scheduler reads of the stored pod: priority, preemption policy, overhead, node selector,
tolerations (less the two DefaultTolerationSeconds adds, which no filter of a Ready node reads),
containers' and pod-level requests/limits.
"""

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.admission import AdmissionRejected, admit
from kubectl_safety.analysis.priority import resolve
from kubectl_safety.model.pods import Pod
from kubectl_safety.model.quantity import exact_resource_list
from tests.builders import snapshot
from tests.differential.conftest import PROPERTY, count, tally

CPU = ["100m", "250m", "500m", "1"]
SCOPES = [{"scopes": [s]} for s in ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating")] + [
    {"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": op, **values}]}}
    for op, values in (("In", {"values": ["high"]}), ("In", {"values": ["base", "missing"]}),
                       ("NotIn", {"values": ["high"]}), ("Exists", {}), ("DoesNotExist", {}))]
MEMORY = ["64Mi", "128Mi", "256Mi", "1Gi"]


def resources(draw, one_in=2):
    out = {}
    for part in ("requests", "limits"):
        values = {}
        if draw(st.integers(0, one_in)) == 0:
            values["cpu"] = draw(st.sampled_from(CPU))
        if draw(st.integers(0, one_in)) == 0:
            values["memory"] = draw(st.sampled_from(MEMORY))
        if values:
            out[part] = values
    return out


@st.composite
def limit_range(draw):
    items = []
    if draw(st.booleans()):
        item = {"type": "Container"}
        for field, values in (("default", CPU[2:]), ("defaultRequest", CPU[:2]), ("max", CPU[3:]), ("min", CPU[:1])):
            if draw(st.integers(0, 2)) == 0:
                item[field] = {"cpu": draw(st.sampled_from(values))}
        if draw(st.integers(0, 3)) == 0:
            item.setdefault("default", {})["memory"] = draw(st.sampled_from(MEMORY))
        if draw(st.integers(0, 5)) == 0:
            item["maxLimitRequestRatio"] = {"cpu": draw(st.sampled_from(["2", "10"]))}
        items.append(item)
    if draw(st.integers(0, 3)) == 0:
        items.append({"type": "Pod", "max": {"cpu": draw(st.sampled_from(["1", "2"]))}})
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "ns"},
            "spec": {"limits": items}}


@st.composite
def case(draw):
    objects = []
    if draw(st.booleans()):
        objects.append(draw(limit_range()))
    classes = []
    if draw(st.booleans()):
        classes.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                        "value": 1000, "preemptionPolicy": draw(st.sampled_from(["PreemptLowerPriority", "Never"]))})
    if draw(st.integers(0, 3)) == 0:
        classes.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "base"},
                        "value": 10, "globalDefault": True})
    runtime = []
    if draw(st.booleans()):
        rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata"}
        if draw(st.booleans()):
            rc["overhead"] = {"podFixed": {"cpu": "250m", "memory": "64Mi"}}
        if draw(st.booleans()):
            rc["scheduling"] = {"nodeSelector": {"sandbox": "yes"},
                                "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}
        runtime.append(rc)
    quotas = []
    if draw(st.booleans()):
        hard = {}
        for name, values in (("pods", ["1", "5"]), ("requests.cpu", ["1", "4"]), ("cpu", ["2"]),
                             ("limits.memory", ["1Gi"]), ("requests.memory", ["512Mi"])):
            if draw(st.integers(0, 2)) == 0:
                hard[name] = draw(st.sampled_from(values))
        if hard:
            q = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "ns"},
                 "spec": {"hard": hard}}
            if draw(st.integers(0, 2)) == 0:  # limited to the pods its scopes match
                q["spec"].update(draw(st.sampled_from(SCOPES)))
            if not draw(st.integers(0, 5)) == 0:  # computed by the quota controller (or not yet)
                q["status"] = {"hard": dict(hard), "used": {k: draw(st.sampled_from(["0", "1"])) for k in hard}}
            quotas.append(q)
    spec = {"containers": [{"name": "c", "image": "x", "resources": resources(draw)}]}
    if draw(st.integers(0, 3)) == 0:
        spec["initContainers"] = [{"name": "i", "image": "x", "resources": resources(draw, 3)}]
        if draw(st.booleans()):  # a sidecar
            spec["initContainers"][0]["restartPolicy"] = "Always"
    if draw(st.integers(0, 3)) == 0:  # pod-level resources (PodLevelResources)
        spec["resources"] = resources(draw, 1)
    if classes and draw(st.booleans()):
        spec["priorityClassName"] = draw(st.sampled_from([c["metadata"]["name"] for c in classes] + ["missing"]))
    if draw(st.integers(0, 4)) == 0:
        spec["priority"] = draw(st.sampled_from([0, 10, 1000]))
    if draw(st.integers(0, 4)) == 0:
        spec["preemptionPolicy"] = draw(st.sampled_from(["PreemptLowerPriority", "Never"]))
    if draw(st.integers(0, 2)) == 0:
        spec["runtimeClassName"] = draw(st.sampled_from(["kata", "kata", "gone"]))
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {"sandbox": draw(st.sampled_from(["yes", "no"]))}
    if draw(st.integers(0, 4)) == 0:
        spec["activeDeadlineSeconds"] = 60
    if draw(st.integers(0, 3)) == 0:
        spec["hostNetwork"] = True
        spec["containers"][0]["ports"] = [{"containerPort": 8080}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec}
    return objects, classes, runtime, quotas, pod


DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def scheduling_view(raw) -> dict:
    spec = raw["spec"]
    return {"priority": spec.get("priority"), "preemptionPolicy": spec.get("preemptionPolicy"),
            "overhead": exact_resource_list(spec.get("overhead")), "nodeSelector": spec.get("nodeSelector") or {},
            "tolerations": [t for t in spec.get("tolerations") or () if t.get("key") not in DEFAULT_TOLERATIONS],
            "containers": [(c.exact_requests, c.exact_limits)  # as the API's defaulting leaves them
                           for c in (*Pod(raw).init_containers, *Pod(raw).containers)],
            "podLevel": [exact_resource_list((spec.get("resources") or {}).get(p)) for p in ("requests", "limits")],
            "hostPorts": [p.get("hostPort") for c in spec.get("containers") or () for p in c.get("ports") or ()]}


@PROPERTY
@given(c=case())
def test_admission(oracle, c):
    """Rejected by the same plugin, or admitted with the same scheduling-relevant fields."""
    count("test_admission")
    limit_ranges, classes, runtime, quotas, pod = c
    theirs = oracle.ask("admitPods", limitRanges=limit_ranges, priorityClasses=classes, runtimeClasses=runtime,
                        resourceQuotas=quotas, pods=[pod])[0]
    snap = snapshot(*limit_ranges, *classes, *runtime, *quotas)
    try:
        ours = admit(Pod(pod), snap)
    except AdmissionRejected as e:
        assert theirs.get("rejected", {}).get("plugin") == e.plugin, (str(e), theirs)
        tally("test_admission", f"rejected by {e.plugin}")
        return
    assert "rejected" not in theirs, theirs["rejected"]
    mine, upstream = scheduling_view(ours.raw), scheduling_view(theirs["pod"])
    resolved = resolve(ours, snap)
    mine.update(priority=resolved["value"], preemptionPolicy=resolved["preemptionPolicy"])
    assert mine == upstream
    tally("test_admission", "admitted")
