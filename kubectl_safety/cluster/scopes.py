"""The reads each command needs on a live cluster: few requests, independent of cluster size."""

import re

from kubectl_safety.cluster.source import Query
from kubectl_safety.model.kinds import NODE_LEASE_NAMESPACE, TABLE

OWNER_RESOURCES = {k.kind: k.resource for k in TABLE if "owners" in k.read_by}


def owner_queries(connection, obj: dict) -> list:
    """GETs for an object's controller chain (pod -> ReplicaSet -> Deployment): at most 3."""
    queries, namespace = [], (obj.get("metadata") or {}).get("namespace")
    for _ in range(3):
        ref = next((r for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if r.get("controller")), None)
        resource = OWNER_RESOURCES.get((ref or {}).get("kind"))
        if not resource:
            break
        owner = connection.get(resource, ref["name"], namespace, optional=True)
        if owner is None:
            break
        queries.append(Query(resource, namespace, name=ref["name"], optional=True))
        obj = owner
    return queries


def pod_scope(connection, namespace, name) -> list:
    """explain pod: the pod, its node's pods, its namespace, nodes, PDBs, classes, owners."""
    pod = connection.get("pods", name, namespace)
    queries = [Query("pods", namespace, name=name), Query("pods", namespace),
               Query("nodes", optional=True), Query("poddisruptionbudgets", namespace),
               Query("priorityclasses", optional=True)]
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        queries.append(Query("pods", field_selector=f"spec.nodeName={node}", optional=True))
        queries += node_lease_queries([node])
    return queries + owner_queries(connection, pod)


def node_scope(node_names) -> list:
    """explain node / drain: the nodes, every node's pods, PDBs, classes, pod owners."""
    queries = [Query("nodes", name=n) for n in node_names]
    queries += [Query("pods", field_selector=f"spec.nodeName={n}") for n in node_names]
    queries += [Query("poddisruptionbudgets"), Query("priorityclasses", optional=True)]
    return queries + node_lease_queries(node_names)


def node_lease_queries(node_names=None) -> list:
    """The nodes' Leases, their heartbeats (GETs; None: all of them, one LIST)."""
    if node_names is None:
        return [Query("leases", NODE_LEASE_NAMESPACE, optional=True)]
    return [Query("leases", NODE_LEASE_NAMESPACE, name=n, optional=True) for n in node_names]


def why_pod_scope(connection, namespace, name) -> list:
    """why pod: the pod; the events naming it by kind and name (the taint manager's carry no UID; a gone
    pod's UID is not known); its owner's SuccessfulDelete events (a gone pod's owner guessed from its
    name); its node, the node's events and pods (a preemptor named by UID is bound there). A gone pod's
    priority is its owner's template's class: that owner (a StatefulSet for an ordinal suffix, else a
    ReplicaSet) and the PriorityClasses, optional (what is not read is answered as unknown). At most 10
    requests, each bounded by one object (or the cluster's few classes), whatever the cluster's size.
    Otherwise only a missing object is tolerated: a refused read is an error, never an answer made
    without it."""
    pod = connection.get("pods", name, namespace, optional=True)
    pod_events = f"involvedObject.kind=Pod,involvedObject.name={name}"
    ref = next((r for r in ((pod or {}).get("metadata") or {}).get("ownerReferences") or [] if r.get("controller")),
               None)
    owner = ref["name"] if ref else name.rsplit("-", 1)[0]
    queries = ([Query("pods", namespace, name=name)] if pod else []) + [
        Query("events", namespace, field_selector=pod_events),
        Query("events", namespace, field_selector=f"involvedObject.name={owner},reason=SuccessfulDelete")]
    if not pod:
        resource = "statefulsets" if name.rsplit("-", 1)[-1].isdigit() else "replicasets"
        queries += [Query(resource, namespace, name=owner, optional=True), Query("priorityclasses", optional=True)]
    node = ((pod or {}).get("spec") or {}).get("nodeName")
    if not node:  # a gone pod: where the scheduler put it
        listed = connection.list("events", namespace, field_selector=pod_events + ",reason=Scheduled")
        node = next((m.group(1) for m in (re.search(r" to (\S+)$", str(e.get("message") or ""))
                                          for e in listed["items"]) if m), None)
    return queries + (why_node_scope(connection, node, engines=False) if node else [])


