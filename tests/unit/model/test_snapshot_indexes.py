"""Snapshots made by ``replace`` share the indexes of the fields they keep with the snapshot they
came from, built once whichever asks first; the indexes of changed fields are their own."""

import pytest

from tests.builders import make_node, make_pod, make_workload, snapshot


def base():
    return snapshot(make_node("n1"), make_node("n2"), make_pod("a", node="n1"), make_pod("b", node="n2"),
                    make_workload("ReplicaSet", "rs"))


CASES = {
    "pods changed: the workload index is shared": ("pods", "_workloads_by_uid", True),
    "pods changed: the workload annotation index is shared": ("pods", "_workloads_by_annotation", True),
    "pods changed: the node index is shared": ("pods", "_nodes_by_name", True),
    "pods changed: the pod indexes are rebuilt": ("pods", "_pods_by_key", False),
    "nodes changed: the pod index is shared": ("nodes", "_pods_by_node", True),
    "nodes changed: the node index is rebuilt": ("nodes", "_nodes_by_name", False),
}


@pytest.mark.parametrize("name", CASES)
def test_an_index_is_shared_only_while_its_field_is_unchanged(name):
    field, index, shared = CASES[name]
    origin = base()
    kept = getattr(origin, field)[:1]
    derived = origin.replace(**{field: kept}).replace(source="again")  # two steps from the origin
    built = getattr(derived, index)  # asked of the derived snapshot first
    assert (built is getattr(origin, index)) is shared
    assert len(getattr(derived, index)) == (len(getattr(origin, index)) if shared else 1)


HAS_POD = {  # (namespace, name) -> present
    ("default", "a"): True, ("default", "b"): True, ("other", "a"): False, ("default", "c"): False}


@pytest.mark.parametrize("indexed", [False, True], ids=["by-scan", "by-index"])
@pytest.mark.parametrize("key", HAS_POD, ids=["/".join(k) for k in HAS_POD])
def test_has_pod_answers_as_the_key_index_with_or_without_it(key, indexed):
    snap = base()
    if indexed:
        snap.pod("default", "a")  # builds the key index
    assert snap.has_pod(*key) is HAS_POD[key]
    assert ("_pods_by_key" in snap.__dict__) is indexed  # a single question does not build it


@pytest.mark.parametrize("pod_namespace, owned", [("default", True), ("other", False)])
def test_an_owner_reference_names_an_object_of_the_pods_own_namespace(pod_namespace, owned):
    pod = make_pod("a", pod_namespace, owner=("ReplicaSet", "rs"))
    pod["metadata"]["ownerReferences"][0]["uid"] = "uid-default-rs"  # the ReplicaSet's, in namespace default
    snap = snapshot(make_node("n1"), make_workload("ReplicaSet", "rs"), pod)
    pod = snap.pod(pod_namespace, "a")
    assert (snap.owner(pod) is not None) is owned
