"""Pod resource requests as the scheduler computes them (component-helpers ``PodRequests``)."""

from kubectl_safety.model.quantity import add, maximum

POD_LEVEL_RESOURCES = ("cpu", "memory")


def aggregate_container_requests(pod) -> dict:
    """max(sum of regular containers + sidecars, peak of the init sequence), per resource.

    An init container runs alongside the sidecars started before it; sidecars keep running
    with the regular containers.
    """
    reqs = {}
    for c in pod.containers:
        reqs = add(reqs, c.requests)
    sidecars, init_peak = {}, {}
    for c in pod.init_containers:
        if c.is_sidecar:
            reqs = add(reqs, c.requests)
            sidecars = add(sidecars, c.requests)
            use = dict(sidecars)
        else:
            use = add(c.requests, sidecars)
        init_peak = maximum(init_peak, use)
    return maximum(reqs, init_peak)


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
    """Requests the scheduler charges a node for: containers, pod-level override, overhead."""
    reqs = aggregate_container_requests(pod)
    if pod.pod_level:
        level_requests = pod.pod_level[0]
        for r in list(POD_LEVEL_RESOURCES) + [k for k in level_requests if k.startswith("hugepages-")]:
            if r in level_requests:
                reqs[r] = level_requests[r]
    return add(reqs, pod.overhead)


def pod_limits(pod) -> dict:
    """Effective limits (same aggregation as requests, limits instead)."""
    if pod.pod_level and pod.pod_level[1]:
        return dict(pod.pod_level[1])
    total = {}
    for c in pod.containers:
        total = add(total, c.limits)
    return total
