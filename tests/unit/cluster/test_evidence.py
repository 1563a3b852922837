"""Our own actions leave evidence: events.k8s.io/v1 Events on the pods and nodes a drain acts on, valid as
the API server validates them; a failure to write one never fails the drain and is reported once."""

import time
from datetime import datetime, timezone

from kubectl_safety.cluster.evidence import EventWriter, event_body
from kubectl_safety.engine.drainer import Drainer
from tests.unit.fake_api import FakeApi, entry, pod

NOW = datetime(2026, 12, 2, 4, 0, 0, 123, tzinfo=timezone.utc)


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"u-{name}"}, "spec": {}}


def test_event_body_passes_the_api_servers_validation():
    body = event_body({"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": ""}, "Cordoned", "Cordon",
                      "drain: " + "é" * 600, now=NOW, instance="safety.kubectl.io-" + "h" * 200)
    assert body["metadata"]["namespace"] == "default"  # a cluster-scoped object's events live in default
    assert body["metadata"]["name"].startswith("n1.")
    assert body["eventTime"] == "2026-12-02T04:00:00.000123Z"  # RFC 3339 with exactly 6 fractional digits
    assert len(body["note"].encode()) <= 1024 and body["note"].encode().decode()  # cut at a character
    assert len(body["reportingInstance"].encode()) <= 128
    assert "uid" not in body["regarding"] and body["reportingController"] == "safety.kubectl.io"
    assert not any(k.startswith("deprecated") for k in body)


def test_a_drain_records_its_cordons_and_evictions_naming_the_command_and_the_wave():
    pods = [pod("p0", "n1"), pod("p1", "n1")]
    api = FakeApi(pods, nodes=[node("n1")])
    api.user_agent_suffix = " (drain)"
    progress = []
    drainer = Drainer(api, on_event=progress.append)
    drainer.cordon(["n1"])
    result = drainer.drain(["n1"], [entry(p) for p in pods], deadline=time.monotonic() + 10)
    assert result.status == "drained"
    cordon, *evictions = api.events
    assert (cordon["regarding"]["kind"], cordon["metadata"]["namespace"], cordon["reason"], cordon["action"]) == (
        "Node", "default", "Cordoned", "Cordon")
    assert cordon["note"] == "drain: cordoned node n1"
    assert [(e["regarding"]["name"], e["regarding"]["uid"], e["reason"], e["action"], e["note"])
            for e in evictions] == [(f"p{i}", f"uid-p{i}", "Evicted", "Evict", "drain: evicted from node n1 (wave 1)")
                                    for i in range(2)]
    assert not [e for e in progress if e["event"] == "evidence-not-recorded"]


def test_an_event_that_cannot_be_written_never_fails_the_drain_and_is_reported_once():
    pods = [pod(f"p{i}", "n1") for i in range(3)]
    api = FakeApi(pods, nodes=[node("n1")])
    api.event_status = 403
    progress = []
    result = Drainer(api, on_event=progress.append).drain(["n1"], [entry(p) for p in pods],
                                                          deadline=time.monotonic() + 10)
    assert result.status == "drained" and len(api.evictions()) == 3
    warnings = [e for e in progress if e["event"] == "evidence-not-recorded"]
    assert len(warnings) == 1 and "403" in warnings[0]["message"]
    assert [m for m, p in api.requests if "events.k8s.io" in p] == ["POST"]  # not tried again


def test_a_note_names_the_command_and_the_wave():
    api = FakeApi()
    EventWriter(api, "rollout").node("n1", "Uncordoned", "Uncordon", "uncordoned node n1", wave=2)
    assert api.events[0]["note"] == "rollout: uncordoned node n1 (wave 2)"
