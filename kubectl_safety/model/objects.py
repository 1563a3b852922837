"""Thin, read-only views over API-shaped camelCase dicts (as the API server returns them).

Each view keeps ``raw`` (the dict, never modified) and derives fields lazily, so that a large
snapshot costs little more than the JSON it came from.
"""

from dataclasses import dataclass
from datetime import datetime, timezone
from types import MappingProxyType

from kubectl_safety.errors import InputError
from kubectl_safety.model.cached import cached
from kubectl_safety.model.constants import MIRROR_ANNOTATION
from kubectl_safety.model.quantity import add, add_into, exact_resource_list, max_into, resource_list, rounded
from kubectl_safety.model.selectors import LabelSelector

DEFAULT_GRACE_SECONDS = 30


def parse_time(value):
    """RFC 3339 text (or a YAML-loaded datetime) -> aware UTC datetime; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"invalid timestamp {value!r}") from None


class ApiObject:
    """Common metadata accessors (cached: a snapshot's objects are never changed in place)."""

    kind = ""

    def __init__(self, raw: dict):
        self.raw = raw

    @cached
    def meta(self) -> dict:
        return self.raw.get("metadata") or {}

    @cached
    def spec(self) -> dict:
        return self.raw.get("spec") or {}

    @cached
    def status(self) -> dict:
        return self.raw.get("status") or {}

    @cached
    def name(self) -> str:
        return self.meta.get("name", "")

    @cached
    def namespace(self) -> str:
        return self.meta.get("namespace") or ""

    @cached
    def uid(self) -> str:
        return self.meta.get("uid") or ""

    @cached
    def labels(self) -> dict:
        return self.meta.get("labels") or {}

    @cached
    def annotations(self) -> dict:
        return self.meta.get("annotations") or {}

    @property
    def owner_references(self) -> list:
        return self.meta.get("ownerReferences") or []

    @cached
    def controller_ref(self):
        for ref in self.owner_references:
            if ref.get("controller"):
                return ref
        return None

    @cached
    def creation_timestamp(self):
        return parse_time(self.meta.get("creationTimestamp"))

    @cached
    def deletion_timestamp(self):
        return parse_time(self.meta.get("deletionTimestamp"))

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def __repr__(self):
        return f"<{type(self).__name__} {self.ref}>"


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


class Node(ApiObject):
    kind = "Node"

    @property
    def unschedulable(self) -> bool:
        return bool(self.spec.get("unschedulable"))

    @property
    def taints(self) -> list:
        return self.spec.get("taints") or []

    @cached
    def allocatable(self) -> dict:
        return resource_list(self.status.get("allocatable") or self.status.get("capacity"))

    @cached
    def capacity(self) -> dict:
        return resource_list(self.status.get("capacity") or self.status.get("allocatable"))

    def condition(self, kind: str):
        for c in self.status.get("conditions") or []:
            if c.get("type") == kind:
                return c
        return None

    @property
    def ready_status(self) -> str:
        """"True", "False" or "Unknown" (no Ready condition reads as Unknown)."""
        c = self.condition("Ready")
        return (c or {}).get("status") or "Unknown"

    @property
    def last_heartbeat(self):
        c = self.condition("Ready")
        return parse_time((c or {}).get("lastHeartbeatTime")) if c else None


class Lease(ApiObject):
    """A coordination.k8s.io Lease: a node's (``NODE_LEASE_NAMESPACE``, named after the node) is renewed
    by its kubelet, its heartbeat as the node lifecycle controller reads it."""

    kind = "Lease"

    @property
    def renew_time(self):
        return parse_time(self.spec.get("renewTime"))


class PodDisruptionBudget(ApiObject):
    kind = "PodDisruptionBudget"

    @cached
    def selector(self):
        return LabelSelector.parse(self.spec.get("selector"))

    @property
    def min_available(self):
        return self.spec.get("minAvailable")

    @property
    def max_unavailable(self):
        return self.spec.get("maxUnavailable")

    @property
    def unhealthy_pod_eviction_policy(self) -> str:
        return self.spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"

    def status_int(self, field: str):
        value = self.status.get(field)
        return None if value is None else int(value)

    @property
    def disruptions_allowed(self) -> int:
        return self.status_int("disruptionsAllowed") or 0

    @property
    def disrupted_pods(self) -> dict:
        return self.status.get("disruptedPods") or {}

    @property
    def generation(self):
        return self.meta.get("generation")

    @property
    def status_is_current(self) -> bool:
        observed = self.status.get("observedGeneration")
        return observed is not None and (self.generation is None or observed >= self.generation)

    def selects(self, pod) -> bool:
        """policy/v1 Eviction semantics: same namespace; nil selects nothing, ``{}`` everything."""
        return (self.selector is not None and pod.namespace == self.namespace
                and self.selector.matches(pod.labels))


class PriorityClass(ApiObject):
    kind = "PriorityClass"

    @property
    def value(self) -> int:
        return int(self.raw.get("value") or 0)

    @property
    def global_default(self) -> bool:
        return bool(self.raw.get("globalDefault"))

    @property
    def preemption_policy(self) -> str:
        return self.raw.get("preemptionPolicy") or "PreemptLowerPriority"


class LimitRange(ApiObject):
    """Per-namespace defaults and bounds LimitRanger admission applies to pods' containers."""

    kind = "LimitRange"

    @property
    def limits(self) -> list:
        return self.spec.get("limits") or []


class RuntimeClass(ApiObject):
    """A container runtime configuration: the overhead and scheduling admission adds to its pods."""

    kind = "RuntimeClass"

    @property
    def overhead(self) -> dict:
        return (self.raw.get("overhead") or {}).get("podFixed") or {}

    @property
    def scheduling(self) -> dict:
        return self.raw.get("scheduling") or {}


class ResourceQuota(ApiObject):
    """A namespace's quota: ``status.hard`` and ``status.used`` as the quota controller last wrote them."""

    kind = "ResourceQuota"


class HorizontalPodAutoscaler(ApiObject):
    """An autoscaler: the workload whose replica count it owns (``spec.scaleTargetRef``) and its bounds."""

    kind = "HorizontalPodAutoscaler"

    @property
    def target(self) -> tuple:
        ref = self.spec.get("scaleTargetRef") or {}
        return ref.get("kind") or "", ref.get("name") or ""

    @property
    def min_replicas(self) -> int:
        value = self.spec.get("minReplicas")
        return 1 if value is None else int(value)

    @property
    def max_replicas(self) -> int:
        return int(self.spec.get("maxReplicas") or 0)


class Workload(ApiObject):
    """A pod owner: ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, ReplicationController."""

    def __init__(self, raw: dict):
        super().__init__(raw)
        self.kind = raw.get("kind", "")

    @property
    def replicas(self):
        if self.kind in ("DaemonSet", "Job", "CronJob"):
            return None
        value = self.spec.get("replicas")
        return 1 if value is None else int(value)

    @cached
    def selector(self):
        return LabelSelector.parse(self.spec.get("selector"))

    @property
    def template(self) -> dict:
        if self.kind == "CronJob":
            return ((self.spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
        return self.spec.get("template") or {}


class PersistentVolumeClaim(ApiObject):
    """The fields the scheduler's volume filters read."""

    kind = "PersistentVolumeClaim"

    @property
    def access_modes(self) -> list:
        return self.spec.get("accessModes") or []

    @property
    def volume_name(self) -> str:
        return self.spec.get("volumeName") or ""

    @property
    def storage_class_name(self) -> str:
        """spec.storageClassName, else the legacy beta annotation ('' = no class)."""
        name = self.spec.get("storageClassName")
        if name is None:
            name = self.annotations.get("volume.beta.kubernetes.io/storage-class")
        return name or ""

    @cached
    def requested_storage(self) -> int:
        return resource_list((self.spec.get("resources") or {}).get("requests")).get("storage", 0)


class PersistentVolume(ApiObject):
    kind = "PersistentVolume"

    @property
    def node_affinity(self):
        """spec.nodeAffinity.required (a NodeSelector) or None."""
        return (self.spec.get("nodeAffinity") or {}).get("required")

    @property
    def access_modes(self) -> list:
        return self.spec.get("accessModes") or []

    @property
    def storage_class_name(self) -> str:
        return self.spec.get("storageClassName") or ""

    @cached
    def storage(self) -> int:
        return resource_list(self.spec.get("capacity")).get("storage", 0)

    @property
    def claim_ref(self) -> dict:
        return self.spec.get("claimRef") or {}

    @property
    def phase(self) -> str:
        return self.status.get("phase") or ""


class StorageClass(ApiObject):
    kind = "StorageClass"

    @property
    def binding_mode(self) -> str:
        """Immediate (the API default) or WaitForFirstConsumer."""
        return self.raw.get("volumeBindingMode") or "Immediate"

    @property
    def provisioner(self) -> str:
        return self.raw.get("provisioner") or ""

    @property
    def allowed_topologies(self) -> list:
        return self.raw.get("allowedTopologies") or []


class CSINode(ApiObject):
    """A node's CSI drivers: how many volumes of each it may attach (NodeVolumeLimits)."""

    kind = "CSINode"

    @cached
    def limits(self) -> dict:
        """{driver: allocatable.count} for the drivers that declare a count (``getVolumeLimits``)."""
        out = {}
        for d in self.spec.get("drivers") or ():
            count = (d.get("allocatable") or {}).get("count")
            if count is not None:
                out[d.get("name") or ""] = int(count)
        return out


class VolumeAttachment(ApiObject):
    """A volume attached to a node by a CSI driver (counted against the node's limits)."""

    kind = "VolumeAttachment"

    @property
    def attacher(self) -> str:
        return self.spec.get("attacher") or ""

    @property
    def node_name(self) -> str:
        return self.spec.get("nodeName") or ""

    @property
    def volume_name(self) -> str:
        return (self.spec.get("source") or {}).get("persistentVolumeName") or ""


class DeviceClass(ApiObject):
    """resource.k8s.io: a class of devices, by CEL selectors every device of it must satisfy."""

    kind = "DeviceClass"

    @property
    def selectors(self) -> list:
        return self.spec.get("selectors") or []


class ResourceClaim(ApiObject):
    """resource.k8s.io: a request for devices; allocated (``status.allocation``) by the scheduler."""

    kind = "ResourceClaim"

    @property
    def requests(self) -> list:
        return (self.spec.get("devices") or {}).get("requests") or []

    @property
    def constraints(self) -> list:
        return (self.spec.get("devices") or {}).get("constraints") or []

    @property
    def allocation(self):
        return self.status.get("allocation")

    @property
    def reserved_for(self) -> list:
        return self.status.get("reservedFor") or []

    @property
    def allocated_devices(self) -> list:
        """(driver, pool, device, adminAccess) of the allocation's results."""
        results = ((self.allocation or {}).get("devices") or {}).get("results") or ()
        return [(r.get("driver") or "", r.get("pool") or "", r.get("device") or "", bool(r.get("adminAccess")))
                for r in results]


class ResourceClaimTemplate(ApiObject):
    """resource.k8s.io: the claim the resource claim controller creates for each pod naming it."""

    kind = "ResourceClaimTemplate"

    @property
    def claim_spec(self) -> dict:
        return self.spec.get("spec") or {}


class ResourceSlice(ApiObject):
    """resource.k8s.io: devices a driver publishes, for one node (``nodeName``) or a set of them."""

    kind = "ResourceSlice"

    @property
    def driver(self) -> str:
        return self.spec.get("driver") or ""

    @property
    def pool(self) -> dict:
        return self.spec.get("pool") or {}

    @property
    def devices(self) -> list:
        return self.spec.get("devices") or []


# The bounds validation puts on an Event's text (``pkg/apis/core/validation/events.go``: bytes).
EVENT_TEXT_LIMIT, EVENT_NOTE_LIMIT = 128, 1024


def _bounded(value, limit: int) -> str:
    """``value`` as text of at most ``limit`` UTF-8 bytes, cut at a character boundary."""
    text = value if isinstance(value, str) else ""
    if len(text) * 4 <= limit:
        return text
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


@dataclass(frozen=True)
class ObjectRef:
    """The object an Event is about (``regarding``) or names beside it (``related``)."""

    kind: str
    namespace: str
    name: str
    uid: str

    @classmethod
    def of(cls, raw):
        if not isinstance(raw, dict) or not raw:
            return None
        return cls(*(raw.get(k) or "" for k in ("kind", "namespace", "name", "uid")))


class Event(ApiObject):
    """An Event, read through core/v1 or events.k8s.io/v1, as events.k8s.io/v1 shows it
    (``pkg/apis/events/v1/conversion.go``: involvedObject -> regarding, message -> note,
    source -> deprecatedSource, firstTimestamp/lastTimestamp/count -> their deprecated fields;
    ``reportingComponent`` is core/v1's name of ``reportingController``). Text is bounded as
    validation bounds it (``EVENT_TEXT_LIMIT``, ``EVENT_NOTE_LIMIT``)."""

    kind = "Event"

    def _field(self, v1_name, core_name):
        value = self.raw.get(v1_name)
        return self.raw.get(core_name) if value is None else value

    @cached
    def regarding(self):
        """An ``ObjectRef`` (empty fields when the event names none)."""
        return ObjectRef.of(self._field("regarding", "involvedObject")) or ObjectRef("", "", "", "")

    @cached
    def related(self):
        return ObjectRef.of(self.raw.get("related"))

    @cached
    def reason(self) -> str:
        return _bounded(self.raw.get("reason"), EVENT_TEXT_LIMIT)

    @cached
    def action(self) -> str:
        return _bounded(self.raw.get("action"), EVENT_TEXT_LIMIT)

    @cached
    def note(self) -> str:
        return _bounded(self._field("note", "message"), EVENT_NOTE_LIMIT)

    @property
    def type(self) -> str:
        return _bounded(self.raw.get("type"), EVENT_TEXT_LIMIT)

    @cached
    def _source(self) -> dict:
        source = self._field("deprecatedSource", "source")
        return source if isinstance(source, dict) else {}

    @cached
    def reporting_controller(self) -> str:
        """reportingController, else the legacy ``source.component``."""
        value = self._field("reportingController", "reportingComponent") or self._source.get("component")
        return _bounded(value, EVENT_TEXT_LIMIT)

    @cached
    def reporting_instance(self) -> str:
        """reportingInstance, else the legacy ``source.host``."""
        return _bounded(self.raw.get("reportingInstance") or self._source.get("host"), EVENT_TEXT_LIMIT)

    @cached
    def _times(self) -> list:
        series = self.raw.get("series") or {}
        values = (self.raw.get("eventTime"), series.get("lastObservedTime"),
                  self._field("deprecatedLastTimestamp", "lastTimestamp"),
                  self._field("deprecatedFirstTimestamp", "firstTimestamp"), self.meta.get("creationTimestamp"))
        return [t for t in map(parse_time, values) if t is not None]

    @cached
    def time(self):
        """The latest of eventTime, series.lastObservedTime, lastTimestamp, firstTimestamp and
        creationTimestamp (None: the event has none)."""
        return max(self._times, default=None)

    @cached
    def first_time(self):
        """The earliest of the same times: when it first happened."""
        return min(self._times, default=None)

    @cached
    def count(self) -> int:
        """How many times it happened: series.count, else the legacy count (at least 1)."""
        value = (self.raw.get("series") or {}).get("count") or self._field("deprecatedCount", "count")
        return max(int(value or 1), 1)


KINDS = {
    "Pod": Pod, "Node": Node, "PodDisruptionBudget": PodDisruptionBudget,
    "PriorityClass": PriorityClass, "PersistentVolumeClaim": PersistentVolumeClaim,
    "PersistentVolume": PersistentVolume, "StorageClass": StorageClass,
    "LimitRange": LimitRange, "RuntimeClass": RuntimeClass, "ResourceQuota": ResourceQuota,
    "CSINode": CSINode, "VolumeAttachment": VolumeAttachment, "DeviceClass": DeviceClass,
    "ResourceClaim": ResourceClaim, "ResourceClaimTemplate": ResourceClaimTemplate, "ResourceSlice": ResourceSlice,
    "HorizontalPodAutoscaler": HorizontalPodAutoscaler, "Lease": Lease, "Event": Event,
}
WORKLOAD_KINDS = ("ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob",
                  "ReplicationController")
