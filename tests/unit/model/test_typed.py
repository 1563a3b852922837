"""The typed model: the msgspec decoder and the pure-Python path give the same trimmed objects and
the same errors; unread fields are skipped; a dump's bytes are held once."""

import copy
import json
import sys

import pytest

from kubectl_safety.cluster.dump import decode_dump, load_objects
from kubectl_safety.errors import InputError
from kubectl_safety.model import typed
from kubectl_safety.model.parse import build_snapshot
from tests.builders import make_node, make_pdb, make_pod

pytest.importorskip("msgspec")


def _pod(**spec):
    pod = make_pod("web-1", node="n1", cpu="100m", labels={"app": "web"})
    pod["metadata"]["managedFields"] = [{"manager": "kubelet", "fieldsV1": {"f:spec": {}}}]
    pod["spec"]["containers"][0].update(image="nginx", env=[{"name": "A", "value": "1"}])
    pod["status"]["podIPs"] = [{"ip": "10.0.0.1"}]
    pod["spec"].update(spec)
    return pod


def _listed(*items, kind="List"):
    return {"apiVersion": "v1", "kind": kind, "items": list(items)}


def _without_kind(obj):
    obj = copy.deepcopy(obj)
    obj.pop("kind")
    obj.pop("apiVersion")
    return obj


DOCUMENTS = {
    "kubectl get -o json (List of known kinds)": _listed(_pod(), make_node("n1"), make_pdb("web", selector={"app": "web"})),
    "API server PodList (items without kind)": _listed(_without_kind(_pod()), kind="PodList"),
    "other kinds beside ours": _listed(_pod(), {"apiVersion": "v1", "kind": "ConfigMap",
                                                "metadata": {"name": "c", "namespace": "default"}, "data": {"a": "b"}},
                                       {"apiVersion": "x.io/v1", "kind": "Widget", "metadata": {"name": "w"}}),
    "null fields": _listed(_pod(nodeName=None, tolerations=None)),
    "a nested List": _listed(_listed(_pod())),
    "a wrong type where a map is expected": _listed(_pod(affinity="everywhere")),
    "a wrong type inside a list": _listed(_pod(tolerations=["all"])),
}


@pytest.fixture
def no_msgspec(monkeypatch):
    """As in the krew archive: msgspec cannot be imported."""
    monkeypatch.setitem(sys.modules, "msgspec", None)
    monkeypatch.setattr(typed, "_DECODERS", {})


def _decoded(document):
    return decode_dump([json.dumps(document, indent=4).encode()], "dump.json")


@pytest.mark.parametrize("name", DOCUMENTS)
def test_msgspec_and_pure_python_paths_give_the_same_objects(name, monkeypatch):
    fast = _decoded(DOCUMENTS[name])
    monkeypatch.setitem(sys.modules, "msgspec", None)
    monkeypatch.setattr(typed, "_DECODERS", {})
    assert _decoded(DOCUMENTS[name]) == fast


def test_msgspec_decodes_a_list_in_one_pass_without_the_generic_path(monkeypatch):
    monkeypatch.setattr(typed, "prune", lambda obj: pytest.fail("the generic path ran"))
    assert len(_decoded(DOCUMENTS["kubectl get -o json (List of known kinds)"])) == 3


@pytest.mark.parametrize("field", ["managedFields", "image", "env", "podIPs"])
def test_unread_fields_are_skipped(field):
    (_, pod), = _decoded(_listed(_pod()))
    assert field not in json.dumps(pod)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m"}


VOLUMES = {  # volume source: kept (an analysis reads it) or skipped
    "emptyDir": True, "hostPath": True, "persistentVolumeClaim": True, "ephemeral": True,  # local data, claims
    "csi": True, "nfs": True, "iscsi": True, "fc": True,  # force delete's storage risks
    "projected": False, "configMap": False, "secret": False, "downwardAPI": False, "awsElasticBlockStore": False,
}


@pytest.mark.parametrize("msgspec_path", [True, False], ids=["msgspec", "pure-python"])
@pytest.mark.parametrize("source", VOLUMES)
def test_volume_sources_no_analysis_reads_are_skipped(source, msgspec_path, monkeypatch):
    if not msgspec_path:
        monkeypatch.setitem(sys.modules, "msgspec", None)
        monkeypatch.setattr(typed, "_DECODERS", {})
    content = {"driver": "nfs.csi.k8s.io", "claimName": "data", "server": "nfs", "path": "/x", "sources": []}
    (_, pod), = _decoded(_listed(_pod(volumes=[{"name": "v", source: content}])))
    volume, = pod["spec"]["volumes"]
    assert volume.get("name") == "v" and (source in volume) == VOLUMES[source]


