"""What deleting a pod (gracefully or by force) risks: a pure assessment with stable risk codes.

Force deletion (grace period 0) removes the API object at once while the pod's processes may
still run on its node. Sources: the pod safety proposal (seed 002) and the graceful
termination timeline (seed 003); domain.md sections 6 and 7.
"""

from kubectl_safety.analysis import termination
from kubectl_safety.analysis.deletion import pod_gc_force_deletes
from kubectl_safety.analysis.explanations.common import NodeReadiness
from kubectl_safety.analysis.explanations.delete import DeleteAssessment, DeleteNode, DeleteOwner, Terminating
from kubectl_safety.analysis.node_health import node_health
from kubectl_safety.analysis.plans.common import Finding
from kubectl_safety.analysis.risks import incomplete

UNSAFE_INLINE_TYPES = {"iscsi": "iSCSI", "fc": "Fibre Channel", "nfs": "NFS"}
# CSI drivers that enforce single attachment (block storage) or are per-pod only.
KNOWN_CSI_DRIVERS = frozenset({
    "ebs.csi.aws.com", "pd.csi.storage.gke.io", "disk.csi.azure.com", "cinder.csi.openstack.org",
    "rbd.csi.ceph.com", "csi.vsphere.vmware.com", "diskplugin.csi.alibabacloud.com",
    "secrets-store.csi.k8s.io", "csi.cert-manager.io",
})
SINGLE_WRITER_MODES = ("ReadWriteOnce", "ReadWriteOncePod")
REPLICA_OWNERS = ("ReplicaSet", "ReplicationController")


def assess(pod, snapshot, now, grace_period=None, force=False, *, storage=(), node_readable=True) -> DeleteAssessment:
    """The delete assessment of one pod: node state, timeline, risks and whether force is needed.

    ``grace_period``: the requested DeleteOptions.gracePeriodSeconds (None: the pod's own);
    ``force`` (or ``grace_period == 0``) assesses a force delete. ``storage``: raw
    PersistentVolumeClaim/PersistentVolume dicts when they were read (access modes, volume
    types; otherwise the snapshot's, e.g. a dump with pvc,pv); ``node_readable=False`` when the
    Node could not be read (its state is unknown).
    """
    force = force or grace_period == 0
    unheld = incomplete(snapshot, "delete")  # a dump without nodes: the node's state is unknown, not gone
    node = _node(pod, snapshot, now, node_readable and not snapshot.not_held(("nodes",)))
    grace = termination.api_grace_period(pod, 0 if force else grace_period)
    collected = node.state in (NodeReadiness.NOT_READY, NodeReadiness.UNKNOWN) and \
        pod_gc_force_deletes(snapshot.node(node.name), {"state": node.state.value})
    risks = ([Finding(unheld[0], "error", unheld[1])] if unheld else []) + \
        _risks(pod, snapshot, now, node, force, _storage_index(storage, snapshot), collected)
    needed, verdict = _verdict(pod, node, collected)
    steps = termination.timeline(pod, 0 if force else grace_period).steps
    return DeleteAssessment(pod.namespace, pod.name, pod.uid, pod.phase, _owner(pod, snapshot), node, force,
                            grace["seconds"], grace["why"], steps, terminating(pod, now), needed, verdict, tuple(risks))


def assessment_for_explain(pod, snapshot, now) -> DeleteAssessment:
    """The force-delete assessment shown by ``explain pod``."""
    return assess(pod, snapshot, now, force=True)


def terminating(pod, now):
    """Since when the pod is terminating, its grace period and how far past its deadline; or None."""
    deadline = pod.deletion_timestamp
    if deadline is None:
        return None
    grace = pod.deletion_grace_period or 0
    if now is None:
        return Terminating(deadline.isoformat().replace("+00:00", "Z"), grace, None, None)
    return Terminating(deadline.isoformat().replace("+00:00", "Z"), grace,
                       max(0, int((now - deadline).total_seconds()) + grace),
                       max(0, int((now - deadline).total_seconds())))


def _node(pod, snapshot, now, readable) -> DeleteNode:
    name = pod.node_name or None
    if name is None:
        return DeleteNode(None, NodeReadiness.UNSCHEDULED, False, None, "not scheduled to a node")
    if not readable:
        return DeleteNode(name, NodeReadiness.UNREADABLE, None, None,
                          f"node {name} could not be read: its state is unknown")
    state = node_health(snapshot.node(name), now, snapshot.node_lease(name))
    return DeleteNode(name, NodeReadiness(state["state"]), state["partitioned"], state["heartbeatAgeSeconds"],
                      state["message"])


