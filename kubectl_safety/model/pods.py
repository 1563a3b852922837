"""Pods and their containers: requests and limits as the scheduler counts them."""

from types import MappingProxyType

from kubectl_safety.errors import InputError
from kubectl_safety.model.cached import cached
from kubectl_safety.model.constants import MIRROR_ANNOTATION
from kubectl_safety.model.meta import ApiObject, parse_time
from kubectl_safety.model.quantity import add, add_into, exact_resource_list, max_into, resource_list, rounded


DEFAULT_GRACE_SECONDS = 30


_NONE = MappingProxyType({})


def exact_container_resources(raw: dict) -> tuple:
    """(limits, requests) of a raw container at milli precision, as stored
    (``quantity.exact_resource_list``), for sums rounded once and exact comparisons; API defaulting
    (SetDefaults_Pod): a limit without a request defaults it. Read only: containers without
    resources share one empty mapping."""
    resources = raw.get("resources")
    if not resources:
        return _NONE, _NONE
    limits = exact_resource_list(resources.get("limits"))
    requests = exact_resource_list(resources.get("requests"))
    return limits, ({**limits, **requests} if limits else requests)


class Container:
    """One container (regular, init or sidecar) of a pod."""

    __slots__ = ("raw", "init", "exact_requests", "exact_limits")

    def __init__(self, raw: dict, init: bool = False):
        self.raw = raw
        self.init = init
        self.exact_limits, self.exact_requests = exact_container_resources(raw)

    @property
    def limits(self) -> dict:
        """In the scheduler's units (``quantity.rounded``)."""
        return rounded(self.exact_limits)

    @property
    def requests(self) -> dict:
        """In the scheduler's units, a limit without a request included."""
        return rounded(self.exact_requests)

    @property
    def name(self) -> str:
        return self.raw.get("name", "")

    @property
    def is_sidecar(self) -> bool:
        return self.init and self.raw.get("restartPolicy") == "Always"

    @property
    def pre_stop(self):
        return (self.raw.get("lifecycle") or {}).get("preStop")

    def probe(self, kind: str):
        return self.raw.get(kind)


POD_LEVEL_RESOURCES = ("cpu", "memory")  # and hugepages-* (IsSupportedPodLevelResource)


def aggregate_requests(containers, init_containers, running=None, requests=lambda c: c.requests) -> dict:
    """component-helpers ``AggregateContainerRequests``: max(sum of regular containers and
    sidecars, peak of the init sequence), per resource. An init container runs alongside the
    sidecars started before it. ``requests(c)``: a container's requests; ``running(c)``: those
    of a regular container or sidecar (default ``requests``)."""
    running = running or requests
    reqs = {}
    for c in containers:
        add_into(reqs, running(c))
    if not init_containers:
        return reqs
    sidecars, init_peak = {}, {}
    for c in init_containers:
        if c.is_sidecar:
            own = running(c)
            add_into(reqs, own)
            add_into(sidecars, own)
            use = sidecars
        else:
            use = add(requests(c), sidecars)
        max_into(init_peak, use)
    return max_into(reqs, init_peak)


