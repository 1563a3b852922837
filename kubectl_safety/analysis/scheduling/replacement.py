"""The pod a controller creates in place of an evicted one, unscheduled, as the scheduler sees it."""

from kubectl_safety.model.constants import UNSCHEDULABLE_TAINT
from kubectl_safety.model.nodes import Node
from kubectl_safety.model.pods import Pod


def unscheduled_copy(pod, keep_spread=True, name=None) -> Pod:
    """``pod`` re-created by its controller: same labels and spec, no node, no status.

    A StatefulSet keeps the pod's name (and so its claims); other controllers pick a new name
    (``name`` overrides both). ``keep_spread=False`` drops topologySpreadConstraints.
    """
    raw = pod.raw
    same_name = (pod.controller_ref or {}).get("kind") == "StatefulSet"
    name = name or (pod.name if same_name else pod.name + "-replacement")
    meta = {**(raw.get("metadata") or {}), "name": name, "uid": ""}
    meta.pop("deletionTimestamp", None)
    meta.pop("deletionGracePeriodSeconds", None)
    drop = ("nodeName",) if keep_spread else ("nodeName", "topologySpreadConstraints")
    spec = {k: v for k, v in (raw.get("spec") or {}).items() if k not in drop}
    return Pod({**raw, "metadata": meta, "spec": spec, "status": {"phase": "Pending"}})


# What the filters read of a pod's spec besides its requests, host ports and claims.
SHAPE_FIELDS = ("schedulingGates", "nodeName", "tolerations", "nodeSelector", "affinity", "topologySpreadConstraints")
TEMPLATE_OWNERS = ("ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController")
# Labels the controllers put on each pod beside the template's (revision, identity, index).
CONTROLLER_LABELS = ("controller-revision-hash", "pod-template-generation", "statefulset.kubernetes.io/pod-name",
                     "apps.kubernetes.io/pod-index", "batch.kubernetes.io/job-completion-index")
_TEMPLATES = "replacement-templates"  # {owner uid: its template's pod as admitted, or None}


def replacement(pod, snapshot) -> tuple:
    """``(the pod, from_template)``: what ``pod``'s controller creates in its place, built as the
    controller builds it (``GetPodFromTemplate``, pkg/controller/controller_utils.go; a StatefulSet's
    ``newStatefulSetPod`` with its claims) from the template in ``snapshot`` and stored as admission
    makes it (LimitRange defaults, priority, RuntimeClass overhead; quotas left out: the evicted pod
    frees its share). A template's ``nodeName`` is kept: the replacement then skips the scheduler.
    ``(unscheduled_copy(pod), False)`` when the owner or its template is not in the snapshot, or
    admission would refuse the template's pod."""
    owner = snapshot.owner(pod)
    if owner is None or owner.kind not in TEMPLATE_OWNERS or not owner.template.get("spec"):
        return unscheduled_copy(pod), False
    cache = snapshot.planning.setdefault(_TEMPLATES, {})
    if owner.uid not in cache:
        cache[owner.uid] = _admitted_template(owner, pod.namespace, snapshot)
    made = cache[owner.uid]
    if made is None:
        return unscheduled_copy(pod), False
    same_name = owner.kind == "StatefulSet"
    labels = {**made.labels, **{k: v for k, v in pod.labels.items() if k in CONTROLLER_LABELS}}
    meta = {**made.raw["metadata"], "name": pod.name if same_name else pod.name + "-replacement",
            "labels": labels, "ownerReferences": pod.meta.get("ownerReferences") or []}
    spec = made.raw["spec"]
    if same_name:
        spec = {**spec, "volumes": stateful_volumes(spec.get("volumes") or [], owner.raw, pod.name)}
    return Pod({**made.raw, "metadata": meta, "spec": spec}), True


def _admitted_template(owner, namespace, snapshot):
    from kubectl_safety.analysis.admission import AdmissionRejected, admit
    from kubectl_safety.analysis.priority import resolve
    from kubectl_safety.errors import InputError
    from kubectl_safety.model.schema import SCHEMAS, check

    template = owner.template
    try:  # the template was stored, not checked as a pod: a malformed one is an error naming its field
        check(template["spec"], SCHEMAS["Pod"]["spec"], "spec.template.spec")
        check(template.get("metadata"), SCHEMAS["Pod"]["metadata"], "spec.template.metadata")
    except InputError as e:
        raise InputError(f"{owner.kind} {owner.namespace}/{owner.name}: {e}") from None
    tmeta = template.get("metadata") or {}
    raw = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": owner.name, "namespace": namespace, "uid": "",
                        "labels": dict(tmeta.get("labels") or {}), "annotations": dict(tmeta.get("annotations") or {})},
           "spec": dict(template["spec"]), "status": {"phase": "Pending"}}
    unlimited = snapshot.planning.get(_TEMPLATES + "-no-quota")
    if unlimited is None:
        unlimited = snapshot.planning[_TEMPLATES + "-no-quota"] = snapshot.replace(resource_quotas=[])
    try:
        admitted = admit(Pod(raw), unlimited)
    except AdmissionRejected:
        return None
    priority = resolve(admitted, snapshot)
    spec = {**admitted.raw["spec"], "tolerations": default_toleration_seconds(admitted.spec.get("tolerations") or []),
            "priority": priority["value"], "preemptionPolicy": priority["preemptionPolicy"]}
    return Pod({**admitted.raw, "spec": spec})


def default_toleration_seconds(tolerations) -> list:
    """The DefaultTolerationSeconds admission plugin: a pod that tolerates neither taint already
    gets ``not-ready`` and ``unreachable`` NoExecute tolerations for 300 s."""
    out = list(tolerations)
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") in (key, "", None) and t.get("effect") in ("NoExecute", "", None) for t in tolerations):
            out.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    return out


def stateful_volumes(volumes, statefulset, pod_name) -> list:
    """A StatefulSet pod's volumes (``updateStorage``): each claim template's volume names the claim
    ``<template>-<statefulset>-<ordinal>``, replacing a template volume of the same name."""
    claims = [(c.get("metadata") or {}).get("name") for c in (statefulset.get("spec") or {}).get(
        "volumeClaimTemplates") or []]
    set_name = (statefulset.get("metadata") or {}).get("name") or ""
    ordinal = pod_name.rpartition("-")[2]
    return [{"name": c, "persistentVolumeClaim": {"claimName": f"{c}-{set_name}-{ordinal}"}} for c in claims] + \
        [v for v in volumes if v.get("name") not in claims]


def cordoned(node) -> Node:
    """``node`` after ``kubectl cordon``: unschedulable, with the taint the node controller adds."""
    raw = node.raw
    spec = dict(raw.get("spec") or {})
    spec["unschedulable"] = True
    taints = list(spec.get("taints") or [])
    if not any(t.get("key") == UNSCHEDULABLE_TAINT["key"] for t in taints):
        taints.append(dict(UNSCHEDULABLE_TAINT))
    spec["taints"] = taints
    return Node({**raw, "spec": spec})


def uncordoned(node) -> Node:
    """``node`` after ``kubectl uncordon``: schedulable, without the taint the node controller removes."""
    raw = node.raw
    spec = dict(raw.get("spec") or {})
    spec.pop("unschedulable", None)
    taints = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT["key"]]
    if taints:
        spec["taints"] = taints
    else:
        spec.pop("taints", None)
    return Node({**raw, "spec": spec})