def _owner(pod, snapshot):
    ref = pod.controller_ref
    if not ref:
        return None
    chain = snapshot.owner_chain(pod)
    top = chain[-1][0] if chain else ref
    via = f"{top.get('kind')}/{top.get('name')}" if top is not ref else None
    return DeleteOwner(ref.get("kind"), ref.get("name"), via)


def _verdict(pod, node, collected) -> tuple:
    """(force needed?, one plain sentence); ``collected``: the pod GC force-deletes the node's
    terminating pods (``gcTerminating``: not Ready and the out-of-service taint)."""
    state = node.state.value
    if pod.is_terminal:
        return False, "force is not needed: the pod has finished, the API server removes it at once"
    if state == "Unscheduled":
        return False, "force is not needed: an unscheduled pod is removed at once"
    if state == "Ready":
        return False, "force is not needed: the node is Ready, its kubelet will finish a graceful delete"
    if state == "Gone":
        return False, ("the Node object is gone (treated as confirmed dead): the pod garbage collector "
                       "force-deletes such pods itself; a force delete is reasonably safe")
    if state == "Unreadable":
        return None, "the node could not be read: confirm its state before forcing"
    if collected:
        return False, (f"force is not needed: the node is {state} with the out-of-service taint, so the pod "
                       "garbage collector force-deletes the pod as soon as a graceful delete marks it terminating")
    return True, (f"the node is {state}: a graceful delete cannot finish until its kubelet returns; "
                  "force delete only after confirming the machine is powered off or fenced")


def _risks(pod, snapshot, now, node, force, storage, collected) -> list:
    running = force and pod.node_name and not pod.is_terminal  # processes may outlive the object
    risks = _owner_risks(pod, snapshot, node) if running else []
    risks += _node_risks(node, force, collected)
    if running:
        risks += _volume_risks(pod, storage)
    if pod.finalizers:
        names = ", ".join(pod.finalizers)
        risks.append(Finding("FINALIZERS", "warning",
                             f"finalizers {names}: the pod object stays (Terminating) until they are removed; "
                             "even a force delete does not bypass them"))
    term = terminating(pod, now)
    if term is not None:
        risks.append(_terminating_risk(term, node))
    return risks


def _owner_risks(pod, snapshot, node) -> list:
    ref = pod.controller_ref
    kind = (ref or {}).get("kind")
    if kind == "StatefulSet":
        sev = "warning" if node.state is NodeReadiness.GONE else "error"
        return [Finding("STATEFULSET_IDENTITY", sev,
                        f"StatefulSet {ref.get('name')} guarantees at most one pod named {pod.name}: a force delete "
                        "lets a replacement with the same name and storage start while the old processes may still run")]
    if kind in REPLICA_OWNERS:
        owner = _owner(pod, snapshot)
        what = f"{kind} {ref.get('name')}" + (f" ({owner.via})" if owner.via else "")
        return [Finding("REPLICA_DUPLICATE", "warning",
                        f"{what} creates a replacement at once: a second copy may run alongside the old processes")]
    if not ref:
        return [Finding("NO_CONTROLLER", "info", "no controller: nothing recreates this pod after it is deleted")]
    return []


def _node_risks(node, force, collected) -> list:
    state, name, age = node.state.value, node.name, node.heartbeat_age_seconds
    if collected:
        return [Finding("NODE_OUT_OF_SERVICE", "warning",
                        f"node {name} is {state} with the out-of-service taint: the pod garbage collector "
                        "force-deletes its terminating pods, trusting the taint that the machine is shut down "
                        "(if it is not, their processes may still run)")]
    if state == "Ready" and force:
        from kubectl_safety.analysis.node_health import stale

        beat = (f"is Ready, but its last heartbeat is {_age(age)} old (a stale snapshot? --as-of TIME sets when the "
                "dump was taken)" if stale(age) else "is Ready and heartbeating")
        return [Finding("NODE_READY", "info",
                        f"node {name} {beat}: the kubelet will finish a graceful delete, force is not needed")]
    if state in ("NotReady", "Unknown"):
        beat = f"last heartbeat {_age(age)} ago" if age is not None else "no heartbeat recorded"
        then = ("its processes may still be running and cannot be confirmed stopped" if force else
                "a graceful delete stays Terminating until its kubelet comes back")
        return [Finding("NODE_PARTITIONED", "error", f"node {name} is {state}, {beat}: {then}")]
    if state == "Gone":
        return [Finding("NODE_GONE", "warning",
                        f"the Node object {name} does not exist: treated as confirmed dead (if its kubelet "
                        "comes back it re-registers, and anything still running there resumes)")]
    if state == "Unreadable":
        return [Finding("NODE_UNKNOWN", "warning", node.message)]
    return []


