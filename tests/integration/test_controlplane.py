"""The test control plane is real: admission, the Eviction API with PDBs, RBAC and auditing."""

from __future__ import annotations

import json
import uuid

import pytest

from cluster_helpers import (
    RawApi,
    create,
    deployment,
    get_json,
    grant_namespace_access,
    pdb,
    pod,
    priority_class,
    wait_pdb_settled,
    wait_pods_running,
    wait_until,
)

SMALL = {"cpu": "100m", "memory": "64Mi"}


@pytest.fixture(scope="module")
def api(cluster) -> RawApi:
    return RawApi(cluster)


@pytest.fixture
def high_priority(cluster):
    """A fresh PriorityClass with value 424242 (cluster-scoped, deleted afterwards)."""
    name = f"t-high-{uuid.uuid4().hex[:6]}"
    create(cluster, None, priority_class(name, 424242))
    yield name
    cluster.kubectl("delete", "priorityclass", name, check=False)


@pytest.fixture
def app_pods(cluster, namespace, make_node):
    """Two Running pods of Deployment ``app`` on their own kwok node."""
    node = make_node(cpu="2", memory="4Gi")["metadata"]["name"]
    spec = {"node_selector": {"kubernetes.io/hostname": node}, "requests": SMALL}
    create(cluster, namespace, deployment("app", 2, **spec))
    pods = wait_pods_running(cluster, namespace, "app=app", count=2)
    assert {p["spec"]["nodeName"] for p in pods} == {node}
    return [p["metadata"]["name"] for p in pods]


def _set_pdb(cluster, namespace: str, name: str, spec: dict) -> None:
    cluster.kubectl("patch", "pdb", name, "-n", namespace, "--type=merge", "-p", json.dumps({"spec": spec}))


def _terminating_or_gone(cluster, namespace: str, name: str) -> bool:
    out = cluster.kubectl("get", "pod", name, "-n", namespace, "-o", "json", check=False)
    return out.returncode != 0 or "deletionTimestamp" in json.loads(out.stdout)["metadata"]


def test_admission_resolves_priority_and_api_server_sets_qos(cluster, namespace, high_priority):
    limits = {"cpu": "250m", "memory": "128Mi"}
    created = create(
        cluster,
        namespace,
        pod("guaranteed", priority_class=high_priority, requests=limits, limits=limits),
        pod("burstable", requests=SMALL),
        pod("besteffort"),
    )
    seen = {p["metadata"]["name"]: (p["spec"].get("priority"), p["status"].get("qosClass")) for p in created}
    assert seen == {
        "guaranteed": (424242, "Guaranteed"),
        "burstable": (0, "Burstable"),
        "besteffort": (0, "BestEffort"),
    }


def test_kwok_nodes_ready_and_unmanaged_nodes_not_ready(cluster, make_node):
    def ready(node: dict) -> str:
        return next(c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready")

    assert ready(make_node(zone="z1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])) == "True"
    down = make_node(ready=False)
    assert ready(down) == "False"
    assert ready(get_json(cluster, f"node/{down['metadata']['name']}")) == "False"


def test_eviction_refused_with_429_until_pdb_allows_it(cluster, namespace, app_pods, api):
    create(cluster, namespace, pdb("app", {"app": "app"}, min_available=2))
    wait_pdb_settled(cluster, namespace, "app", disruptions_allowed=0, current_healthy=2, expected_pods=2)
    victim = app_pods[0]

    refused = api.evict(namespace, victim)
    assert refused.status == 429, refused
    assert refused.body["reason"] == "TooManyRequests"
    assert "violate the pod's disruption budget" in refused.body["message"]
    assert not _terminating_or_gone(cluster, namespace, victim)

    _set_pdb(cluster, namespace, "app", {"minAvailable": 1})
    wait_pdb_settled(cluster, namespace, "app", disruptions_allowed=1, current_healthy=2)
    allowed = api.evict(namespace, victim)
    assert (allowed.status, allowed.body.get("status")) == (201, "Success"), allowed
    wait_until(lambda: _terminating_or_gone(cluster, namespace, victim), 30, f"pod {victim} to go")


def test_eviction_with_two_pdbs_is_refused_with_500(cluster, namespace, app_pods, api):
    """The server will not choose between PDBs: a bare 500 Status (no ``reason``), pod untouched."""
    create(cluster, namespace, pdb("first", {"app": "app"}, max_unavailable=1),
           pdb("second", {"app": "app"}, max_unavailable=1))
    for name in ("first", "second"):
        wait_pdb_settled(cluster, namespace, name, disruptions_allowed=1, current_healthy=2)

    resp = api.evict(namespace, app_pods[0])
    assert resp.status == 500, resp
    assert (resp.body["kind"], resp.body["status"], resp.body["code"]) == ("Status", "Failure", 500)
    assert "reason" not in resp.body
    assert resp.body["message"] == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )
    assert not _terminating_or_gone(cluster, namespace, app_pods[0])


def test_user_without_rights_gets_403_naming_verb_and_resource(cluster, namespace, api):
    grant_namespace_access(cluster, "alice", namespace)
    assert api.request("GET", f"/api/v1/namespaces/{namespace}/pods", as_user="alice").status == 200

    denied = api.request("GET", "/api/v1/namespaces/default/pods", as_user="alice")
    assert (denied.status, denied.body["reason"]) == (403, "Forbidden")
    assert 'User "alice" cannot list resource "pods" in API group "" in the namespace "default"' in (
        denied.body["message"]
    )

    evict = api.evict("default", "any-pod", as_user="alice")
    assert evict.status == 403
    assert 'cannot create resource "pods/eviction"' in evict.body["message"]

    out = cluster.kubectl("get", "nodes", as_user="alice", check=False)
    assert out.returncode != 0
    assert 'forbidden: User "alice" cannot list resource "nodes"' in out.stderr


def test_audit_log_records_mutating_requests_by_user_agent(namespace, api, audit):
    since = audit.now()
    agent = "kubectl-safety/0.0.0-test"
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "audited"}}
    created = api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap, user_agent=agent)
    assert created.status == 201, created
    assert api.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/audited", user_agent=agent).status == 200

    entries = wait_until(lambda: audit.mutating_requests(since, user_agent_contains="kubectl-safety/"), 15,
                         "the create in the audit log")
    assert [(e.verb, e.resource, e.namespace, e.name, e.code) for e in entries] == [
        ("create", "configmaps", namespace, "audited", 201)
    ]
    assert entries[0].user == "kwok-admin"
