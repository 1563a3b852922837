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
