"""Events, read through core/v1 or events.k8s.io/v1, parse into one ``Event`` and are indexed by
the object they regard: by its uid and by (kind, namespace, name)."""

import json

import pytest

from kubectl_safety.cluster.source import load_snapshot
from kubectl_safety.errors import InputError
from kubectl_safety.model.events import EVENT_NOTE_LIMIT, Event, ObjectRef
from kubectl_safety.model.meta import parse_time
from kubectl_safety.model.parse import build_snapshot

POD = {"kind": "Pod", "namespace": "web", "name": "api-1", "uid": "u-pod"}
PREEMPTOR = {"kind": "Pod", "namespace": "batch", "name": "big", "uid": "u-big"}


def core_event(name="api-1.1", **fields):
    """A core/v1 Event as ``kubectl get events -o json`` shows it."""
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": "web", "uid": f"u-{name}",
                         "creationTimestamp": "2026-01-01T10:00:00Z"},
            "involvedObject": dict(POD), "reason": "Preempted", "message": "Preempted by pod u-big on node n1",
            "source": {"component": "default-scheduler", "host": "cp-1"}, "type": "Normal",
            "firstTimestamp": "2026-01-01T10:00:00Z", "lastTimestamp": "2026-01-01T10:05:00Z", "count": 3,
            "eventTime": None, "reportingComponent": "", "reportingInstance": "", **fields}


def v1_event(name="api-1.2", **fields):
    """An events.k8s.io/v1 Event."""
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name, "namespace": "web", "uid": f"u-{name}",
                         "creationTimestamp": "2026-01-01T11:00:00Z"},
            "regarding": dict(POD), "related": dict(PREEMPTOR), "reason": "Preempted", "action": "Preempting",
            "note": "Preempted by pod u-big on node n1", "type": "Normal",
            "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-cp-1",
            "eventTime": "2026-01-01T11:00:00.123456Z",
            "series": {"count": 4, "lastObservedTime": "2026-01-01T11:30:00.000000Z"}, **fields}


def at(text):
    return parse_time(text)


VERSIONS = {
    "core/v1 (involvedObject, message, source, first/lastTimestamp, count)": (
        core_event(), dict(regarding=ObjectRef(**{k: POD[k] for k in ("kind", "namespace", "name", "uid")}),
                           related=None, reason="Preempted", action="", note="Preempted by pod u-big on node n1",
                           type="Normal", reporting_controller="default-scheduler", reporting_instance="cp-1",
                           time=at("2026-01-01T10:05:00Z"), first_time=at("2026-01-01T10:00:00Z"), count=3)),
    "events.k8s.io/v1 (regarding, related, note, series)": (
        v1_event(), dict(regarding=ObjectRef("Pod", "web", "api-1", "u-pod"),
                         related=ObjectRef("Pod", "batch", "big", "u-big"), reason="Preempted", action="Preempting",
                         note="Preempted by pod u-big on node n1", type="Normal",
                         reporting_controller="default-scheduler", reporting_instance="default-scheduler-cp-1",
                         time=at("2026-01-01T11:30:00Z"), first_time=at("2026-01-01T11:00:00Z"), count=4)),
    "events.k8s.io/v1 with the deprecated fields a core/v1 writer set": (
        v1_event(note=None, reportingController=None, reportingInstance=None, eventTime=None, series=None,
                 related=None, action=None, deprecatedSource={"component": "kubelet", "host": "n1"},
                 deprecatedFirstTimestamp="2026-01-01T09:00:00Z", deprecatedLastTimestamp="2026-01-01T09:10:00Z",
                 deprecatedCount=7),
        dict(related=None, action="", note="", reporting_controller="kubelet", reporting_instance="n1",
             time=at("2026-01-01T11:00:00Z"), first_time=at("2026-01-01T09:00:00Z"), count=7)),
    "core/v1 written by an events.k8s.io client (reportingComponent, eventTime, series)": (
        core_event(source={}, firstTimestamp=None, lastTimestamp=None, count=None,
                   reportingComponent="sigs.k8s.io.descheduler", reportingInstance="desched-1",
                   eventTime="2026-01-01T10:00:00.5Z", series={"count": 2, "lastObservedTime": "2026-01-01T10:20:00Z"},
                   action="Descheduled", related=dict(PREEMPTOR)),
        dict(reporting_controller="sigs.k8s.io.descheduler", reporting_instance="desched-1", action="Descheduled",
             related=ObjectRef("Pod", "batch", "big", "u-big"), count=2,
             time=at("2026-01-01T10:20:00Z"), first_time=at("2026-01-01T10:00:00Z"))),
    "only a creation time": (
        core_event(firstTimestamp=None, lastTimestamp=None, count=None, source=None),
        dict(time=at("2026-01-01T10:00:00Z"), first_time=at("2026-01-01T10:00:00Z"), count=1,
             reporting_controller="", reporting_instance="")),
}


