"""Pod resource requests as the scheduler computes them (component-helpers ``PodRequests``)."""

from kubectl_safety.model.pods import POD_LEVEL_RESOURCES, aggregate_requests, exact_container_resources
from kubectl_safety.model.quantity import add, add_into, exact, exact_resource_list, maximum, rounded


def _resize_infeasible(pod) -> bool:
    return any(c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible"
               for c in pod.status.get("conditions") or [])


def _effective(pod, spec: dict, status) -> dict:
    """``determineEffectiveRequests``: while a resize is in flight the scheduler charges the larger
    of the spec, the actuated (status.resources) and the allocated requests; an infeasible
    resize keeps the actuated and allocated ones."""
    if not status or status.get("resources") is None:
        return spec
    actuated = exact_resource_list((status.get("resources") or {}).get("requests"))
    allocated = exact_resource_list(status.get("allocatedResources"))
    base = {} if _resize_infeasible(pod) else spec
    return maximum(maximum(base, actuated), allocated)


def _statuses(pod) -> dict:
    """The container statuses that report resources (a resize), by container name."""
    status, out = pod.status, {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for s in status.get(key) or ():
            if s.get("resources") is not None:
                out[s.get("name")] = s
    return out


def aggregate_container_requests(pod, use_status=True) -> dict:
    """max(sum of regular containers + sidecars, peak of the init sequence), per resource
    (``model.pods.aggregate_requests``), summed exactly and rounded once. ``use_status``:
    resized containers and sidecars count as the scheduler charges them (``UseStatusResources``)."""
    return rounded(_exact_aggregate(pod, use_status))


def _exact_aggregate(pod, use_status) -> dict:
    statuses = _statuses(pod) if use_status else {}
    if not statuses and not pod.init_containers:  # the common pod: its containers' requests, summed
        total = {}
        for c in pod.containers:
            add_into(total, c.exact_requests)
        return total
    return aggregate_requests(pod.containers, pod.init_containers,
                              lambda c: _effective(pod, c.exact_requests, statuses.get(c.name)),
                              lambda c: c.exact_requests)


def _containers_sum(containers) -> dict:
    """The exact requests of raw ``containers`` summed, without building ``Container`` objects:
    the common pod (no init containers, pod-level resources, overhead or resize)."""
    total = {}
    for c in containers:
        add_into(total, exact_container_resources(c)[1])
    return total


def pod_level_set(pod) -> bool:
    """``IsPodLevelResourcesSet``: pod-level requests or limits name a supported resource."""
    if not pod.pod_level:
        return False
    return any(r in POD_LEVEL_RESOURCES or r.startswith("hugepages-") for part in pod.pod_level for r in part)


def pod_level_requests_set(pod) -> bool:
    """``IsPodLevelRequestsSet``: pod-level requests name a supported resource."""
    return bool(pod.pod_level) and any(r in POD_LEVEL_RESOURCES or r.startswith("hugepages-")
                                       for r in pod.pod_level[0])


def pod_requests(pod) -> dict:
    """Requests the scheduler charges a node for: containers, pod-level override, overhead,
    added exactly and rounded up once (as the scheduler reads ``MilliValue()`` of the sum)."""
    spec = pod.spec
    if not (spec.get("initContainers") or spec.get("resources") or spec.get("overhead") or _statuses(pod)):
        return rounded(pod._parsed(lambda: _containers_sum(spec.get("containers") or ())))
    reqs = _exact_aggregate(pod, use_status=True)
    if pod.pod_level:
        level_requests = exact(pod.pod_level[0])
        status = pod.status
        effective = None
        if status.get("resources") is not None:  # an in-place pod-level resize
            effective = _effective(pod, level_requests, status)
        for r in [k for k in level_requests if k in POD_LEVEL_RESOURCES or k.startswith("hugepages-")]:
            reqs[r] = level_requests[r] if effective is None else effective.get(r, 0)
    overhead = pod.spec.get("overhead")
    return rounded(add(reqs, exact_resource_list(overhead)) if overhead else reqs)


def requests_key(pod):
    """All ``pod_requests`` reads of the pod, as a string (equal strings, equal requests), when that
    is its containers' resources and sidecars' restartPolicy only; None with pod-level resources,
    overhead or a resize (or any container status that has resources)."""
    spec = pod.spec
    if spec.get("resources") or spec.get("overhead"):
        return None
    status = pod.status
    for key in ("containerStatuses", "initContainerStatuses"):
        for s in status.get(key) or ():
            if "resources" in s:
                return None
    containers = [c.get("resources") for c in spec.get("containers") or ()]
    init = spec.get("initContainers")
    if not init:  # the common pod; a distinct shape of key from the one with init containers
        return repr(containers)
    return repr((containers, [(c.get("resources"), c.get("restartPolicy")) for c in init]))

