"""Live reads: LIST pages through ``Connection`` into a snapshot (pages msgspec typed are neither
trimmed nor shape-checked a second time; every other page is, and a bad field is still named),
and the queries of a command read one or two at a time, answered in their order."""

import json
import threading
import time

import pytest

from kubectl_safety.cluster.live import Connection
from kubectl_safety.cluster.source import Query, fetch, load_snapshot
from kubectl_safety.errors import ClusterError, InputError
from kubectl_safety.model import parse, typed
from tests.builders import make_node, make_pod

pytest.importorskip("msgspec")


class CannedTransport:
    """Answers each LIST with the page its resource names (no network)."""

    host = "https://canned.invalid"

    def __init__(self, pages):
        self.pages = pages

    def auth_headers(self):
        return {}

    def request(self, method, url, headers, body, timeout):
        resource = url.split("?")[0].rsplit("/", 1)[-1]
        return 200, json.dumps(self.pages[resource]).encode()


def _page(kind, *items):
    for item in items:
        item.pop("kind"), item.pop("apiVersion")
    return {"kind": f"{kind}List", "apiVersion": "v1", "metadata": {"resourceVersion": "7"}, "items": list(items)}


def _load(pages, monkeypatch):
    """The snapshot, and for each object the ``typed`` flag its shape check was called with."""
    calls, check_shape = {}, parse.check_shape

    def recording(obj, kind, workload, checked_by_type=False):
        calls[obj["metadata"]["name"]] = checked_by_type
        return check_shape(obj, kind, workload, checked_by_type)

    monkeypatch.setattr(parse, "check_shape", recording)
    typed._decoders()  # built: pages of any size are typed
    connection = Connection(_transport=CannedTransport(pages))
    snapshot = load_snapshot(connection=connection, queries=[Query("nodes"), Query("pods")])
    return snapshot, calls


CASES = {  # name: (pods page, expected checked_by_type of pod "web-1", error or None)
    "typed pods are checked once, by their Struct": (_page("Pod", make_pod("web-1", node="n1")), True, None),
    "a pod the Structs refuse goes the generic way, named": (
        _page("Pod", make_pod("web-1", node="n1", tolerations=["all"])), None,
        "pods from the API server item 0: Pod web-1: 'spec.tolerations[0]' must be a map"),
}


@pytest.mark.parametrize("name", CASES)
def test_live_pages_are_checked_once(name, monkeypatch):
    pods, checked, error = CASES[name]
    pages = {"nodes": _page("Node", make_node("n1")), "pods": pods}
    if error:
        with pytest.raises(InputError) as e:
            _load(pages, monkeypatch)
        assert str(e.value) == error
        return
    snapshot, calls = _load(pages, monkeypatch)
    assert calls == {"n1": False, "web-1": checked}  # nodes keep whole subtrees: checked here
    assert [p.name for p in snapshot.pods] == ["web-1"] and snapshot.pods[0].raw["apiVersion"] == "v1"


class SlowConnection:
    """Each read takes a while; records how many ran at once. ``pdbs`` are forbidden."""

    host = "https://slow.invalid"

    def __init__(self):
        self.running = self.peak = 0
        self.lock = threading.Lock()

    def _read(self, resource, name=None):
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        time.sleep(0.03)
        with self.lock:
            self.running -= 1
        if resource == "poddisruptionbudgets":
            raise ClusterError("poddisruptionbudgets is Forbidden")
        kind = "Node" if resource == "nodes" else "Pod"
        return {"kind": kind, "apiVersion": "v1", "metadata": {"name": name or resource}}

    def get(self, resource, name, namespace=None, optional=False):
        return self._read(resource, name)

    def list(self, resource, namespace=None, *, chunk_size=500, checked=None, **selectors):
        return {"kind": "List", "apiVersion": "v1", "items": [self._read(resource)]}


READS = {  # name: (queries, reads at once)
    "node-scoped: one after the other": (
        [Query("nodes", name="n1"), Query("pods", field_selector="spec.nodeName=n1"),
         Query("poddisruptionbudgets", optional=True), Query("daemonsets")], 1),
    "whole cluster: two at a time": (
        [Query("nodes"), Query("pods"), Query("poddisruptionbudgets", optional=True), Query("daemonsets")], 2),
}


@pytest.mark.parametrize("name", READS)
def test_queries_are_answered_in_their_order(name):
    queries, at_once = READS[name]
    connection, warnings = SlowConnection(), []
    pairs = list(fetch(connection, queries, warnings=warnings))
    read = [q.resource for q in queries if q.resource != "poddisruptionbudgets"]
    assert [origin.split()[0] for origin, _ in pairs] == read
    assert warnings == ["poddisruptionbudgets is Forbidden "
                        "(continuing without poddisruptionbudgets: the analysis is partial)"]
    assert connection.peak == at_once


def test_a_failed_whole_cluster_read_is_raised_in_its_place():
    queries = [Query("nodes"), Query("pods"), Query("poddisruptionbudgets"), Query("daemonsets")]
    with pytest.raises(ClusterError, match="Forbidden"):
        list(fetch(SlowConnection(), queries))