@pytest.mark.parametrize("name", VERSIONS)
def test_an_event_of_either_api_version_parses_into_one_event(name):
    raw, expected = VERSIONS[name]
    raw = {k: v for k, v in raw.items() if v is not None}
    (event,) = build_snapshot([("test", raw)]).events
    assert isinstance(event, Event)
    assert (event.namespace, event.name, event.uid) == ("web", raw["metadata"]["name"], raw["metadata"]["uid"])
    assert {field: getattr(event, field) for field in expected} == expected


def test_an_event_note_is_bounded_as_validation_bounds_it():
    long = "é" * 4000 + "tail"
    (event,) = build_snapshot([("test", v1_event(note=long, reason="R" * 300))]).events
    assert len(event.note.encode()) <= EVENT_NOTE_LIMIT and long.startswith(event.note)
    assert event.reason == "R" * 128


def test_an_event_of_the_wrong_shape_names_its_field():
    with pytest.raises(InputError, match=r"Event api-1.2: 'series.count' must be a 32-bit integer"):
        build_snapshot([("test", v1_event(series={"count": "many"}))])


def test_events_are_indexed_by_the_uid_and_the_name_of_what_they_regard_oldest_first():
    older = core_event("old", involvedObject={**POD, "uid": "u-gone"}, lastTimestamp="2026-01-01T08:00:00Z",
                       firstTimestamp="2026-01-01T08:00:00Z", metadata={"name": "old", "namespace": "web",
                                                                        "uid": "u-old"})
    node = core_event("n1.1", involvedObject={"kind": "Node", "name": "n1", "uid": "u-n1"},
                      metadata={"name": "n1.1", "namespace": "default", "uid": "u-n1.1"})
    snap = build_snapshot([("a", v1_event()), ("b", core_event()), ("c", older), ("d", node)])
    assert [e.name for e in snap.events_about_uid("u-pod")] == ["api-1.1", "api-1.2"]
    assert [e.name for e in snap.events_about("Pod", "web", "api-1")] == ["old", "api-1.1", "api-1.2"]
    assert [e.name for e in snap.events_about("Node", "", "n1")] == ["n1.1"]
    assert snap.events_about_uid("") == [] and snap.events_about("Pod", "web", "other") == []
    assert [e.name for e in snap.replace(source="again").events_about_uid("u-gone")] == ["old"]


def test_a_dump_of_events_through_both_api_versions_holds_each_event_once(tmp_path):
    """``kubectl get events -A -o json`` and ``kubectl get events.events.k8s.io -A -o json`` of the
    same cluster name the same events: one each; nothing else changes what the dump holds."""
    same = v1_event("api-1.1", metadata={"name": "api-1.1", "namespace": "web", "uid": "u-api-1.1",
                                           "creationTimestamp": "2026-01-01T10:00:00Z"})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api-1", "namespace": "web", "uid": "u-pod",
                                                           "creationTimestamp": "2026-01-01T09:00:00Z"},
           "spec": {"containers": [{"name": "c"}], "nodeName": "n1"}, "status": {"phase": "Running"}}
    core = tmp_path / "events.json"
    core.write_text(json.dumps({"apiVersion": "v1", "items": [core_event(), pod], "kind": "List",
                                "metadata": {"resourceVersion": ""}}, indent=4))  # as kubectl writes it
    v1 = tmp_path / "events-v1.json"
    v1.write_text(json.dumps({"apiVersion": "events.k8s.io/v1", "kind": "EventList",
                              "items": [{k: v for k, v in e.items() if k != "kind"} for e in (same, v1_event())]}))
    snap = load_snapshot(snapshot_paths=[str(core), str(v1)])
    assert sorted(e.name for e in snap.events) == ["api-1.1", "api-1.2"]
    assert [e.name for e in snap.events_about_uid("u-pod")] == ["api-1.1", "api-1.2"]
    assert [p.name for p in snap.pods] == ["api-1"]


def test_two_events_of_one_name_and_different_uids_are_still_a_duplicate():
    other = core_event(metadata={"name": "api-1.1", "namespace": "web", "uid": "another"})
    with pytest.raises(InputError, match="duplicate Event web/api-1.1"):
        build_snapshot([("a", core_event()), ("b", other)])
