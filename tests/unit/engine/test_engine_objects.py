"""The objects upgrade engines keep their settings in (``model/engines.py``): read by the commands given
--engine only, optional (a group the cluster does not serve is recorded, not an error), held by dumps."""

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.cluster.scopes import engine_scope
from kubectl_safety.cluster.source import Query, fetch
from kubectl_safety.engine.drain_planner import DrainPlanner
from kubectl_safety.errors import NotFoundError
from tests.builders import make_node, snapshot

ENGINE_RESOURCES = {"nodepools", "nodeclaims", "machines", "machinedeployments", "machinedrainrules", "plans"}


@pytest.mark.parametrize("engine, capacity", [(False, False), (False, True), (True, False), (True, True)])
def test_a_drain_reads_the_engines_objects_only_with_engine(engine, capacity):
    planner = DrainPlanner(DrainOptions(check_capacity=capacity), ["n1"], None, connect=None, engine=engine)
    read = {q.resource for q in planner.shared_queries()}
    assert (read & ENGINE_RESOURCES) == (ENGINE_RESOURCES if engine else set())


def test_the_engines_objects_are_optional_lists():
    assert {q.resource for q in engine_scope()} == ENGINE_RESOURCES
    assert all(q.optional and not q.name for q in engine_scope())


class _NotServed:
    """A cluster without Karpenter: a LIST of nodepools is a 404."""

    def list(self, resource, namespace=None, **kw):
        if resource == "nodepools":
            raise NotFoundError("the server could not find the requested resource")
        return {"kind": "List", "apiVersion": "v1", "items": []}


@pytest.mark.parametrize("scenario, add_on, unread_after, warned", [
    ("an engine's group not served: the engine is not installed, none exist", True, {}, 0),
    ("another optional kind not served: unknown, named", False, {"nodepools": "not served"}, 1),
])
def test_a_cluster_that_does_not_serve_an_engines_group_holds_none_of_its_objects(scenario, add_on, unread_after,
                                                                                  warned):
    unread, warnings = {}, []
    pairs = list(fetch(_NotServed(), [Query("nodepools", optional=True, add_on=add_on), Query("nodes")],
                       warnings=warnings, unread=unread))
    assert pairs == [] and unread == unread_after and len(warnings) == warned


DUMP = [
    make_node("n1"),
    {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "general"},
     "spec": {"disruption": {"budgets": [{"nodes": "2"}]}}},
    {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
     "metadata": {"name": "general-x", "labels": {"karpenter.sh/nodepool": "general"}}, "status": {"nodeName": "n1"}},
    {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "metadata": {"name": "m1", "namespace": "capi"},
     "status": {"nodeRef": {"name": "n1"}}},
    {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
     "metadata": {"name": "md", "namespace": "capi"}, "spec": {}},
    {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDrainRule",
     "metadata": {"name": "r", "namespace": "capi"}, "spec": {}},
    {"apiVersion": "upgrade.cattle.io/v1", "kind": "Plan", "metadata": {"name": "os", "namespace": "suc"},
     "spec": {"concurrency": 1}},
]


def test_a_dump_holds_the_engines_objects():
    snap = snapshot(*DUMP)
    assert [p.name for p in snap.node_pools] == ["general"]
    assert [(c.name, c.node_name) for c in snap.node_claims] == [("general-x", "n1")]
    assert [(m.name, m.node_name) for m in snap.machines] == [("m1", "n1")]
    assert [d.name for d in snap.machine_deployments] == ["md"]
    assert [r.name for r in snap.machine_drain_rules] == ["r"]
    assert [p.name for p in snap.upgrade_plans] == ["os"]