class Pod(ApiObject):
    kind = "Pod"

    def _parsed(self, build):
        """Parse resources lazily; a bad quantity names the pod it belongs to."""
        try:
            return build()
        except InputError as e:
            raise InputError(f"Pod {self.ref}: {e}") from None

    @cached
    def containers(self) -> tuple:
        raw = self.spec.get("containers")
        return self._parsed(lambda: tuple([Container(c) for c in raw])) if raw else ()

    @cached
    def init_containers(self) -> tuple:
        raw = self.spec.get("initContainers")
        return self._parsed(lambda: tuple([Container(c, init=True) for c in raw])) if raw else ()

    @cached
    def pod_level(self):
        """Pod-level ``spec.resources`` (PodLevelResources) as (requests, limits) or None, with
        the API server's ``defaultPodRequests`` applied (a no-op for a stored pod): when pod-level
        limits are set, a missing cpu or memory request defaults to the containers' aggregate
        request, and only a resource no container requests defaults to the pod-level limit."""
        res = self.spec.get("resources")
        if not res:
            return None
        limits = self._parsed(lambda: resource_list(res.get("limits")))
        requests = self._parsed(lambda: resource_list(res.get("requests")))
        if limits:
            aggregate = aggregate_requests(self.containers, self.init_containers)
            defaults = {r: v for r, v in aggregate.items() if r in POD_LEVEL_RESOURCES}
            defaults.update((r, v) for r, v in limits.items()
                            if r not in defaults and (r in POD_LEVEL_RESOURCES or r.startswith("hugepages-")))
            requests = {**defaults, **requests}
        return requests, limits

    @cached
    def overhead(self) -> dict:
        return self._parsed(lambda: resource_list(self.spec.get("overhead")))

    @cached
    def node_name(self) -> str:
        return self.spec.get("nodeName") or ""

    @cached
    def phase(self) -> str:
        return self.status.get("phase") or "Pending"

    @cached
    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def is_terminating(self) -> bool:
        return self.deletion_timestamp is not None

    @property
    def is_mirror(self) -> bool:
        return MIRROR_ANNOTATION in self.annotations

    @cached
    def is_ready(self) -> bool:
        return self.condition("Ready") == "True"

    def condition(self, kind: str):
        for c in self.status.get("conditions") or []:
            if c.get("type") == kind:
                return c.get("status")
        return None

    def condition_obj(self, kind: str):
        for c in self.status.get("conditions") or []:
            if c.get("type") == kind:
                return c
        return None

    @property
    def priority(self):
        """``spec.priority`` as admitted, or None if unset (not yet admitted / a template)."""
        value = self.spec.get("priority")
        return None if value is None else int(value)

    @property
    def priority_value(self) -> int:
        """``corev1helpers.PodPriority``: spec.priority or 0."""
        return self.priority or 0

    @property
    def priority_class_name(self) -> str:
        return self.spec.get("priorityClassName") or ""

    @property
    def preemption_policy(self):
        return self.spec.get("preemptionPolicy")

    @property
    def termination_grace_period(self) -> int:
        value = self.spec.get("terminationGracePeriodSeconds")
        return DEFAULT_GRACE_SECONDS if value is None else int(value)

    @property
    def deletion_grace_period(self):
        value = self.meta.get("deletionGracePeriodSeconds")
        return None if value is None else int(value)

    @cached
    def start_time(self):
        return parse_time(self.status.get("startTime"))

    @property
    def tolerations(self) -> list:
        return self.spec.get("tolerations") or []

    @property
    def node_selector(self) -> dict:
        return self.spec.get("nodeSelector") or {}

    @property
    def affinity(self) -> dict:
        return self.spec.get("affinity") or {}

    @property
    def required_node_affinity(self):
        return (self.affinity.get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")

    @property
    def topology_spread_constraints(self) -> list:
        return self.spec.get("topologySpreadConstraints") or []

    @property
    def volumes(self) -> list:
        return self.spec.get("volumes") or []

    @property
    def resource_claims(self) -> list:
        """``spec.resourceClaims``: the pod's DRA claims (by claim or template name)."""
        return self.spec.get("resourceClaims") or []

    @property
    def resource_claim_statuses(self) -> dict:
        """{pod claim name: generated ResourceClaim name or None}, from ``status.resourceClaimStatuses``."""
        return {s.get("name"): s.get("resourceClaimName") for s in self.status.get("resourceClaimStatuses") or ()}

    @property
    def nominated_node_name(self) -> str:
        return self.status.get("nominatedNodeName") or ""

    @property
    def qos_status(self):
        return self.status.get("qosClass")

    @property
    def finalizers(self) -> list:
        return self.meta.get("finalizers") or []

    @cached
    def host_ports(self) -> list:
        """(protocol, hostIP, hostPort) of containers and sidecars (the NodePorts filter)."""
        out = []
        spec = self.spec  # the raw containers: a pod's ports are read for every pod of the cluster
        sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
        for c in (spec.get("containers") or []) + sidecars:
            for p in c.get("ports") or []:
                if p.get("hostPort"):
                    out.append((p.get("protocol") or "TCP", p.get("hostIP") or "0.0.0.0", int(p["hostPort"])))
        return out

    @cached
    def key(self) -> tuple:
        return (self.namespace, self.name)
