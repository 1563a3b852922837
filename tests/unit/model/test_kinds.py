"""A kind is declared once, in ``model/kinds.TABLE``: the live reads, the parser, the snapshot's
fields, ``kubectl safety snapshot``'s reads, the read RBAC role, the typed model and the drained
view of capacity all agree with it, so a kind declared anywhere else fails here."""

from pathlib import Path

import pytest
import yaml

from kubectl_safety.analysis.capacity import SharedBase
from kubectl_safety.cluster import scopes
from kubectl_safety.cluster.live import RESOURCES
from kubectl_safety.model import kinds
from kubectl_safety.model.kinds import BY_RESOURCE, FIELDS, NODE_LEASE_NAMESPACE, SCOPES, TABLE
from kubectl_safety.model.parse import build_snapshot
from kubectl_safety.model.schema import SCHEMAS
from kubectl_safety.model.snapshot import INDEX_FIELDS, META_FIELDS, VERDICT_RESOURCES, ClusterSnapshot
from kubectl_safety.model.typed import KEPT
from tests.builders import make_node, make_pod

RBAC = Path(__file__).resolve().parents[3] / "deploy" / "rbac.yaml"


def test_each_kind_and_resource_is_declared_once():
    assert len({k.kind for k in TABLE}) == len({k.resource for k in TABLE}) == len(TABLE)


def test_the_live_reads_know_exactly_the_kinds_of_the_table():
    assert RESOURCES == {k.resource: (k.prefix, k.namespaced, k.kind) for k in TABLE}


class _Connection:
    """Answers pod_scope's GETs: a pod on node n1 owned by a ReplicaSet of a Deployment."""

    def get(self, resource, name, namespace=None, optional=False):
        owner = {"pods": ("ReplicaSet", "rs"), "replicasets": ("Deployment", "web")}.get(resource)
        refs = [{"kind": owner[0], "name": owner[1], "controller": True}] if owner else []
        return {"metadata": {"name": name, "namespace": namespace, "ownerReferences": refs},
                "spec": {"nodeName": "n1"}}


def reads():
    """scope -> the resources the commands' reads of ``cluster/scopes.py`` name."""
    def resources(queries):
        return {q.resource for q in queries}

    return {"pod": resources(scopes.pod_scope(_Connection(), "ns", "p")) | set(scopes.OWNER_RESOURCES.values()),
            "node": resources(scopes.node_scope(["n1"])), "drain": resources(scopes.drain_scope(["n1"])),
            "cluster": resources(scopes.cluster_scope()), "surge": resources(scopes.surge_scope(False)),
            "admission": resources(scopes.admission_scope()), "owners": set(scopes.OWNER_RESOURCES.values()),
            "engine": resources(scopes.engine_scope())}


@pytest.mark.parametrize("scope", SCOPES)
def test_the_commands_read_the_kinds_the_table_says_they_read(scope):
    assert reads()[scope] == {k.resource for k in TABLE if scope in k.read_by}


def test_kubectl_safety_snapshot_reads_every_kind_a_command_reads_and_no_other():
    """Events are read only by ``why`` (by field selector): never every event of a cluster."""
    listed = {(q.resource, q.namespace) for q in scopes.snapshot_scope()}
    every = set().union(*reads().values())
    assert {r for r, _ in listed} == every and "events" not in every
    assert ("leases", NODE_LEASE_NAMESPACE) in listed
    assert all(q.optional and not (q.name or q.field_selector) for q in scopes.snapshot_scope())


def test_verdicts_rest_on_nodes_pods_and_budgets_only():
    assert VERDICT_RESOURCES == {"nodes": "Node", "pods": "Pod", "poddisruptionbudgets": "PodDisruptionBudget"}


def role_grants() -> dict:
    """ClusterRole name -> {(API group, resource, verb)} of deploy/rbac.yaml."""
    roles = {}
    for doc in yaml.safe_load_all(RBAC.read_text()):
        if doc and doc["kind"] == "ClusterRole":
            roles[doc["metadata"]["name"]] = {(group, resource, verb) for rule in doc["rules"]
                                              for group in rule["apiGroups"] for resource in rule["resources"]
                                              for verb in rule["verbs"]}
    return roles


@pytest.mark.parametrize("role", sorted(role_grants()))
def test_every_role_reads_exactly_the_kinds_of_the_table(role):
    granted = {(g, r, v) for g, r, v in role_grants()[role] if v in ("get", "list")}
    assert granted == {(k.api_group, k.resource, verb) for k in TABLE for verb in k.verbs}


def test_the_snapshot_holds_a_field_for_each_kind_and_indexes_only_those():
    snapshot = ClusterSnapshot()
    assert set(snapshot.fields()) == set(FIELDS) | set(META_FIELDS)
    assert set(INDEX_FIELDS.values()) <= set(FIELDS)
    with pytest.raises(TypeError, match="no field hpas"):
        ClusterSnapshot(hpas=())


def test_the_typed_model_and_the_shape_checks_cover_the_kinds_of_the_table_only():
    for k in TABLE:
        assert k.kind in KEPT, k.kind
        assert k.field == "" or k.parse is not None, k.kind
    other = {kind for kind in KEPT if kind not in kinds.BY_KIND}
    assert all(set(KEPT[kind]) == {"metadata"} for kind in other - {"Snapshot"}), other
    assert set(SCHEMAS) <= {k.kind for k in TABLE if k.field}


def test_the_parser_puts_each_kind_in_its_field():
    objects = [{"apiVersion": k.api, "kind": k.kind, "metadata": {"name": "x", "namespace": "ns"}} for k in TABLE]
    snapshot = build_snapshot([("test", obj) for obj in objects])
    for k in TABLE:
        if k.field:
            held = [o for o in getattr(snapshot, k.field) if o.raw["kind"] == k.kind]
            assert len(held) == 1 and isinstance(held[0], k.parse), k.kind
    assert snapshot.namespaces == {"ns", "x"}
    assert [k.kind for k in TABLE if not k.namespaced] == [k.kind for k in TABLE if BY_RESOURCE[k.resource]
                                                           .kind in kinds.CLUSTER_SCOPED]


def every_kind():
    """A snapshot with an object of every kind the table holds."""
    objects = [make_node("n1"), make_node("n2"), make_pod("a", node="n1")]
    objects += [{"apiVersion": k.api, "kind": k.kind, "metadata": {"name": "n1", "namespace": k.namespace or "ns",
                                                                   "uid": f"u-{k.kind}"}}
                for k in TABLE if k.field not in ("", "nodes", "pods")]
    return build_snapshot([("test", obj) for obj in objects])


@pytest.mark.parametrize("field", [f for f in FIELDS if f not in ("nodes", "pods")])
def test_a_drained_view_holds_every_kind_of_its_snapshot(field):
    """Before, the view copied a hand-written list of fields: it held no LimitRanges, RuntimeClasses,
    ResourceQuotas, HorizontalPodAutoscalers, Leases or Events."""
    parent = every_kind()
    view, _ = SharedBase(parent).view({"n1"}, {("default", "a")})
    assert getattr(view, field) == getattr(parent, field) and len(getattr(view, field)) >= 1


def test_a_drained_view_knows_the_nodes_leases():
    parent = every_kind()
    view, _ = SharedBase(parent).view({"n1"}, {("default", "a")})
    assert view.node_lease("n1") is parent.node_lease("n1") is not None
    assert [p.name for p in view.pods] == [] and view.node("n1").unschedulable
