"""ClusterSnapshot: an immutable view of the objects an analysis needs, with lazy indexes."""

from datetime import datetime, timezone

from kubectl_safety.errors import InputError
from kubectl_safety.model.cached import cached

# The storage the scheduler's volume filters read (API resource names).
STORAGE_RESOURCES = ("persistentvolumeclaims", "persistentvolumes", "storageclasses")
# What NodeVolumeLimits reads besides them: the nodes' CSI drivers' limits and attached volumes.
VOLUME_LIMIT_RESOURCES = ("csinodes", "volumeattachments")
# What DynamicResources reads (resource.k8s.io): the claims, their templates, the devices, their classes.
DRA_RESOURCES = ("resourceclaims", "resourceclaimtemplates", "resourceslices", "deviceclasses")
# Where each node's kubelet renews its Lease (named after the node): its heartbeat.
NODE_LEASE_NAMESPACE = "kube-node-lease"
# The kinds verdicts rest on (API resource -> kind): a live read fails without them, but a dump that
# holds no object of one cannot tell "there are none" from "they were not dumped".
VERDICT_RESOURCES = {"nodes": "Node", "pods": "Pod", "poddisruptionbudgets": "PodDisruptionBudget"}
NOT_HELD = "not in the snapshot"
# Each lazily built index (a ``cached`` property) and the field it is derived from.
INDEX_FIELDS = {"_nodes_by_name": "nodes", "_pods_by_key": "pods", "_pods_by_node": "pods",
                "_pods_by_namespace": "pods", "_pdbs_by_namespace": "pdbs", "_pdbs_by_label": "pdbs",
                "_classes_by_name": "priority_classes", "global_default_class": "priority_classes",
                "_workloads_by_key": "workloads", "_workloads_by_uid": "workloads",
                "_workloads_by_annotation": "workloads",
                "_pvcs_by_key": "pvcs", "_pvs_by_name": "pvs", "_classes_of_storage": "storage_classes",
                "_runtime_classes_by_name": "runtime_classes", "_csi_nodes_by_name": "csi_nodes",
                "_attachments_by_node": "volume_attachments", "_device_classes_by_name": "device_classes",
                "_claims_by_key": "resource_claims", "_claim_templates_by_key": "resource_claim_templates",
                "_node_leases": "leases", "_events_by_uid": "events", "_events_by_object": "events"}


class _index(cached):
    """A lazily built index (one of ``INDEX_FIELDS``), built once per set of objects: a snapshot
    made by ``replace`` without changing the field borrows the index of the snapshot it came from."""

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        origin = instance._origins.get(INDEX_FIELDS[self.name])
        if origin is None:
            return super().__get__(instance, owner)
        value = instance.__dict__[self.name] = getattr(origin, self.name)
        return value