def why_node_scope(connection, name, engines=True) -> list:
    """why node: the node (when it exists), its events (by name: the kubelet's carry no UID) and its pods.
    With ``engines``: the events of its Karpenter NodeClaim (the node's NodeClaim ownerReference, which
    Karpenter's registration adds) and the DaemonSets, where kured's lock annotation names the node holding
    it (one LIST of a kind every cluster has few of, optional: an unread lock is not an answer); for a Cluster
    API node, its Machine (named by the node's annotations), whose deletion and drain hooks say what holds
    the node. At most 7."""
    node = connection.get("nodes", name, optional=True)
    queries = ([Query("nodes", name=name)] if node else []) + [
        Query("events", "default", field_selector=f"involvedObject.kind=Node,involvedObject.name={name}"),
        Query("pods", field_selector=f"spec.nodeName={name}")]
    if not engines:
        return queries
    claim = next((r.get("name") for r in ((node or {}).get("metadata") or {}).get("ownerReferences") or []
                  if r.get("kind") == "NodeClaim" and r.get("name")), None)
    if claim:
        queries.append(Query("events", "default",
                             field_selector=f"involvedObject.kind=NodeClaim,involvedObject.name={claim}"))
    annotations = ((node or {}).get("metadata") or {}).get("annotations") or {}
    machine, machine_namespace = (annotations.get("cluster.x-k8s.io/machine"),
                                  annotations.get("cluster.x-k8s.io/cluster-namespace"))
    if machine and machine_namespace:  # Cluster API's Machine, where the cluster manages itself (else not served)
        queries.append(Query("machines", machine_namespace, name=machine, optional=True, add_on=True))
    return queries + [Query("daemonsets", optional=True)]


def drain_scope(node_names) -> list:
    """drain without the capacity check: the nodes, their pods, PDBs and DaemonSets (what kubectl
    drain reads, plus PDBs). Missing nodes are reported by the planner, not as a failed GET."""
    return node_queries(node_names) + [Query("poddisruptionbudgets"), Query("daemonsets", optional=True)]


def node_queries(node_names) -> list:
    """The nodes themselves and their pods: what a drain of these nodes reads per node."""
    queries = [Query("nodes", name=n, optional=True) for n in node_names]
    return queries + [Query("pods", field_selector=f"spec.nodeName={n}") for n in node_names]


def cluster_scope(namespaces=None) -> list:
    """Whole-cluster analyses (capacity, preemption, rebalance): the kinds ``model/kinds.py`` says
    they read (``"cluster"``): nodes, pods, PDBs, classes, owners, the storage the scheduler's volume
    filters read (claims, volumes, storage classes, CSI nodes' limits, attachments) and the devices
    DynamicResources allocates (resource.k8s.io); optional but the kinds verdicts rest on."""
    return [Query(k.resource, optional=not k.verdict) for k in TABLE if "cluster" in k.read_by]


def surge_scope(with_owners) -> list:
    """What --surge reads besides: the autoscalers and quotas (and the pods' owners, unless read already)."""
    owners = [] if with_owners else [Query(r, optional=True) for r in ("replicasets", "deployments")]
    return owners + [Query(r, optional=True) for r in ("horizontalpodautoscalers", "resourcequotas")]


def admission_scope() -> list:
    """What admission of a manifest's pod reads: LimitRanges, ResourceQuotas and RuntimeClasses."""
    return [Query(resource, optional=True) for resource in ("limitranges", "resourcequotas", "runtimeclasses")]


def engine_scope() -> list:
    """What --engine reads besides: the objects upgrade engines keep their settings in (Karpenter's
    NodePools and NodeClaims, Cluster API's Machines, MachineDeployments and MachineDrainRules, the
    system-upgrade-controller's Plans), each one LIST, optional: a group the cluster does not serve holds
    none of them (the engine is not installed there), and the engine's settings come from --engine-setting
    or its defaults."""
    return [Query(k.resource, optional=True, add_on=k.add_on) for k in TABLE if "engine" in k.read_by]


def snapshot_scope() -> list:
    """What ``kubectl safety snapshot`` reads: every kind the commands' reads above name
    (``model/kinds.py``: ``Kind.read_by``), each as one LIST of all of it (of the namespace those
    reads read it in), optional: a kind it may not read is recorded, not fatal. A kind a command
    reads is in every snapshot from then on."""
    return [Query(k.resource, k.namespace, optional=True, add_on=k.add_on) for k in TABLE if k.read_by]
