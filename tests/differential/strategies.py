"""Hypothesis generators of valid but nasty API objects (raw camelCase dicts, as the API returns).

Pods mix regular, init and sidecar containers, pod-level resources, overhead, sub-milli and
odd quantities, extended resources, terminating/terminal/Pending/unscheduled states; classes
include several global defaults; PDBs come in every shape (nil and empty selectors, int and
percent, both eviction policies, stale or failed status); owners with and without a scale
subresource.
"""

from hypothesis import strategies as st

from kubectl_safety.model.quantity import parse_quantity

NAMESPACE = "ns"
# Sub-milli cpu ("0.0001") and sub-unit memory ("0.5"): the API server rounds each quantity up to
# milli precision on create; PodRequests adds them exactly and the total is rounded once.
CPU = ["0", "1m", "1e-3", "0.0001", "0.0005", "100m", "250m", "0.5", "1", "1500m", "2", "3.333"]
# status is written through the API server too, so its quantities are stored at milli precision
STORED_CPU = [c for c in CPU if (parse_quantity(c) * 1000).denominator == 1]
MEMORY = ["0", "0.5", "1", "999", "1k", "1Ki", "100M", "128Mi", "1e6", "0.5Gi", "1.5Gi", "1G", "123456789", "3Gi"]
EXTENDED = {"example.com/gpu": ["0", "1", "2"], "ephemeral-storage": ["1Gi", "500M"], "hugepages-2Mi": ["2Mi", "4Mi"]}
PAST, FUTURE = "2020-01-01T00:00:00Z", "2099-01-01T00:00:00Z"
LABEL_VALUES = ["a", "b"]


def _names(prefix, n):
    return [f"{prefix}{i}" for i in range(n)]


@st.composite
def resource_pair(draw, resources=("cpu", "memory"), extended=True):
    """(requests, limits) of one container: a request never exceeds its limit."""
    requests, limits = {}, {}
    pool = dict(cpu=CPU, memory=MEMORY)
    if extended:
        pool.update(EXTENDED)
    for name in list(resources) + (list(EXTENDED) if extended else []):
        kind = draw(st.sampled_from(["none", "request", "limit", "both", "equal"]))
        values = pool[name]
        if name in EXTENDED and kind in ("request", "both"):
            kind = "equal"  # extended resources: request must equal limit
        if kind == "none":
            continue
        a = draw(st.sampled_from(values))
        if kind == "request":
            requests[name] = a
        elif kind == "limit":
            limits[name] = a
        elif kind == "equal":
            requests[name] = limits[name] = a
        else:
            b = draw(st.sampled_from(values))
            lo, hi = sorted([a, b], key=parse_quantity)
            requests[name], limits[name] = lo, hi
    return requests, limits


@st.composite
def container(draw, name, init=False):
    requests, limits = draw(resource_pair())
    c = {"name": name, "image": "x", "resources": {}}
    if requests:
        c["resources"]["requests"] = requests
    if limits:
        c["resources"]["limits"] = limits
    if init and draw(st.booleans()):
        c["restartPolicy"] = "Always"  # a sidecar
    if draw(st.integers(0, 4)) == 0:
        c["lifecycle"] = {"preStop": {"sleep": {"seconds": draw(st.integers(1, 5))}}}
    return c


@st.composite
def pod_level(draw):
    """Pod-level resources, large enough to cover the containers (validation requires it)."""
    big = {"cpu": ["4", "8", "16"], "memory": ["4Gi", "8Gi", "16Gi", "32Gi"]}
    requests, limits = {}, {}
    for name, values in big.items():
        kind = draw(st.sampled_from(["none", "request", "limit", "both"]))
        if kind == "none":
            continue
        value = draw(st.sampled_from(values))
        if kind in ("request", "both"):
            requests[name] = value
        if kind in ("limit", "both"):
            limits[name] = value if kind == "limit" else draw(st.sampled_from([v for v in values
                                                                                if parse_quantity(v) >= parse_quantity(value)]))
    out = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out or None


@st.composite
def pod(draw, name="p", node="n1", states=True, owner=None):
    """A pod spec with nasty resources; ``states`` adds phases, deletion and scheduling states."""
    spec = {"containers": [draw(container(n)) for n in _names("c", draw(st.integers(1, 3)))]}
    inits = [draw(container(n, init=True)) for n in _names("i", draw(st.integers(0, 3)))]
    if inits:
        spec["initContainers"] = inits
    if draw(st.integers(0, 2)) == 0:
        level = draw(pod_level())
        if level:
            spec["resources"] = level
    if draw(st.integers(0, 4)) == 0:
        spec["overhead"] = {"cpu": draw(st.sampled_from(["10m", "250m"])), "memory": draw(st.sampled_from(["1Mi", "120Mi"]))}
    meta = {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}",
            "labels": {"app": draw(st.sampled_from(LABEL_VALUES))}}
    if owner:
        meta["ownerReferences"] = [owner]
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    if node:
        spec["nodeName"] = node
    if states:
        status["phase"] = draw(st.sampled_from(["Running", "Running", "Running", "Pending", "Succeeded", "Failed"]))
        if draw(st.booleans()):
            status["conditions"] = [{"type": "Ready", "status": "False"}]
        grace = draw(st.sampled_from([None, 0, 1, 5, 30, 600]))
        if grace is not None:
            spec["terminationGracePeriodSeconds"] = grace
        if draw(st.integers(0, 2)) == 0:
            meta["deletionTimestamp"] = draw(st.sampled_from([PAST, FUTURE]))
            deletion_grace = draw(st.sampled_from([None, 0, 1, 5, 30, 600]))
            if deletion_grace is not None:
                meta["deletionGracePeriodSeconds"] = deletion_grace
        if draw(st.integers(0, 4)) == 0:
            spec.pop("nodeName", None)
            status["phase"] = "Pending"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