@pytest.mark.parametrize("where, field", [("spec", "securityContext"), ("spec", "hostNetwork"),
                                          ("spec", "serviceAccountName"), ("status", "podIP"),
                                          ("status", "hostIP")])
def test_pod_fields_no_analysis_reads_are_skipped(where, field):
    pod = _pod()
    pod[where][field] = {"runAsUser": 1} if field == "securityContext" else "x"
    (_, decoded), = _decoded(_listed(pod))
    assert field not in decoded[where]


def test_container_statuses_keep_only_what_a_resize_charges_and_how_they_ended():
    pod = _pod()
    pod["status"]["containerStatuses"] = [{"name": "app", "ready": True, "restartCount": 3, "state": {"running": {}},
                                           "allocatedResources": {"cpu": "1"}, "resources": {"requests": {"cpu": "1"}}}]
    (_, decoded), = _decoded(_listed(pod))
    assert decoded["status"]["containerStatuses"] == [{"name": "app", "restartCount": 3, "state": {"running": {}},
                                                       "allocatedResources": {"cpu": "1"},
                                                       "resources": {"requests": {"cpu": "1"}}}]


def test_the_dump_bytes_are_released_once_decoded():
    holder = [json.dumps(DOCUMENTS["kubectl get -o json (List of known kinds)"]).encode()]
    decode_dump(holder, "dump.json")
    assert holder == []


BAD = [  # (spec changes, the field the one-line error names)
    ({"containers": [{"name": "c", "ports": [{"hostPort": "80"}]}]}, "'spec.containers[0].ports[0].hostPort'"),
    ({"containers": "c"}, "'spec.containers' must be a list"),
    ({"containers": [None]}, "'spec.containers[0]' must be a map, got None"),
    ({"tolerations": [{"effect": "Sometimes"}]}, "'spec.tolerations[0].effect'"),
    ({"priority": 2 ** 40}, "'spec.priority' must be a 32-bit integer"),
]


@pytest.mark.parametrize("spec,message", BAD, ids=[m for _, m in BAD])
@pytest.mark.parametrize("decoder", ["msgspec", "pure Python"])
def test_a_wrong_type_names_the_object_and_field(spec, message, decoder, tmp_path, request):
    if decoder == "pure Python":
        request.getfixturevalue("no_msgspec")
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(_listed(make_node("n1"), _pod(**spec))))
    with pytest.raises(InputError) as e:
        build_snapshot(load_objects([str(path)])[0])
    assert f"{path} item 1: Pod web-1: {message}" in str(e.value)


def test_a_timestamp_without_a_zone_is_named(tmp_path):
    pod = _pod()
    pod["metadata"]["creationTimestamp"] = "2026-11-01T08:00:00"
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(_listed(pod)))
    with pytest.raises(InputError, match=r"'metadata.creationTimestamp' must be an RFC 3339 time with a time zone"):
        build_snapshot(load_objects([str(path)])[0])


PAGES = {  # a live LIST page: typed when every item has its kind's shape, else the generic path (None)
    "pods": (_listed(_without_kind(_pod()), kind="PodList"), "Pod", True),
    "a continue token": ({**_listed(_without_kind(_pod()), kind="PodList"), "metadata": {"continue": "t"}}, "Pod", True),
    "nodes (their Struct keeps status whole: checked again)": (
        _listed(_without_kind(make_node("n1")), kind="NodeList"), "Node", True),
    "a wrong type": (_listed(_without_kind(_pod(affinity=[])), kind="PodList"), "Pod", False),
    "a kind the model does not type": (_listed({"metadata": {"name": "x"}}, kind="WidgetList"), "Widget", False),
}


@pytest.mark.parametrize("name", PAGES)
def test_live_pages_decode_into_the_typed_model(name):
    document, kind, typed_path = PAGES[name]
    typed._decoders()  # built: pages of any size are typed
    page = typed.decode_page(json.dumps(document).encode(), kind)
    assert (page is not None) == typed_path
    if typed_path:
        assert page["metadata"] == document.get("metadata")
        assert page["items"] == [typed.prune({"kind": kind, **item}) for item in document["items"]]
        assert page.checked == (kind in typed.CHECKED_BY_TYPE)


def test_small_pages_take_the_generic_path_until_a_large_one_builds_the_decoders(monkeypatch):
    """A node-scoped command reads a few small pages: decoding them generically is cheaper than
    building the decoders; the first large page builds them, and from then on every page is typed."""
    monkeypatch.setattr(typed, "_DECODERS", {})
    small = json.dumps(_listed(_without_kind(_pod()), kind="PodList")).encode()
    assert typed.decode_page(small, "Pod") is None and typed._DECODERS == {}
    pods = [_without_kind({**_pod(), "metadata": {**_pod()["metadata"], "name": f"web-{i}"}}) for i in range(400)]
    large = json.dumps(_listed(*pods, kind="PodList")).encode()
    assert len(large) >= typed.SMALL_PAGE
    assert len(typed.decode_page(large, "Pod")["items"]) == 400 and typed._DECODERS
    assert typed.decode_page(small, "Pod") is not None


