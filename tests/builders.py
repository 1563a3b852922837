"""Builders for API-shaped objects and snapshots in unit tests (override anything via kwargs)."""

import json
from datetime import datetime, timezone

from kubectl_safety.model.parse import build_snapshot

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)
T0 = "2026-11-20T08:00:00Z"
ZONE = "topology.kubernetes.io/zone"


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


def web(name, node="n1", cpu="100m", labels=None, **kw):
    """A pod of app=web (``labels`` replaces them) requesting ``cpu`` (None: no request)."""
    return make_pod(name, node=node, labels=labels or {"app": "web"}, cpu=cpu, **kw)


def spread(app="web", key=ZONE, max_skew=1, when="DoNotSchedule", *, labels=None, selector=None, **extra):
    """A topologySpreadConstraint over the pods labelled app=APP (``labels``: other matchLabels; ``selector``:
    the whole labelSelector, {} for one that selects nothing); ``extra`` adds fields (minDomains, ...)."""
    chosen = {"matchLabels": labels or {"app": app}} if selector is None else selector
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, "labelSelector": chosen, **extra}


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


def never_allows(other="n2"):
    """web-a on n1, web-b on ``other``, a PDB of minAvailable 2: no eviction is ever allowed."""
    labels = {"app": "web"}
    return [make_pod("web-a", labels=labels), make_pod("web-b", node=other, labels=labels),
            make_pdb("web", selector=labels, min_available=2, allowed=0, healthy=2, desired=2, expected=2)]


def kubeconfig(server="@REFUSED@", user=None, *, token="tok-123", cluster=None, context=None, current="x",
               cluster_ref="c", user_ref="u") -> str:
    """A kubeconfig (JSON): cluster "c" at ``server``, user "u" (``user``, else a bearer ``token``), context "x"
    naming ``cluster_ref`` and ``user_ref``; ``cluster`` and ``context`` add fields to theirs; ``current=None``
    leaves current-context unset."""
    cfg = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
           "users": [{"name": "u", "user": {"token": token} if user is None else user}],
           "contexts": [{"name": "x", "context": {"cluster": cluster_ref, "user": user_ref, **(context or {})}}]}
    if current:
        cfg["current-context"] = current
    return json.dumps(cfg)


def write_kubeconfig(path, server, **kw) -> str:
    """``kubeconfig(server, **kw)`` written to ``path``; its path as a string."""
    path.write_text(kubeconfig(server, **kw))
    return str(path)


def exec_user(command, *args) -> dict:
    """A kubeconfig user whose credential comes from the exec plugin ``command args...``."""
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": command, "args": list(args),
                     "interactiveMode": "Never"}}


def snapshot(*objects, now=NOW):
    """A ClusterSnapshot of raw object dicts, as the one parser builds it."""
    return build_snapshot([("test", o) for o in objects], taken_at=now, source="test")
