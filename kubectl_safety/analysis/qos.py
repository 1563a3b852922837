"""QoS class (``ComputePodQOS``) with the reason for each container."""

from kubectl_safety.analysis.explanations.qos import ContainerQos, QosClass, QosExplanation
from kubectl_safety.model.quantity import parse_quantity

QOS_RESOURCES = ("cpu", "memory")


def _positive(resources: dict) -> dict:
    return {r: v for r, v in resources.items() if r in QOS_RESOURCES and v > 0}


def container_verdict(container) -> tuple:
    """(class this container alone would give, plain reason)."""
    req, lim = _positive(container.exact_requests), _positive(container.exact_limits)
    if not req and not lim:
        return "BestEffort", "no cpu or memory requests or limits"
    missing = [r for r in QOS_RESOURCES if r not in lim]
    if missing:
        return "Burstable", f"no {' or '.join(missing)} limit"
    unequal = [r for r in QOS_RESOURCES if req.get(r) != lim.get(r)]
    if unequal:
        return "Burstable", f"{' and '.join(unequal)} request differs from limit"
    explicit = container.raw.get("resources", {}).get("requests") or {}
    defaulted = [r for r in QOS_RESOURCES if r not in explicit]
    note = f" ({' and '.join(defaulted)} request defaulted to limit)" if defaulted else ""
    return "Guaranteed", "cpu and memory limits set and equal to requests" + note


def compute_qos(pod) -> str:
    """The QoS class from the spec, exactly as ``ComputePodQOS`` (ignoring status.qosClass)."""
    requests, limits, guaranteed = {}, {}, True
    if pod.pod_level is not None:
        requests, limits = _positive(pod.pod_level[0]), _positive(pod.pod_level[1])
        guaranteed = all(r in limits for r in QOS_RESOURCES)
    else:
        for c in list(pod.containers) + list(pod.init_containers):
            req, lim = _positive(c.exact_requests), _positive(c.exact_limits)  # compared exactly
            for r, v in req.items():
                requests[r] = requests.get(r, 0) + v
            for r, v in lim.items():
                limits[r] = limits.get(r, 0) + v
            if not all(r in lim for r in QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and len(requests) == len(limits) and all(limits.get(r) == v for r, v in requests.items()) \
            and (pod.pod_level is not None or _equal_as_held(pod)):
        return "Guaranteed"
    return "Burstable"


def _equal_as_held(pod) -> bool:
    """Requests equal limits in the quantities as the object holds them: the model reads amounts at the
    milli precision an API server stores, but a dump never stored by one may hold finer ones."""
    requests, limits = {}, {}
    for c in list(pod.containers) + list(pod.init_containers):
        resources = c.raw.get("resources") or {}
        lim = {r: parse_quantity(v) for r, v in (resources.get("limits") or {}).items() if r in QOS_RESOURCES}
        req = {**lim, **{r: parse_quantity(v) for r, v in (resources.get("requests") or {}).items()
                         if r in QOS_RESOURCES}}
        for total, part in ((requests, req), (limits, lim)):
            for r, v in part.items():
                if v > 0:
                    total[r] = total.get(r, 0) + v
    return requests == limits


def qos_class(pod) -> str:
    """``GetPodQOS``: status.qosClass when the API server set it (immutable), else computed."""
    return pod.qos_status or compute_qos(pod)


def explain_qos(pod) -> QosExplanation:
    computed = compute_qos(pod)
    containers = []
    for c in list(pod.init_containers) + list(pod.containers):
        verdict, reason = container_verdict(c)
        containers.append(ContainerQos(c.name, c.init, QosClass(verdict), reason))
    if pod.pod_level is not None:
        reason = "pod-level resources (spec.resources) decide the class"
    elif computed == "BestEffort":
        reason = "no container sets a cpu or memory request or limit"
    elif computed == "Guaranteed":
        reason = "every container has cpu and memory limits equal to its requests"
    else:
        reason = "some container has requests or limits but not equal cpu and memory limits"
    return QosExplanation(pod.qos_status or computed, QosClass(computed), pod.qos_status,
                          pod.qos_status in (None, computed), reason, tuple(containers))