def _covers(kept, checked, path=""):
    """Where ``kept`` (a Struct tree) does not hold the shape check ``checked``: a list of paths."""
    if isinstance(checked, dict):
        if not isinstance(kept, dict):
            return [path]
        return [p for key, sub in checked.items() for p in _covers(kept.get(key), sub, f"{path}.{key}")]
    if isinstance(checked, list) and isinstance(checked[0], dict):
        return _covers(kept[0], checked[0], path + "[]") if isinstance(kept, list) else [path]
    if checked is dict and isinstance(kept, dict) or checked == [dict] and isinstance(kept, list):
        return []  # a map (or list of maps) checked only as such: a Struct is at least as strict
    return [] if kept == checked else [path]


@pytest.mark.parametrize("kind", sorted(typed.CHECKED_BY_TYPE))
def test_a_kind_checked_by_its_struct_holds_every_shape_check(kind):
    from kubectl_safety.model.schema import SCHEMAS

    assert _covers(typed.KEPT[kind], SCHEMAS[kind]) == []


def test_pods_decoded_into_structs_are_not_checked_twice(tmp_path, monkeypatch):
    from kubectl_safety.model import schema

    monkeypatch.setitem(schema._COMPILED, "Pod", lambda obj: pytest.fail("checked twice"))
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(_listed(_pod(), make_node("n1"))))
    assert len(build_snapshot(load_objects([str(path)])[0]).pods) == 1


def _kubectl_json(*items):
    """As ``kubectl get -o json`` writes a List: these keys in this order, 4-space indentation."""
    return json.dumps({"apiVersion": "v1", "items": list(items), "kind": "List",
                       "metadata": {"resourceVersion": ""}}, indent=4) + "\n"


SLICED = {  # (file text, whether it is decoded slice by slice)
    "kubectl get -o json": (_kubectl_json(_pod(), make_node("n1"), make_pdb("web", selector={"app": "web"})), True),
    "one item": (_kubectl_json(_pod()), True),
    "compact JSON": (json.dumps(_listed(_pod())), False),
    # the slice holding an item the types refuse is decoded item by item: that one generically
    "a kind the Structs do not know": (_kubectl_json(_pod(), {"apiVersion": "x/v1", "kind": "Widget",
                                                              "metadata": {"name": "w"}}), True),
    "a wrong type": (_kubectl_json(_pod(), _pod(affinity=[])), True),
    "a null where a value belongs": (_kubectl_json(_pod(), _pod(nodeName=None), _pod(schedulerName=None)), True),
    "no items": (_kubectl_json(), False),
    "cut short": (_kubectl_json(_pod(), _pod())[:-40], False),
}


BROKEN_PODS = {"a wrong type": 1, "a null where a value belongs": 2}  # pods the Structs refuse


@pytest.mark.parametrize("name", SLICED)
@pytest.mark.parametrize("slice_bytes", [64, 1 << 20])
def test_kubectl_json_dumps_decode_slice_by_slice_into_the_same_objects(name, slice_bytes, tmp_path, monkeypatch):
    from kubectl_safety.cluster.dump import _decode_sliced

    text, sliced = SLICED[name]
    path = tmp_path / "dump.json"
    path.write_text(text)
    monkeypatch.setattr(typed, "SLICE", slice_bytes)
    pairs = _decode_sliced(str(path))
    assert (pairs is not None) == sliced
    if sliced:
        whole = decode_dump([text.encode()], str(path))
        assert list(pairs) == whole
        good = sum(obj["kind"] == "Pod" for _, obj in pairs) - BROKEN_PODS.get(name, 0)
        assert len(pairs.checked) == len(whole.checked) == good


def test_a_thread_never_sees_the_decoders_half_built(monkeypatch):
    """Whole-cluster reads decode pages on two threads: while one builds the decoders, the other
    sees none (and takes the generic path), never some without ``pages`` (a KeyError)."""
    import msgspec

    from kubectl_safety.model import typed

    seen, defstruct = [], msgspec.defstruct

    def watching(name, *args, **kwargs):
        if name == "TypedList":  # late in the build: another thread reads the decoders now
            seen.append(dict(typed._DECODERS))
        return defstruct(name, *args, **kwargs)

    monkeypatch.setattr(typed, "_DECODERS", {})
    monkeypatch.setattr(msgspec, "defstruct", watching)
    assert "pages" in typed._decoders()
    assert seen == [{}]
