"""Node-pressure behaviour: OOM score adjustment and the kubelet's memory-pressure eviction order."""

from kubectl_safety.analysis.explanations.pod import ContainerOom, OomScores
from kubectl_safety.analysis.priority import effective_value
from kubectl_safety.analysis.qos import qos_class
from kubectl_safety.analysis.resources import aggregate_container_requests, pod_level_requests_set, pod_level_set
from kubectl_safety.model.constants import SYSTEM_CRITICAL

GUARANTEED_ADJ = -997
BEST_EFFORT_ADJ = 1000


def is_critical(pod) -> bool:
    """``IsCriticalPod``: static/mirror pod or priority >= system-cluster-critical."""
    return pod.is_mirror or pod.annotations.get("kubernetes.io/config.source", "api") != "api" \
        or pod.priority_value >= SYSTEM_CRITICAL


def _div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _unrequested_share(pod) -> int:
    """Pod-level memory request not requested by the containers (init peak and sidecars
    included), split evenly over every container and init container (``remainingPodMemReqPerContainer``)."""
    level = pod.pod_level[0] if pod.pod_level and pod_level_requests_set(pod) else {}
    if not level.get("memory"):
        return 0
    spare = level["memory"] - aggregate_container_requests(pod, use_status=False).get("memory", 0)
    return _div(spare, len(pod.containers) + len(pod.init_containers))


def container_oom_score_adj(pod, container, memory_capacity: int) -> int:
    """``GetContainerOOMScoreAdjust`` (capacity = the node's memory capacity)."""
    if is_critical(pod) and pod.priority_class_name == "system-node-critical":
        return GUARANTEED_ADJ
    qos = qos_class(pod)
    if qos == "Guaranteed":
        return GUARANTEED_ADJ
    if qos == "BestEffort":
        return BEST_EFFORT_ADJ
    if not memory_capacity:
        return 999
    share = _unrequested_share(pod)
    adj = 1000 - _div(1000 * (container.requests.get("memory", 0) + share), memory_capacity)
    if container.is_sidecar and pod.containers:
        smallest = min(c.requests.get("memory", 0) for c in pod.containers) + share
        adj = min(adj, 1000 - _div(1000 * smallest, memory_capacity))
    if adj < 1000 + GUARANTEED_ADJ:
        adj = 1000 + GUARANTEED_ADJ
    if adj == 1000:
        adj = 999
    return adj


def oom_scores(pod, node) -> OomScores:
    """Per-container oom_score_adj and the pod's highest (its first container to be OOM-killed)."""
    capacity = (node.capacity.get("memory") if node else 0) or 0
    containers = tuple(ContainerOom(c.name, container_oom_score_adj(pod, c, capacity))
                       for c in list(pod.init_containers) + list(pod.containers) if not c.init or c.is_sidecar)
    return OomScores(max((c.oom_score_adj for c in containers), default=None), containers, capacity or None)


def memory_request(pod) -> int:
    """The memory request the eviction manager compares usage with (``GetResourceRequestQuantity``):
    pod-level requests when pod-level resources are set, else the containers' effective request
    (init peak, sidecars); plus the pod overhead when that is not zero."""
    if pod_level_set(pod):
        request = pod.pod_level[0].get("memory", 0)
    else:
        request = aggregate_container_requests(pod, use_status=False).get("memory", 0)
    return request + pod.overhead.get("memory", 0) if request else 0


def memory_pressure_order(pods, snapshot, usage=None, keep=()) -> list:
    """Pods in the order ``rankMemoryPressure`` evicts them, each with its rank reason (``keep``: keys of
    pods ranked even though terminal: an evicted pod ranked as it was).

    ``usage`` maps pod key -> working-set bytes; a pod missing from it has no statistics and
    ranks first, as in the kubelet. Without ``usage`` at all, each pod is assumed to use its
    memory request, so only pods without one (usage > 0 = request) count as exceeding it.
    Critical pods are listed last: the kubelet never evicts them.
    """
    rows = []
    for pod in pods:
        if pod.is_terminal and pod.key not in keep:
            continue
        req = memory_request(pod)
        known = usage is not None and pod.key in usage
        used = usage[pod.key] if known else None
        exceeds = (used > req) if known else req == 0
        over = (used - req) if known else 0
        no_stats = usage is not None and not known
        rows.append((pod, req, used, exceeds, over, effective_value(pod, snapshot), no_stats))
    evictable = [r for r in rows if not is_critical(r[0])]
    critical = [r for r in rows if is_critical(r[0])]
    evictable.sort(key=lambda r: (not r[6], not r[3] and not r[6], r[5], -r[4], r[0].namespace, r[0].name))
    out = []
    for rank, (pod, req, used, exceeds, over, prio, no_stats) in enumerate(evictable + critical, start=1):
        if is_critical(pod):
            why = "critical pod: never evicted by the kubelet"
        elif no_stats:
            why = f"no usage statistics: the kubelet ranks such pods first; then priority {prio}"
        elif exceeds:
            why = ("usage above its memory request" if used is not None
                   else "no memory request, so any usage exceeds it") + f"; then priority {prio}"
        else:
            why = f"within its memory request{'' if used is not None else ' (assumed: usage unknown)'}; then priority {prio}"
        out.append({"rank": None if is_critical(pod) else rank, "pod": pod, "memoryRequest": req,
                    "usage": used, "exceedsRequest": exceeds, "priority": prio, "reason": why})
    return out