def _storage_index(storage, snapshot) -> dict:
    """Claims and volumes by (kind, namespace, name): those read for the delete, else the snapshot's."""
    index = {}
    for obj in storage or [o.raw for o in (*snapshot.pvcs, *snapshot.pvs)]:
        meta = obj.get("metadata") or {}
        index[(obj.get("kind"), meta.get("namespace") or "", meta.get("name"))] = obj
    return index


def _volume_risks(pod, storage) -> list:
    risks = []
    for v in pod.volumes:
        for key, label in UNSAFE_INLINE_TYPES.items():
            if key in v:
                risks.append(_unsafe(f"volume {v.get('name')} is {label}"))
        csi = v.get("csi")
        if csi and not csi.get("readOnly") and csi.get("driver") not in KNOWN_CSI_DRIVERS:
            risks.append(_unsafe(f"volume {v.get('name')} uses CSI driver {csi.get('driver')}, unknown to offer single-writer guarantees"))
        claim, modes = _claim(pod, v, storage)
        if claim:
            risks += _claim_risks(pod, claim, modes, storage)
    return risks


def _claim(pod, volume, storage) -> tuple:
    """(claim name, access modes or None if unknown) for a PVC or generic ephemeral volume."""
    if "persistentVolumeClaim" in volume:
        name = (volume["persistentVolumeClaim"] or {}).get("claimName")
        pvc = storage.get(("PersistentVolumeClaim", pod.namespace, name))
        return name, ((pvc.get("spec") or {}).get("accessModes") if pvc else None)
    if "ephemeral" in volume:
        name = f"{pod.name}-{volume.get('name')}"
        spec = (((volume["ephemeral"] or {}).get("volumeClaimTemplate") or {}).get("spec") or {})
        return name, spec.get("accessModes")
    return None, None


def _claim_risks(pod, claim, modes, storage) -> list:
    pvc = storage.get(("PersistentVolumeClaim", pod.namespace, claim)) or {}
    pv = storage.get(("PersistentVolume", "", (pvc.get("spec") or {}).get("volumeName")))
    kind = _pv_type(pv)
    risks = []
    if kind is not None and (kind in UNSAFE_INLINE_TYPES.values() or kind.startswith("CSI driver")):
        risks.append(_unsafe(f"claim {claim} is bound to {pv['metadata'].get('name')} ({kind})"))
    if modes is None:
        risks.append(Finding("RWO_VOLUME", "warning",
                             f"claim {claim} (access mode not read): if ReadWriteOnce, a replacement needs the same "
                             "volume; two writers are prevented only if the storage enforces single attachment"))
    elif any(m in SINGLE_WRITER_MODES for m in modes):
        backed = f", backed by {kind}" if kind else ""
        risks.append(Finding("RWO_VOLUME", "warning",
                             f"claim {claim} is {'/'.join(modes)}{backed}: a replacement needs the same volume; two "
                             "writers are prevented only if the storage enforces single attachment"))
    return risks


def _pv_type(pv):
    """A short label for a PersistentVolume's backend, or None when unknown."""
    if not pv:
        return None
    spec = pv.get("spec") or {}
    for key, label in UNSAFE_INLINE_TYPES.items():
        if key in spec:
            return label
    driver = (spec.get("csi") or {}).get("driver")
    if driver:
        return driver if driver in KNOWN_CSI_DRIVERS else f"CSI driver {driver}"
    return None


def _unsafe(what) -> Finding:
    return Finding("UNSAFE_VOLUME_TYPE", "error",
                   f"{what}: no real single-writer guarantee, so the old and the new pod may write concurrently and corrupt data")


def _terminating_risk(term, node) -> Finding:
    since, grace, overdue = term.for_seconds, term.grace_period_seconds, term.overdue_seconds
    text = f"already terminating for {_age(since)} (grace period {grace}s)" if since is not None else \
        f"already terminating (grace period {grace}s)"
    if overdue:
        why = "the node is not confirming" if node.state not in (NodeReadiness.READY, NodeReadiness.UNSCHEDULED) else \
            "the kubelet has not finished (finalizers, stuck volumes or a hung runtime?)"
        return Finding("ALREADY_TERMINATING", "warning", f"{text}, {_age(overdue)} past its deadline: {why}")
    return Finding("ALREADY_TERMINATING", "info", f"{text}: a new delete can only shorten the grace period")


def _age(seconds) -> str:
    from kubectl_safety.model.duration import human_duration

    return "?" if seconds is None else human_duration(seconds)
