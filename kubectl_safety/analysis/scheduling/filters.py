"""Does a pod fit a node? kube-scheduler's default-profile Filter plugins, reproduced: the one
implementation drain capacity, the preemption preview and rebalance all use.

``filter_node(pod, node, snapshot, state=None)`` returns the ``Failure``s of every plugin, in the
default profile's order ([] means the pod fits). ``NodeState`` is one node's pods, requested sums
and host ports; pass a modified copy to ask "would it fit if these pods were gone / added" (only that
node may differ from the snapshot: cluster-wide counts are computed once per (pod, snapshot) and
corrected by the node's difference, like the scheduler's PreFilter AddPod/RemovePod). Reuse one Pod
object for all nodes (the PreFilter state is cached per Pod object and snapshot); a pod that is
itself in the snapshot is asked with ``snapshot.without_pods([pod.key])``.

Each plugin's rules, what is modelled and what is not: docs/scheduling-filters.md.
"""

from kubectl_safety.analysis.scheduling.dra import dra_filter, dra_known
from kubectl_safety.analysis.scheduling.node_state import base_state
from kubectl_safety.analysis.scheduling.plugins import fit_failures, node_failures
from kubectl_safety.analysis.scheduling.pod_terms import existing_anti_terms, inter_pod_affinity_filter, required_terms
from kubectl_safety.analysis.scheduling.prefilter import NodeDelta, prefilter
from kubectl_safety.analysis.scheduling.spread import spread_filter
from kubectl_safety.analysis.scheduling.volume_limits import counts_volumes, volume_limits_filter
from kubectl_safety.analysis.scheduling.volumes import claim_names, read_write_once_pod_failure, volume_filter
from kubectl_safety.analysis.topology import is_hard


def filter_node(pod, node, snapshot, state=None, static=None, first=False) -> list:
    """The Filter failures of ``pod`` on ``node`` ([] = fits), all plugins evaluated, in order:
    ``node_failures`` (``static``, when known) then (unless the pod is gated) ``pod_failures``.
    ``first``: only the first failure is asked for (``pod_failures`` is skipped when one of
    ``node_failures`` fails)."""
    failures = node_failures(pod, node) if static is None else static
    if failures and failures[0].plugin == "SchedulingGates":
        return failures
    devices = prefilter(pod, snapshot).devices
    if devices is not None and devices.failure is not None and not prefilter(pod, snapshot).volumes:
        return [devices.failure]  # a PreFilter's rejection is every node's status
    if first and failures:
        return failures
    return failures + pod_failures(pod, node, snapshot, state)


def pod_failures(pod, node, snapshot, state=None) -> list:
    """The plugins that read the pods too, in order: NodePorts, NodeResourcesFit, the volume plugins
    (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone), PodTopologySpread,
    InterPodAffinity, DynamicResources (``filter_node`` runs them after ``node_failures``)."""
    if state is None:
        state = base_state(node, snapshot)
    pre = prefilter(pod, snapshot)
    failures = fit_failures(pod, node, state, pre)
    if pre.volumes:
        failures.extend(pre.volumes)
    else:
        failures.extend(read_write_once_pod_failure(
            [(u, c) for u, c in pre.rwop_users if not (state.changed and u.node_name == node.name
                                                       and u.key not in state.pods)]))
        if snapshot.storage_known:
            failures.extend(volume_limits_filter(pod, node, snapshot, state))
        failures.extend(volume_filter(pod, node, snapshot))
    delta = NodeDelta(pre, node, snapshot, state) if state.changed else None
    failures.extend(spread_filter(pre, node, delta))
    failures.extend(inter_pod_affinity_filter(pre, node, delta))
    if pre.devices is not None:
        failures.extend([pre.devices.failure] if pre.devices.failure else dra_filter(pre.devices, node, snapshot, state))
    return failures


def spread_rejects(pod, node, snapshot) -> bool:
    """Whether PodTopologySpread's Filter fails ``pod`` on ``node`` with the node's pods as the
    snapshot has them: a failure found without reading them (the first one may come earlier)."""
    pre = prefilter(pod, snapshot)
    return bool(pre.spread) and bool(spread_filter(pre, node, None))


def node_decides_alone(pod, snapshot) -> bool:
    """Whether only its node decides the pod's fit (``fit_failures`` says all ``pod_failures``
    would): no claims (storage known), no volumes a CSINode limits, no device claims (DRA known), no
    DoNotSchedule spread or required pod (anti-)affinity, and no existing pod's required
    anti-affinity selects it."""
    return not ((claim_names(pod) and snapshot.storage_known)
                or (snapshot.csi_nodes and counts_volumes(pod) and snapshot.storage_known)
                or (pod.resource_claims and dra_known(snapshot))
                or required_terms(pod, "podAffinity") or required_terms(pod, "podAntiAffinity")
                or any(is_hard(c) for c in pod.topology_spread_constraints)
                or any(t.matches(pod) for t in existing_anti_terms(snapshot, pod.namespace)))
