"""Builders for API-shaped objects and snapshots in unit tests (override anything via kwargs)."""

from datetime import datetime, timezone

from kubectl_safety.model.parse import build_snapshot

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)
T0 = "2026-11-20T08:00:00Z"


def _meta(name, namespace=None, labels=None, owner=None, **extra):
    m = {"name": name, "uid": f"uid-{namespace or ''}-{name}", "creationTimestamp": T0}
    if namespace is not None:
        m["namespace"] = namespace
    if labels:
        m["labels"] = dict(labels)
    if owner:
        kind, oname = owner if isinstance(owner, tuple) else (owner["kind"], owner["metadata"]["name"])
        m["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": oname,
                                 "uid": f"uid-{namespace or ''}-{oname}", "controller": True}]
    m.update(extra)
    return m


def container(name="c", requests=None, limits=None, **extra):
    c = {"name": name, "image": "example:1", "resources": {}}
    if requests:
        c["resources"]["requests"] = dict(requests)
    if limits:
        c["resources"]["limits"] = dict(limits)
    c.update(extra)
    return c


def make_pod(name, namespace="default", node="n1", *, cpu=None, memory=None, limits=None,
             containers=None, labels=None, owner=("ReplicaSet", "rs"), priority=None,
             priority_class=None, phase="Running", ready=True, start=T0, meta=None, status=None,
             **spec):
    """A pod; ``cpu``/``memory`` set one container's requests; ``owner=None`` for a bare pod."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": _meta(name, namespace, labels or {"app": name}, owner, **(meta or {})),
           "spec": {"containers": containers or [container(requests=requests, limits=limits)], **spec},
           "status": {"phase": phase, "startTime": start,
                      "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    if node:
        pod["spec"]["nodeName"] = node
    if priority is not None:
        pod["spec"]["priority"] = priority
    if priority_class:
        pod["spec"]["priorityClassName"] = priority_class
    if status:
        pod["status"].update(status)
    return pod


def make_node(name, *, cpu="4", memory="16Gi", pods="110", labels=None, taints=None,
              unschedulable=False, ready="True", heartbeat="2026-11-22T09:00:00Z", zone=None):
    lab = {"kubernetes.io/hostname": name}
    if zone:
        lab["topology.kubernetes.io/zone"] = zone
    lab.update(labels or {})
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": _meta(name, labels=lab), "spec": {},
            "status": {"capacity": dict(alloc), "allocatable": dict(alloc),
                       "conditions": [{"type": "Ready", "status": ready, "lastHeartbeatTime": heartbeat}]}}
    if taints:
        node["spec"]["taints"] = list(taints)
    if unschedulable:
        node["spec"]["unschedulable"] = True
    return node


def make_pdb(name, namespace="default", *, selector=None, min_available=None, max_unavailable=None,
             allowed=0, healthy=None, desired=None, expected=None, policy=None, disrupted=None):
    spec = {"selector": {"matchLabels": selector if selector is not None else {"app": name}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    if policy:
        spec["unhealthyPodEvictionPolicy"] = policy
    status = {"observedGeneration": 1, "disruptionsAllowed": allowed}
    for key, value in (("currentHealthy", healthy), ("desiredHealthy", desired), ("expectedPods", expected),
                       ("disruptedPods", disrupted)):
        if value is not None:
            status[key] = value
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": _meta(name, namespace, generation=1), "spec": spec, "status": status}


def make_class(name, value, *, default=False, policy=None):
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta(name),
          "value": value, "globalDefault": default}
    if policy:
        pc["preemptionPolicy"] = policy
    return pc


def make_workload(kind, name, namespace="default", *, replicas=1, labels=None, owner=None, template=None):
    labels = labels or {"app": name}
    w = {"apiVersion": "batch/v1" if kind in ("Job", "CronJob") else "apps/v1", "kind": kind,
         "metadata": _meta(name, namespace, labels, owner),
         "spec": {"selector": {"matchLabels": labels},
                  "template": template or {"metadata": {"labels": labels}, "spec": {"containers": [container()]}}}}
    if kind not in ("DaemonSet",):
        w["spec"]["replicas"] = replicas
    return w


def snapshot(*objects, now=NOW):
    """A ClusterSnapshot of raw object dicts, as the one parser builds it."""
    return build_snapshot([("test", o) for o in objects], taken_at=now, source="test")
