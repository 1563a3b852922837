"""The one parser and the dump reader."""

import json

import pytest

from kubectl_safety.cluster.dump import load_objects, parse_documents
from kubectl_safety.errors import InputError
from kubectl_safety.model.parse import build_snapshot, flatten
from tests.builders import make_node, make_pod

POD = make_pod("p")


def test_typed_list_items_get_kind_and_api_version():
    pairs = list(flatten({"kind": "PodList", "apiVersion": "v1", "items": [{"metadata": {"name": "x"}}]}, "f"))
    assert pairs[0][1]["kind"] == "Pod" and pairs[0][1]["apiVersion"] == "v1"


def test_yaml_multi_document_and_json_are_the_same_snapshot(tmp_path):
    import yaml

    (tmp_path / "a.yaml").write_text(yaml.safe_dump_all([POD, make_node("n1")]))
    (tmp_path / "b.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [POD, make_node("n1")]}))
    for name in ("a.yaml", "b.json"):
        pairs, _ = load_objects([str(tmp_path / name)])
        snap = build_snapshot(pairs)
        assert snap.pod("default", "p") is not None and snap.node("n1") is not None


BAD = [
    ("missing kind", {"apiVersion": "v1", "metadata": {"name": "x"}}, "missing 'kind'"),
    ("missing apiVersion", {"kind": "Pod", "metadata": {"name": "x"}}, "missing 'apiVersion'"),
    ("missing name", {"kind": "Pod", "apiVersion": "v1", "metadata": {}}, "missing 'metadata.name'"),
    ("labels not a map", {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "x", "labels": ["a"]}}, "'metadata.labels' must be a map"),
    ("containers not a list", {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "x"}, "spec": {"containers": {}}}, "'spec.containers' must be a list"),
    ("scalar document", "just text", "expected a Kubernetes object"),
]


@pytest.mark.parametrize("obj,message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_objects_name_the_field(obj, message):
    with pytest.raises(InputError, match=message):
        build_snapshot(flatten(obj, "dump.yaml"))


def test_duplicate_objects_name_both_origins():
    with pytest.raises(InputError, match="duplicate Pod default/p"):
        build_snapshot([("a.yaml", POD), ("b.yaml", POD)])


@pytest.mark.parametrize("text,message", [
    ("", "empty file"), ("{not json", "invalid JSON at line 1"), ("a: [1, 2", "invalid YAML at line"),
], ids=["empty", "broken json", "broken yaml"])
def test_unparseable_text(text, message):
    with pytest.raises(InputError, match=message):
        parse_documents(text, "f.yaml")


def test_namespace_defaults_and_cluster_scoped_kinds():
    pod = make_pod("p")
    del pod["metadata"]["namespace"]
    snap = build_snapshot([("f", pod), ("f", make_node("n1"))])
    assert snap.pod("default", "p") is not None and snap.node("n1").namespace == ""
