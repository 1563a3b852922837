"""What a snapshot holds: one declaration per kind (``TABLE``).

From it derive the live reads' resources (``cluster/live.RESOURCES``), the parser's buckets and
cluster-scoped kinds (``model/parse.py``), the snapshot's fields (``ClusterSnapshot``, and the
drained view ``analysis/capacity.py`` makes of it), what ``kubectl safety snapshot`` reads
(``cluster/scopes.snapshot_scope``) and what its file must hold (``snapshot.VERDICT_RESOURCES``); the
read RBAC role (deploy/rbac.yaml), the commands' reads (``cluster/scopes.py``) and the typed
model (``model/schema.py``, ``model/typed.py``) are checked against it (tests/unit/model/test_kinds.py).

Adding a kind: a ``Kind`` here and its object class (in the module of its family). Its shape
(``model/schema.SCHEMAS``) is optional: the typed model keeps the fields it checks, else all but
managed metadata. A kind the whole-cluster analyses read says ``"cluster"`` in ``read_by``; another
read names it in its scope (``cluster/scopes.py``); the read role grants it (deploy/rbac.yaml).
"""

from importlib import import_module

from kubectl_safety.record import record

# Where each node's kubelet renews its Lease (named after the node): its heartbeat.
NODE_LEASE_NAMESPACE = "kube-node-lease"
# The reads of ``cluster/scopes.py`` a kind can be part of (``Kind.read_by``).
SCOPES = ("pod", "node", "drain", "cluster", "surge", "admission", "owners", "engine")


@record(slots=False)
class Kind:
    """One kind a snapshot can hold."""

    kind: str
    resource: str  # the API resource (plural, lower case)
    api: str  # group/version; "v1": the core group
    namespaced: bool
    field: str = ""  # the ClusterSnapshot field holding its objects ('': held as names only, as Namespaces)
    model: str = ""  # its class, "MODULE.Class" in kubectl_safety.model (imported when first parsed)
    read_by: tuple = ()  # the reads (``SCOPES``) that list or get it; (): read on demand only (Events: ``why``)
    namespace: str = None  # the one namespace those reads read it in (None: all)
    verdict: bool = False  # verdicts rest on it: a live read fails without it, a dump must hold it
    group: str = ""  # a set of kinds a filter needs whole: "storage", "volume-limits", "dra"
    verbs: tuple = ("get", "list")  # what the read role grants on it
    add_on: bool = False  # an add-on's kind (an upgrade engine's CRD): not served means none exist, not unknown

    @property
    def parse(self) -> type:
        """Its class (API-shaped dict -> the typed object), its module imported on first use: a read of
        nodes and pods loads no storage, device or engine classes."""
        module, _, name = self.model.partition(".")
        return getattr(import_module(f"kubectl_safety.model.{module}"), name)

    @property
    def prefix(self) -> str:
        """The API path prefix: /api/v1, /apis/GROUP/VERSION."""
        return f"/apis/{self.api}" if "/" in self.api else f"/api/{self.api}"

    @property
    def api_group(self) -> str:
        """The API group ('' for the core group), as RBAC rules name it."""
        return self.api.rpartition("/")[0]