@st.composite
def resized(draw, raw):
    """The pod mid-resize: status resources (actuated) and allocated resources that differ from
    the spec for some containers, the pod level, and maybe a PodResizePending condition."""
    statuses = []
    for c in raw["spec"]["containers"] + raw["spec"].get("initContainers", []):
        if draw(st.booleans()):
            continue
        requests = {"cpu": draw(st.sampled_from(STORED_CPU)), "memory": draw(st.sampled_from(MEMORY))}
        status = {"name": c["name"], "ready": True, "restartCount": 0, "image": "x", "imageID": "",
                  "resources": {"requests": requests}}
        if draw(st.booleans()):
            status["allocatedResources"] = {"cpu": draw(st.sampled_from(STORED_CPU))}
        statuses.append((c, status))
    raw["status"]["containerStatuses"] = [s for c, s in statuses if c in raw["spec"]["containers"]]
    raw["status"]["initContainerStatuses"] = [s for c, s in statuses if c not in raw["spec"]["containers"]]
    if raw["spec"].get("resources") and draw(st.booleans()):
        raw["status"]["resources"] = {"requests": {"cpu": draw(st.sampled_from(["2", "8", "32"]))}}
        raw["status"]["allocatedResources"] = {"memory": draw(st.sampled_from(["8Gi", "64Gi"]))}
    reason = draw(st.sampled_from([None, "Infeasible", "Deferred"]))
    if reason:
        raw["status"]["conditions"].append({"type": "PodResizePending", "status": "True", "reason": reason})
    return raw


@st.composite
def priority_classes(draw):
    """0-4 classes, several of them possibly globalDefault (admission takes the lowest)."""
    out = []
    for name in _names("pc", draw(st.integers(0, 4))):
        pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
              "value": draw(st.sampled_from([-5, 0, 10, 1000, 1_000_000_000])),
              "globalDefault": draw(st.booleans())}
        if draw(st.booleans()):
            pc["preemptionPolicy"] = draw(st.sampled_from(["Never", "PreemptLowerPriority"]))
        out.append(pc)
    # distinct values among defaults: the tie is a deviation (docs/deviations.md)
    seen, unique = set(), []
    for pc in out:
        if pc["globalDefault"] and pc["value"] in seen:
            pc["globalDefault"] = False
        if pc["globalDefault"]:
            seen.add(pc["value"])
        unique.append(pc)
    return unique


SYSTEM_CLASSES = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
     "value": value, "globalDefault": False}
    for name, value in (("system-cluster-critical", 2_000_000_000), ("system-node-critical", 2_000_001_000))]


@st.composite
def selector(draw):
    """nil, empty (everything), matchLabels, or matchExpressions."""
    kind = draw(st.sampled_from(["nil", "empty", "labels", "in", "notin", "exists"]))
    if kind == "nil":
        return None
    if kind == "empty":
        return {}
    value = draw(st.sampled_from(LABEL_VALUES))
    if kind == "labels":
        return {"matchLabels": {"app": value}}
    if kind == "exists":
        return {"matchExpressions": [{"key": "app", "operator": "Exists"}]}
    return {"matchExpressions": [{"key": "app", "operator": "In" if kind == "in" else "NotIn", "values": [value]}]}


@st.composite
def pdb(draw, name):
    spec = {}
    sel = draw(selector())
    if sel is not None:
        spec["selector"] = sel
    rule = draw(st.sampled_from(["minAvailable", "maxUnavailable"]))
    spec[rule] = draw(st.sampled_from([0, 1, 2, 3, "0%", "30%", "50%", "100%"]))
    if draw(st.booleans()):
        spec["unhealthyPodEvictionPolicy"] = draw(st.sampled_from(["IfHealthyBudget", "AlwaysAllow"]))
    generation = draw(st.sampled_from([1, 2]))
    status = {"observedGeneration": draw(st.sampled_from([1, 2])),
              "disruptionsAllowed": draw(st.sampled_from([0, 0, 1, 2])),
              "currentHealthy": draw(st.integers(0, 3)), "desiredHealthy": draw(st.integers(0, 3)),
              "expectedPods": draw(st.integers(0, 3))}
    if draw(st.integers(0, 3)) == 0:
        status["conditions"] = [{"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                                 "message": "found no controllers for pod", "lastTransitionTime": PAST}]
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}", "generation": generation},
            "spec": spec, "status": status}


OWNER_KINDS = [("ReplicaSet", "apps/v1"), ("DaemonSet", "apps/v1"), ("Job", "batch/v1"), ("StatefulSet", "apps/v1")]


@st.composite
def owner_ref(draw):
    """A controller reference (or None for a bare pod)."""
    choice = draw(st.sampled_from([None] + OWNER_KINDS))
    if choice is None:
        return None
    kind, api_version = choice
    name = draw(st.sampled_from(["w0", "w1"]))
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{kind}-{name}", "controller": True}
