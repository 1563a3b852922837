"""`why`'s live reads: only the events of the pod, its owner and its node, by field selector; a bounded
number of requests whatever the cluster's size; a gone pod's node found where the scheduler bound it."""

from kubectl_safety.cluster.scopes import why_node_scope, why_pod_scope


class Reads:
    """A connection that answers the GET of the pod and the LIST of its Scheduled events, and counts them."""

    def __init__(self, pod=None, scheduled_to=None, node_exists=True):
        self.pod, self.scheduled_to, self.node_exists, self.requests = pod, scheduled_to, node_exists, []

    def get(self, resource, name, namespace=None, optional=False):
        self.requests.append(("GET", resource, name))
        if resource == "nodes":
            return {"metadata": {"name": name}} if self.node_exists else None
        return self.pod

    def list(self, resource, namespace=None, *, field_selector=None, **_):
        self.requests.append(("LIST", resource, field_selector))
        items = [{"reason": "Scheduled", "message": f"Successfully assigned {namespace}/web-1 to {self.scheduled_to}"}]
        return {"items": items if self.scheduled_to else []}


def selectors(queries):
    return [(q.resource, q.namespace, q.name, q.field_selector) for q in queries]


POD = {"metadata": {"name": "web-7d9f-x2k4q", "namespace": "shop", "uid": "u1",
                    "ownerReferences": [{"kind": "ReplicaSet", "name": "web-7d9f", "controller": True}]},
       "spec": {"nodeName": "n1"}}


def test_a_live_pod_reads_its_events_its_owners_deletions_and_its_node():
    reads = Reads(POD)
    queries = why_pod_scope(reads, "shop", "web-7d9f-x2k4q")
    assert reads.requests == [("GET", "pods", "web-7d9f-x2k4q"), ("GET", "nodes", "n1")]
    assert selectors(queries) == [
        ("pods", "shop", "web-7d9f-x2k4q", None),
        ("events", "shop", None, "involvedObject.kind=Pod,involvedObject.name=web-7d9f-x2k4q"),
        ("events", "shop", None, "involvedObject.name=web-7d9f,reason=SuccessfulDelete"),
        ("nodes", None, "n1", None),
        ("events", "default", None, "involvedObject.kind=Node,involvedObject.name=n1"),
        ("pods", None, None, "spec.nodeName=n1")]
    assert not any(q.optional for q in queries)  # a refused read is an error, not a partial answer


def test_a_gone_pod_is_found_through_its_events_and_its_owner_guessed_from_its_name():
    reads = Reads(None, scheduled_to="n7")
    queries = why_pod_scope(reads, "shop", "web-7d9f-x2k4q")
    assert reads.requests[1] == ("LIST", "events", "involvedObject.kind=Pod,involvedObject.name=web-7d9f-x2k4q,"
                                                   "reason=Scheduled")
    assert ("events", "shop", None, "involvedObject.name=web-7d9f,reason=SuccessfulDelete") in selectors(queries)
    assert ("nodes", None, "n7", None) in selectors(queries) and len(queries) + len(reads.requests) <= 10


def test_a_gone_pod_reads_its_guessed_owner_and_the_priority_classes_for_its_priority():
    queries = why_pod_scope(Reads(None, scheduled_to="n7"), "shop", "web-7d9f-x2k4q")
    read = [(q.resource, q.name, q.optional) for q in queries if q.resource in ("replicasets", "priorityclasses")]
    assert read == [("replicasets", "web-7d9f", True), ("priorityclasses", None, True)]


def test_a_gone_pod_never_scheduled_reads_no_node():
    queries = why_pod_scope(Reads(None), "shop", "db-0")
    assert [q.resource for q in queries] == ["events", "events", "statefulsets", "priorityclasses"]
    assert queries[1].field_selector == "involvedObject.name=db,reason=SuccessfulDelete"  # StatefulSet db
    assert queries[2].name == "db"


def test_a_gone_node_is_not_read_again_so_its_absence_is_known():
    reads = Reads(None, scheduled_to="n7", node_exists=False)
    assert "nodes" not in [q.resource for q in why_pod_scope(reads, "shop", "web-7d9f-x2k4q")]


def test_why_node_reads_the_node_its_events_pods_and_the_daemonsets_for_kureds_lock():
    queries = why_node_scope(Reads(), "n1")
    assert selectors(queries) == [
        ("nodes", None, "n1", None), ("events", "default", None, "involvedObject.kind=Node,involvedObject.name=n1"),
        ("pods", None, None, "spec.nodeName=n1"), ("daemonsets", None, None, None)]
    assert [q.optional for q in queries] == [False, False, False, True]


class ClaimedNode(Reads):
    def get(self, resource, name, namespace=None, optional=False):
        self.requests.append(("GET", resource, name))
        return {"metadata": {"name": name, "ownerReferences": [{"kind": "NodeClaim", "name": "default-x7k2p"}]}}


def test_why_node_of_karpenter_reads_its_nodeclaims_events():
    reads = ClaimedNode()
    queries = why_node_scope(reads, "n1")
    assert ("events", "default", None, "involvedObject.kind=NodeClaim,involvedObject.name=default-x7k2p") \
        in selectors(queries)
    assert len(queries) + len(reads.requests) == 6


def test_why_pod_reads_no_engine_evidence_of_its_node():
    queries = why_pod_scope(ClaimedNode(), "shop", "web-7d9f-x2k4q")
    assert [q.resource for q in queries].count("daemonsets") == 0
    assert not any("NodeClaim" in (q.field_selector or "") for q in queries)


class MachineNode(Reads):
    def get(self, resource, name, namespace=None, optional=False):
        self.requests.append(("GET", resource, name))
        return {"metadata": {"name": name, "annotations": {"cluster.x-k8s.io/machine": "md-0-abc",
                                                          "cluster.x-k8s.io/cluster-namespace": "capi"}}}


def test_why_node_of_cluster_api_gets_its_machine_where_the_cluster_serves_machines():
    reads = MachineNode()
    queries = why_node_scope(reads, "n1")
    machines = [q for q in queries if q.resource == "machines"]
    assert [(q.namespace, q.name, q.optional, q.add_on) for q in machines] == [("capi", "md-0-abc", True, True)]
    assert len(queries) + len(reads.requests) <= 7