_OWNER = ("pod", "owners")  # a pod owner: a pod's controller chain, and every owner for the snapshot
# In the order ``kubectl safety snapshot`` reads them (its file lists the objects in that order).
TABLE = (
    Kind("Node", "nodes", "v1", False, "nodes", "nodes.Node", ("pod", "node", "drain", "cluster"), verdict=True),
    Kind("Pod", "pods", "v1", True, "pods", "pods.Pod", ("pod", "node", "drain", "cluster"), verdict=True),
    Kind("PodDisruptionBudget", "poddisruptionbudgets", "policy/v1", True, "pdbs", "policy.PodDisruptionBudget",
         ("pod", "node", "drain", "cluster"), verdict=True),
    Kind("PriorityClass", "priorityclasses", "scheduling.k8s.io/v1", False, "priority_classes", "policy.PriorityClass",
         ("pod", "node", "cluster")),
    Kind("PersistentVolumeClaim", "persistentvolumeclaims", "v1", True, "pvcs", "storage.PersistentVolumeClaim",
         ("cluster",), group="storage"),
    Kind("PersistentVolume", "persistentvolumes", "v1", False, "pvs", "storage.PersistentVolume", ("cluster",),
         group="storage"),
    Kind("StorageClass", "storageclasses", "storage.k8s.io/v1", False, "storage_classes", "storage.StorageClass",
         ("cluster",), group="storage"),
    Kind("CSINode", "csinodes", "storage.k8s.io/v1", False, "csi_nodes", "storage.CSINode", ("cluster",),
         group="volume-limits"),
    Kind("VolumeAttachment", "volumeattachments", "storage.k8s.io/v1", False, "volume_attachments",
         "storage.VolumeAttachment", ("cluster",), group="volume-limits"),
    Kind("ResourceClaim", "resourceclaims", "resource.k8s.io/v1", True, "resource_claims", "devices.ResourceClaim",
         ("cluster",), group="dra"),
    Kind("ResourceClaimTemplate", "resourceclaimtemplates", "resource.k8s.io/v1", True,
         "resource_claim_templates", "devices.ResourceClaimTemplate", ("cluster",), group="dra"),
    Kind("ResourceSlice", "resourceslices", "resource.k8s.io/v1", False, "resource_slices", "devices.ResourceSlice",
         ("cluster",), group="dra"),
    Kind("DeviceClass", "deviceclasses", "resource.k8s.io/v1", False, "device_classes", "devices.DeviceClass",
         ("cluster",), group="dra"),
    Kind("ReplicaSet", "replicasets", "apps/v1", True, "workloads", "workloads.Workload", _OWNER + ("cluster", "surge")),
    Kind("Deployment", "deployments", "apps/v1", True, "workloads", "workloads.Workload", _OWNER + ("cluster", "surge")),
    Kind("StatefulSet", "statefulsets", "apps/v1", True, "workloads", "workloads.Workload", _OWNER + ("cluster",)),
    Kind("DaemonSet", "daemonsets", "apps/v1", True, "workloads", "workloads.Workload", _OWNER + ("drain", "cluster")),
    Kind("Job", "jobs", "batch/v1", True, "workloads", "workloads.Workload", _OWNER + ("cluster",)),
    # not granted by the roles: a surge reads the autoscalers where the user may, else goes without
    Kind("HorizontalPodAutoscaler", "horizontalpodautoscalers", "autoscaling/v2", True, "autoscalers",
         "workloads.HorizontalPodAutoscaler", ("surge",), verbs=()),
    Kind("ResourceQuota", "resourcequotas", "v1", True, "resource_quotas", "policy.ResourceQuota", ("surge", "admission")),
    Kind("LimitRange", "limitranges", "v1", True, "limit_ranges", "policy.LimitRange", ("admission",)),
    Kind("RuntimeClass", "runtimeclasses", "node.k8s.io/v1", False, "runtime_classes", "policy.RuntimeClass",
         ("admission",)),
    Kind("Lease", "leases", "coordination.k8s.io/v1", True, "leases", "nodes.Lease", ("pod", "node"),
         namespace=NODE_LEASE_NAMESPACE),
    Kind("CronJob", "cronjobs", "batch/v1", True, "workloads", "workloads.Workload", _OWNER),
    Kind("ReplicationController", "replicationcontrollers", "v1", True, "workloads", "workloads.Workload", _OWNER),
    # where upgrade engines keep their settings: read by the commands given --engine only
    Kind("NodePool", "nodepools", "karpenter.sh/v1", False, "node_pools", "engines.NodePool", ("engine",), add_on=True),
    Kind("NodeClaim", "nodeclaims", "karpenter.sh/v1", False, "node_claims", "engines.NodeClaim", ("engine",), add_on=True),
    Kind("Machine", "machines", "cluster.x-k8s.io/v1beta2", True, "machines", "engines.Machine", ("engine",), add_on=True),
    Kind("MachineDeployment", "machinedeployments", "cluster.x-k8s.io/v1beta2", True, "machine_deployments",
         "engines.MachineDeployment", ("engine",), add_on=True),
    Kind("MachineDrainRule", "machinedrainrules", "cluster.x-k8s.io/v1beta2", True, "machine_drain_rules",
         "engines.MachineDrainRule", ("engine",), add_on=True),
    Kind("Plan", "plans", "upgrade.cattle.io/v1", True, "upgrade_plans", "engines.Plan", ("engine",), add_on=True),
    Kind("Namespace", "namespaces", "v1", False),
    # core/v1; events.k8s.io/v1 lists (in dumps) parse into the same Event
    Kind("Event", "events", "v1", True, "events", "events.Event"),
)
BY_KIND = {k.kind: k for k in TABLE}
BY_RESOURCE = {k.resource: k for k in TABLE}
# The snapshot's fields of objects, in table order (each once).
FIELDS = tuple(dict.fromkeys(k.field for k in TABLE if k.field))
WORKLOAD_KINDS = tuple(k.kind for k in TABLE if k.model == "workloads.Workload")
CLUSTER_SCOPED = tuple(k.kind for k in TABLE if not k.namespaced)


def resources_of(group: str) -> tuple:
    """The API resources of a ``Kind.group``, in table order."""
    return tuple(k.resource for k in TABLE if k.group == group)