class ClusterSnapshot:
    """Nodes, pods, PDBs, PriorityClasses, pod owners, storage (PVCs, PVs, StorageClasses, CSINodes,
    VolumeAttachments), devices (ResourceClaims and their templates, ResourceSlices,
    DeviceClasses), the nodes' Leases and Events at one instant (``taken_at``).

    Never mutated: ``replace``/``without_pods`` return new snapshots. Indexes are built on
    first use, so a command pays only for the lookups it makes.
    """

    def __init__(self, *, nodes=(), pods=(), pdbs=(), priority_classes=(), workloads=(),
                 namespaces=None, taken_at=None, source="", server_version=None, complete_pod_namespaces=None,
                 pvcs=(), pvs=(), storage_classes=(), limit_ranges=(), runtime_classes=(), resource_quotas=(),
                 csi_nodes=(), volume_attachments=(), device_classes=(), resource_claims=(),
                 resource_claim_templates=(), resource_slices=(), autoscalers=(), leases=(), events=(), unread=None):
        self.nodes = tuple(nodes)
        self.pods = tuple(pods)
        self.pdbs = tuple(pdbs)
        self.priority_classes = tuple(priority_classes)
        self.workloads = tuple(workloads)
        self.pvcs = tuple(pvcs)
        self.pvs = tuple(pvs)
        self.storage_classes = tuple(storage_classes)
        self.limit_ranges = tuple(limit_ranges)
        self.runtime_classes = tuple(runtime_classes)
        self.resource_quotas = tuple(resource_quotas)
        self.csi_nodes = tuple(csi_nodes)
        self.volume_attachments = tuple(volume_attachments)
        self.device_classes = tuple(device_classes)
        self.resource_claims = tuple(resource_claims)
        self.resource_claim_templates = tuple(resource_claim_templates)
        self.resource_slices = tuple(resource_slices)
        self.autoscalers = tuple(autoscalers)  # HorizontalPodAutoscalers (read only by a surge)
        self.leases = tuple(leases)  # the nodes' Leases (their heartbeats), where read
        self.events = tuple(events)  # Events (from dumps; live, only ``why`` reads them)
        # resource -> why it could not be read (a live read's optional kinds; a kind a dump does not hold)
        self.unread = dict(unread or {})
        self.namespaces = None if namespaces is None else frozenset(namespaces)
        self.taken_at = taken_at
        self.source = source
        self.server_version = server_version
        # Namespaces whose pods are all here (None: every namespace, as in a dump). A node-scoped
        # read holds only some pods: PDB arithmetic then uses the PDB's status, not a recount.
        self.complete_pod_namespaces = None if complete_pod_namespaces is None else frozenset(complete_pod_namespaces)
        self._origins = {}  # field -> the snapshot whose indexes of that field this one shares

    @cached
    def planning(self) -> dict:
        """The analysis's scratch state for this snapshot (its caches, by module): one dict per
        snapshot, never shared with the snapshots ``replace`` makes, gone with the snapshot."""
        return {}

    def pods_complete_in(self, namespace) -> bool:
        return self.complete_pod_namespaces is None or namespace in self.complete_pod_namespaces

    def replace(self, **changes) -> "ClusterSnapshot":
        fields = dict(nodes=self.nodes, pods=self.pods, pdbs=self.pdbs,
                      priority_classes=self.priority_classes, workloads=self.workloads,
                      namespaces=self.namespaces, taken_at=self.taken_at, source=self.source,
                      server_version=self.server_version, complete_pod_namespaces=self.complete_pod_namespaces,
                      pvcs=self.pvcs, pvs=self.pvs, storage_classes=self.storage_classes,
                      limit_ranges=self.limit_ranges, runtime_classes=self.runtime_classes,
                      resource_quotas=self.resource_quotas, csi_nodes=self.csi_nodes,
                      volume_attachments=self.volume_attachments, device_classes=self.device_classes,
                      resource_claims=self.resource_claims, resource_claim_templates=self.resource_claim_templates,
                      resource_slices=self.resource_slices, autoscalers=self.autoscalers, leases=self.leases,
                      events=self.events, unread=self.unread)
        fields.update(changes)
        new = ClusterSnapshot(**fields)
        new._origins = {field: self._origins.get(field, self)  # indexes of unchanged fields stay valid
                        for field in set(INDEX_FIELDS.values()) if field not in changes}
        return new

    def without_pods(self, keys) -> "ClusterSnapshot":
        """The snapshot after the pods with these (namespace, name) keys are gone."""
        keys = set(keys)
        return self.replace(pods=[p for p in self.pods if p.key not in keys])

    # -- indexes ---------------------------------------------------------------------------
    @_index
    def _nodes_by_name(self):
        return {n.name: n for n in self.nodes}

    @_index
    def _pods_by_key(self):
        return {p.key: p for p in self.pods}

    @_index
    def _pods_by_node(self):
        index = {}
        for p in self.pods:
            node = p.node_name
            if node:
                index.setdefault(node, []).append(p)
        return index

    @_index
    def _pods_by_namespace(self):
        index = {}
        for p in self.pods:
            index.setdefault(p.namespace, []).append(p)
        return index

    @_index
    def _pdbs_by_namespace(self):
        index = {}
        for b in self.pdbs:
            index.setdefault(b.namespace, []).append(b)
        return index

    @_index
    def _classes_by_name(self):
        return {c.name: c for c in self.priority_classes}

    @_index
    def _workloads_by_key(self):
        return {(w.kind, w.namespace, w.name): w for w in self.workloads}

    @_index
    def _workloads_by_uid(self):
        return {w.uid: w for w in self.workloads if w.uid}

    @_index
    def _workloads_by_annotation(self):
        out = {}
        for w in self.workloads:
            annotations = w.annotations
            for key in annotations if isinstance(annotations, dict) else ():
                out.setdefault(key, []).append(w)
        return out

    def annotated_workloads(self, key) -> list:
        """The workloads that carry annotation ``key``, in snapshot order."""
        return self._workloads_by_annotation.get(key, [])

    @_index
    def _pvcs_by_key(self):
        return {(c.namespace, c.name): c for c in self.pvcs}

    @_index
    def _pvs_by_name(self):
        return {v.name: v for v in self.pvs}

    @_index
    def _classes_of_storage(self):
        return {c.name: c for c in self.storage_classes}

    # -- lookups ---------------------------------------------------------------------------
    @property
    def storage_known(self) -> bool:
        """Whether storage was read, all of it (a dump without pvc,pv,storageclass, or a kind the
        user may not list: volumes are not judged)."""
        return bool(self.pvcs or self.pvs or self.storage_classes) and not (self.unread and self.storage_unread)

    @property
    def storage_unread(self) -> dict:
        """The storage kinds a live read could not read, and why (``{"storageclasses": "forbidden"}``)."""
        return {r: why for r, why in self.unread.items() if r in STORAGE_RESOURCES}

    @property
    def dra_unread(self) -> dict:
        """The resource.k8s.io kinds a live read could not read, and why."""
        return {r: why for r, why in self.unread.items() if r in DRA_RESOURCES}

    @property
    def volume_limits_unread(self) -> dict:
        """The kinds NodeVolumeLimits reads (CSINodes, VolumeAttachments) a live read could not read."""
        return {r: why for r, why in self.unread.items() if r in VOLUME_LIMIT_RESOURCES}

    def not_held(self, resources) -> dict:
        """Those of ``resources`` the snapshot does not hold, and why (``{"pods": "not in the snapshot"}``)."""
        return {r: self.unread[r] for r in resources if r in self.unread}

    def csi_node(self, name):
        return self._csi_nodes_by_name.get(name)

    def node_lease(self, name):
        """The Lease the node's kubelet renews (None: not read, or none)."""
        return self._node_leases.get(name)

    @_index
    def _node_leases(self):
        return {lease.name: lease for lease in self.leases if lease.namespace == NODE_LEASE_NAMESPACE}

    def events_about_uid(self, uid) -> list:
        """The Events regarding the object with this uid, oldest first."""
        return self._events_by_uid.get(uid, []) if uid else []

    def events_about(self, kind, namespace, name) -> list:
        """The Events regarding the object ``kind`` ``namespace``/``name`` ('' for a cluster-scoped
        one), whatever its uid (a deleted object's namesakes included), oldest first."""
        return self._events_by_object.get((kind, namespace or "", name), [])

    @_index
    def _events_by_uid(self):
        index = {}
        for e in self._events_in_time_order:
            if e.regarding.uid:
                index.setdefault(e.regarding.uid, []).append(e)
        return index

    @_index
    def _events_by_object(self):
        index = {}
        for e in self._events_in_time_order:
            ref = e.regarding
            index.setdefault((ref.kind, ref.namespace, ref.name), []).append(e)
        return index

    @property
    def _events_in_time_order(self) -> list:
        """The events by time (those without one first), then name; snapshot order among equals."""
        epoch = datetime.min.replace(tzinfo=timezone.utc)
        return sorted(self.events, key=lambda e: (e.time or epoch, e.name))

    def attachments_on(self, node_name) -> list:
        return self._attachments_by_node.get(node_name, [])

    def device_class(self, name):
        return self._device_classes_by_name.get(name)

    def resource_claim(self, namespace, name):
        return self._claims_by_key.get((namespace, name))

    def resource_claim_template(self, namespace, name):
        return self._claim_templates_by_key.get((namespace, name))

    @_index
    def _csi_nodes_by_name(self):
        return {c.name: c for c in self.csi_nodes}

    @_index
    def _attachments_by_node(self):
        index = {}
        for a in self.volume_attachments:
            index.setdefault(a.node_name, []).append(a)
        return index

    @_index
    def _device_classes_by_name(self):
        return {c.name: c for c in self.device_classes}

    @_index
    def _claims_by_key(self):
        return {(c.namespace, c.name): c for c in self.resource_claims}

    @_index
    def _claim_templates_by_key(self):
        return {(c.namespace, c.name): c for c in self.resource_claim_templates}

    def pvc(self, namespace, name):
        return self._pvcs_by_key.get((namespace, name))

    def pv(self, name):
        return self._pvs_by_name.get(name)

    def storage_class(self, name):
        return self._classes_of_storage.get(name)

    def node(self, name):
        return self._nodes_by_name.get(name)

    def pod(self, namespace, name):
        return self._pods_by_key.get((namespace, name))

    def has_pod(self, namespace, name) -> bool:
        """``pod(namespace, name) is not None``; without the key index yet, one scan (building the
        index for a single question costs several times more at 150,000 pods)."""
        if "_pods_by_key" in self.__dict__:
            return self.pod(namespace, name) is not None
        return any(p.name == name and p.namespace == namespace for p in self.pods)

    def runtime_class(self, name):
        return self._runtime_classes_by_name.get(name)

    @_index
    def _runtime_classes_by_name(self):
        return {c.name: c for c in self.runtime_classes}

    def limit_ranges_in(self, namespace) -> list:
        return [r for r in self.limit_ranges if r.namespace == namespace]

    def autoscaler_of(self, workload):
        """The HorizontalPodAutoscaler whose scaleTargetRef is ``workload``, or None."""
        return next((h for h in self.autoscalers if h.namespace == workload.namespace
                     and h.target == (workload.kind, workload.name)), None)

    def resource_quotas_in(self, namespace) -> list:
        return [q for q in self.resource_quotas if q.namespace == namespace]

    def pods_on(self, node_name) -> list:
        return self._pods_by_node.get(node_name, [])

    def pods_in(self, namespace) -> list:
        return self._pods_by_namespace.get(namespace, [])

    def pdbs_in(self, namespace) -> list:
        return self._pdbs_by_namespace.get(namespace, [])

    @_index
    def _pdbs_by_label(self):
        """Where ``pdbs_for`` looks: PDBs by (namespace, key, value) of one ``In`` requirement of
        their selector, and per namespace the PDBs without one (or with an invalid selector,
        which then fails where it did before); each with its position in ``pdbs``."""
        by_label, unanchored = {}, {}
        for position, b in enumerate(self.pdbs):
            try:
                selector = b.selector
            except InputError:
                selector = False
            if selector is None:
                continue  # selects nothing
            anchor = next(((k, vs) for k, op, vs in selector.requirements if op == "In"), None) if selector else None
            if anchor is None:
                unanchored.setdefault(b.namespace, []).append((position, b))
                continue
            for value in anchor[1]:
                by_label.setdefault((b.namespace, anchor[0], value), []).append((position, b))
        return by_label, unanchored

    @cached
    def _pdbs_of(self):
        return {}  # id(pod) -> (pod, its PDBs): whole-cluster analyses ask again for the same pods

    def pdbs_for(self, pod) -> list:
        """PDBs whose selector selects the pod, as the Eviction API matches them (in order)."""
        known = self._pdbs_of.get(id(pod))
        if known is None or known[0] is not pod:
            known = self._pdbs_of[id(pod)] = (pod, self._select_pdbs(pod))
        return list(known[1])

    def _select_pdbs(self, pod) -> list:
        by_label, unanchored = self._pdbs_by_label
        namespace = pod.namespace
        candidates = list(unanchored.get(namespace, ()))
        labels = pod.labels
        for key, value in (labels.items() if isinstance(labels, dict) else ()):
            if isinstance(value, str):
                candidates += by_label.get((namespace, key, value), ())
        if len(candidates) > 1:
            candidates = sorted(dict(candidates).items())
        return [b for _, b in candidates if b.selects(pod)]

    def priority_class(self, name):
        return self._classes_by_name.get(name)

    @_index
    def global_default_class(self):
        """The class admission uses for a pod without one: of several ``globalDefault`` classes, the
        lowest value (``getDefaultPriorityClass``); ties go to the first by name (upstream: list order)."""
        defaults = [c for c in self.priority_classes if c.global_default]
        return min(defaults, key=lambda c: (c.value, c.name)) if defaults else None

    def workload(self, kind, namespace, name):
        return self._workloads_by_key.get((kind, namespace, name))

    def owner(self, obj):
        """The object's controller (by ownerReference uid, else kind/name) in its own namespace, or None:
        owner references are namespace-local, and the garbage collector takes one naming another
        namespace's object as absent."""
        ref = obj.controller_ref
        if not ref:
            return None
        found = self._workloads_by_uid.get(ref.get("uid"))
        if found is not None and found.namespace == obj.namespace:
            return found
        return self.workload(ref.get("kind"), obj.namespace, ref.get("name"))

    def owner_chain(self, obj) -> list:
        """[controllerRef, its controllerRef, ...] as dicts; resolved workloads where known."""
        chain, seen = [], set()
        current = obj
        while current is not None:
            ref = current.controller_ref
            if not ref or ref.get("uid") in seen:
                break
            seen.add(ref.get("uid"))
            owner = self.owner(current)
            chain.append((ref, owner))
            current = owner
        return chain
