"""The scheduler's volume Filter plugins: VolumeRestrictions (ReadWriteOncePod), VolumeBinding
and VolumeZone, over the snapshot's PersistentVolumeClaims, PersistentVolumes and StorageClasses.

``volume_prefilter(pod, snapshot)`` is node-independent (VolumeBinding's PreFilter: missing claims,
unbound Immediate claims); ``read_write_once_pod_users`` is VolumeRestrictions' PreFilter state
(other pods using a ReadWriteOncePod claim; ``filters`` corrects it by a node's removed pods, as
preemption needs); ``volume_filter(pod, node, snapshot)`` is the
per-node part (a bound PV's node affinity and zone labels; a WaitForFirstConsumer claim needs a
matching available PV or a class that may provision on the node). Both return ``Failure``s.
A snapshot without any storage objects (an old dump) is not judged: ``snapshot.storage_known``.
Generic ephemeral volumes are not judged (their claim is created with the pod).
"""

from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.model.selectors import node_selector_term_matches

NO_PROVISIONER = "kubernetes.io/no-provisioner"
ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
               "topology.kubernetes.io/zone", "topology.kubernetes.io/region")
GA_LABEL = {"failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
            "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region"}


def claim_names(pod) -> list:
    """The PersistentVolumeClaims the pod's volumes name (generic ephemeral volumes left out)."""
    return [(v.get("persistentVolumeClaim") or {}).get("claimName") or ""
            for v in pod.volumes if "persistentVolumeClaim" in v]


def volume_prefilter(pod, snapshot) -> list:
    """Node-independent failures: every node fails the same way."""
    names = claim_names(pod)
    if not names or not snapshot.storage_known:
        return []
    for name in names:
        claim = snapshot.pvc(pod.namespace, name)
        if claim is None:
            return [Failure("VolumeBinding", "volume-claim-missing",
                            f'persistentvolumeclaim "{name}" not found', False)]
        if claim.deletion_timestamp is not None:
            return [Failure("VolumeBinding", "volume-claim-deleting",
                            f'persistentvolumeclaim "{name}" is being deleted', False)]
    unbound = [n for n in names if _binding(snapshot, snapshot.pvc(pod.namespace, n)) == "Immediate"]
    if unbound:
        return [Failure("VolumeBinding", "volume-unbound-immediate",
                        f"pod has unbound immediate PersistentVolumeClaims ({', '.join(unbound)})", False)]
    return []


def _binding(snapshot, claim) -> str:
    """'' if bound, else the binding mode of its class (no or an unknown class: Immediate)."""
    if claim.volume_name:
        return ""
    cls = snapshot.storage_class(claim.storage_class_name) if claim.storage_class_name else None
    return cls.binding_mode if cls is not None else "Immediate"


def read_write_once_pod_users(pod, snapshot) -> list:
    """VolumeRestrictions' PreFilter: the other scheduled pods using one of the pod's ReadWriteOncePod
    claims, as (pod, claim name). The Filter fails on every node while one of them remains."""
    names = claim_names(pod)
    if not names or not snapshot.storage_known:
        return []
    claims = [snapshot.pvc(pod.namespace, n) for n in names]
    single = {c.name for c in claims if c is not None and "ReadWriteOncePod" in c.access_modes}
    if not single:
        return []
    return [(other, used) for other in snapshot.pods_in(pod.namespace)
            if other.key != pod.key and not other.is_terminal and other.node_name
            for used in sorted(single.intersection(claim_names(other)))]


def read_write_once_pod_failure(users) -> list:
    if not users:
        return []
    other, claim = users[0]
    return [Failure("VolumeRestrictions", "volume-read-write-once-pod",
                    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
                    f"already in-use by another pod ({claim} used by {other.name})", True)]


def volume_filter(pod, node, snapshot) -> list:
    """VolumeBinding then VolumeZone on ``node`` (after ``volume_prefilter`` passed)."""
    names = claim_names(pod)
    if not names or not snapshot.storage_known:
        return []
    bound, waiting = [], []
    for name in names:
        claim = snapshot.pvc(pod.namespace, name)
        (bound if claim.volume_name else waiting).append(claim)
    for claim in bound:
        pv = snapshot.pv(claim.volume_name)
        if pv is None:
            return [Failure("VolumeBinding", "volume-missing",
                            "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s) "
                            f"(pvc {claim.name}, pv {claim.volume_name})", False)]
        if not _pv_matches_node(pv, node):
            return [Failure("VolumeBinding", "volume-node-affinity",
                            f"node(s) didn't match PersistentVolume's node affinity (pv {pv.name})", False)]
    for claim in waiting:
        if not _can_bind(claim, node, snapshot):
            return [Failure("VolumeBinding", "volume-unbindable",
                            "node(s) didn't find available persistent volumes to bind "
                            f"(claim {claim.name}, class {claim.storage_class_name})", False)]
    return _zone(bound, node, snapshot)


def _pv_matches_node(pv, node) -> bool:
    required = pv.node_affinity
    if required is None:
        return True
    return any(node_selector_term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])


def _can_bind(claim, node, snapshot) -> bool:
    """WaitForFirstConsumer: an available PV that fits, or dynamic provisioning allowed on the node."""
    cls = snapshot.storage_class(claim.storage_class_name)
    for pv in snapshot.pvs:
        if (pv.storage_class_name == claim.storage_class_name and not pv.claim_ref
                and pv.phase in ("", "Available") and pv.storage >= claim.requested_storage
                and set(claim.access_modes) <= set(pv.access_modes) and _pv_matches_node(pv, node)):
            return True
    if cls is None or cls.provisioner == NO_PROVISIONER:
        return False
    terms = cls.allowed_topologies
    return not terms or any(all(node.labels.get(e.get("key")) in (e.get("values") or [])
                                for e in t.get("matchLabelExpressions") or []) for t in terms)


def _zone(bound, node, snapshot) -> list:
    """VolumeZone: a bound PV's zone/region labels must match the node's (if it has any)."""
    if not any(k in node.labels for k in ZONE_LABELS):
        return []
    for claim in bound:
        pv = snapshot.pv(claim.volume_name)
        for key in ZONE_LABELS:
            if key not in pv.labels:
                continue
            value = node.labels.get(key, node.labels.get(GA_LABEL.get(key, key)))
            if value is None or value not in set(pv.labels[key].split("__")):
                return [Failure("VolumeZone", "volume-zone",
                                f"node(s) had no available volume zone (pv {pv.name} {key}={pv.labels[key]})", False)]
    return []
