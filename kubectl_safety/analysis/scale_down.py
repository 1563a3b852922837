"""Which pods a ReplicaSet controller removes when its count goes down (pure): upstream's ranking."""

import math
import re

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
PHASES = {"Pending": 0, "Unknown": 1, "Running": 2}  # upstream's podPhaseToOrdinal; any other phase: 0
_COST = re.compile(r"-?[1-9][0-9]*|0")


def is_active(pod) -> bool:
    """upstream's IsPodActive: neither terminal nor being deleted."""
    return not pod.is_terminal and not pod.is_terminating


def ahead_of(first, others, related, now) -> list:
    """[(pod, why)] of ``others`` that their ReplicaSet's controller may delete before one of ``first``
    (ranked ahead, or alike: upstream sorts unstably) when scaled down by ``len(first)``: upstream's
    ``getPodsToDelete`` (pkg/controller/replicaset) sorting ``first + others`` by ``ActivePodsWithRanks.Less``
    (pkg/controller/controller_utils.go), with PodDeletionCost and LogarithmicScaleDown (both GA):

    1. unassigned < assigned; 2. Pending < Unknown < Running; 3. not Ready < Ready;
    4. lower pod-deletion-cost; 5. more active pods of ``related`` (the pods of every ReplicaSet of
    its Deployment) on the same node; 6. both Ready: Ready more recently (base-2 logarithm of the time
    since ``now``, then UID); 7. more container restarts, then sidecar restarts; 8. created more recently
    (logarithm, then UID)."""
    on_node = {}
    for p in related:
        if is_active(p):
            on_node[p.node_name] = on_node.get(p.node_name, 0) + 1
    ranks = {p.key: on_node.get(p.node_name, 0) for p in list(first) + list(others)}
    return [(o, _why(o)) for o in others if any(not less(f, o, ranks, now) for f in first)]


def _why(pod) -> str:
    if not pod.node_name:
        return "not scheduled"
    if pod.phase != "Running":
        return pod.phase
    if not pod.is_ready:
        return "not Ready"
    return f"{DELETION_COST} {deletion_cost(pod)}"


def less(a, b, ranks, now) -> bool:
    """``ActivePodsWithRanks.Less``: ``a`` is deleted before ``b``; ``ranks``: {pod key: rank (rule 5)}."""
    if a.node_name != b.node_name and not (a.node_name and b.node_name):
        return not a.node_name
    if PHASES.get(a.phase, 0) != PHASES.get(b.phase, 0):
        return PHASES.get(a.phase, 0) < PHASES.get(b.phase, 0)
    if a.is_ready != b.is_ready:
        return not a.is_ready
    if deletion_cost(a) != deletion_cost(b):
        return deletion_cost(a) < deletion_cost(b)
    if ranks[a.key] != ranks[b.key]:
        return ranks[a.key] > ranks[b.key]
    if a.is_ready and b.is_ready:
        ta, tb = _ready_since(a), _ready_since(b)
        if ta != tb:
            return _newer(a, b, ta, tb, now)
    ra, rb = restarts(a), restarts(b)
    if ra != rb:
        return ra > rb
    ca, cb = a.creation_timestamp, b.creation_timestamp
    if ca != cb:
        return _newer(a, b, ca, cb, now)
    return False


def deletion_cost(pod) -> int:
    """The pod's pod-deletion-cost (0 when absent or not a valid int32, as upstream)."""
    text = pod.annotations.get(DELETION_COST)
    if text is None or not _COST.fullmatch(text):
        return 0
    value = int(text)
    return value if -2 ** 31 <= value < 2 ** 31 else 0


def restarts(pod) -> tuple:
    """(most restarts of a regular container, most restarts of a sidecar (restartPolicy Always init
    container)): upstream's maxContainerRestarts."""
    sidecars = {c.get("name") for c in pod.spec.get("initContainers") or () if c.get("restartPolicy") == "Always"}
    regular = max((int(c.get("restartCount") or 0) for c in pod.status.get("containerStatuses") or ()), default=0)
    side = max((int(c.get("restartCount") or 0) for c in pod.status.get("initContainerStatuses") or ()
                if c.get("name") in sidecars), default=0)
    return regular, side


def _ready_since(pod):
    from kubectl_safety.model.meta import parse_time

    c = pod.condition_obj("Ready") or {}
    return parse_time(c.get("lastTransitionTime")) if c.get("status") == "True" else None


def _newer(a, b, ta, tb, now) -> bool:
    """``a`` before ``b`` by these times: a missing one first, then the logarithmic rank of the time since
    (ties by UID), as upstream with LogarithmicScaleDown."""
    if ta is None or tb is None:
        return ta is None
    if now is None:
        return ta > tb
    diff = _log_rank(now, ta) - _log_rank(now, tb)
    return a.uid < b.uid if diff == 0 else diff < 0


def _log_rank(now, t) -> int:
    nanoseconds = (now - t).total_seconds() * 1e9
    return int(math.log2(nanoseconds)) if nanoseconds > 0 else -1
