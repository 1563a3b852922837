"""The delete / force-delete assessment: risk codes, node state, verdicts, terminating age."""

import pytest

from kubectl_safety.analysis.explanations.common import NodeReadiness, TimelineStep
from kubectl_safety.analysis.explanations.delete import DeleteOwner
from kubectl_safety.analysis.force_delete import assess, assessment_for_explain, terminating
from tests.builders import NOW, make_node, make_pod, make_workload, snapshot

STS = ("StatefulSet", "db")
PVC = {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}


def pvc(name, modes, volume_name=None, namespace="default"):
    spec = {"accessModes": modes}
    if volume_name:
        spec["volumeName"] = volume_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def pv(name, **source):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": source}


def codes(report):
    return [r.code for r in report.risks]


def run(pod, *others, nodes=(make_node("n1"),), now=NOW, **kwargs):
    snap = snapshot(pod, *others, *nodes, now=now)
    return assess(snap.pod(pod["metadata"]["namespace"], pod["metadata"]["name"]), snap, now, **kwargs)


@pytest.mark.parametrize("pod, nodes, kwargs, expected", [
    (make_pod("db-0", owner=STS), [make_node("n1")], {"force": True},
     ["STATEFULSET_IDENTITY", "NODE_READY"]),
    (make_pod("db-0", owner=STS), [make_node("n1", ready="Unknown", heartbeat="2026-11-22T08:40:00Z")],
     {"force": True}, ["STATEFULSET_IDENTITY", "NODE_PARTITIONED"]),
    (make_pod("db-0", owner=STS), [], {"force": True}, ["STATEFULSET_IDENTITY", "NODE_GONE"]),
    (make_pod("web-1", owner=("ReplicaSet", "web-5d8")), [make_node("n1")], {"grace_period": 0},
     ["REPLICA_DUPLICATE", "NODE_READY"]),
    (make_pod("legacy", owner=None), [make_node("n1", ready="False")], {"force": True},
     ["NO_CONTROLLER", "NODE_PARTITIONED"]),
    (make_pod("db-0", owner=STS), [make_node("n1")], {}, []),
    (make_pod("db-0", owner=STS), [make_node("n1", ready="False")], {}, ["NODE_PARTITIONED"]),
    (make_pod("db-0", owner=STS, node=None, phase="Pending"), [], {"force": True}, []),
    (make_pod("job-1", owner=STS, phase="Succeeded"), [make_node("n1", ready="False")], {"force": True},
     ["NODE_PARTITIONED"]),
    (make_pod("db-0", owner=STS, meta={"finalizers": ["example.com/backup"]}), [make_node("n1")],
     {"force": True}, ["STATEFULSET_IDENTITY", "NODE_READY", "FINALIZERS"]),
    (make_pod("db-0", owner=STS), [make_node("n1")], {"force": True, "node_readable": False},
     ["STATEFULSET_IDENTITY", "NODE_UNKNOWN"]),
], ids=["sts-ready-node", "sts-partitioned-node", "sts-node-gone", "replicaset-grace-0-is-force",
        "bare-pod-notready", "graceful-ready-no-risks", "graceful-partitioned", "unscheduled-pod",
        "finished-pod-no-process-risks", "finalizers", "node-unreadable"])
def test_risk_codes(pod, nodes, kwargs, expected):
    assert codes(run(pod, nodes=nodes, **kwargs)) == expected


@pytest.mark.parametrize("pod, nodes, state, needed, verdict", [
    (make_pod("a"), [make_node("n1")], "Ready", False, "force is not needed"),
    (make_pod("a"), [make_node("n1", ready="False")], "NotReady", True, "powered off or fenced"),
    (make_pod("a"), [make_node("n1", ready="Unknown")], "Unknown", True, "powered off or fenced"),
    (make_pod("a"), [make_node("other")], "Gone", False, "Node object is gone"),
    (make_pod("a", node=None, phase="Pending"), [], "Unscheduled", False, "unscheduled"),
    (make_pod("a", phase="Failed"), [make_node("n1", ready="False")], "NotReady", False, "has finished"),
], ids=["ready", "notready", "unknown", "gone", "unscheduled", "finished"])
def test_node_state_and_verdict(pod, nodes, state, needed, verdict):
    report = run(pod, nodes=nodes, force=True)
    assert report.node.state is NodeReadiness(state)
    assert report.force_needed is needed
    assert verdict in report.verdict


def test_partitioned_message_names_heartbeat_age():
    report = run(make_pod("a"), nodes=[make_node("n1", ready="Unknown", heartbeat="2026-11-22T08:40:00Z")], force=True)
    assert report.node.heartbeat_age_seconds == 1200
    risk = next(r for r in report.risks if r.code == "NODE_PARTITIONED")
    assert risk.severity == "error"
    assert "node n1 is Unknown, last heartbeat 20m ago" in risk.message


def test_statefulset_identity_is_only_a_warning_when_node_gone():
    ready, gone = (run(make_pod("db-0", owner=STS), nodes=n, force=True) for n in ([make_node("n1")], []))
    assert ready.risks[0].severity == "error"
    assert gone.risks[0].severity == "warning"


def test_replica_duplicate_names_the_deployment():
    rs = make_workload("ReplicaSet", "web-5d8", owner=("Deployment", "web"))
    report = run(make_pod("web-1", owner=("ReplicaSet", "web-5d8")), rs, make_workload("Deployment", "web"), force=True)
    assert report.owner == DeleteOwner("ReplicaSet", "web-5d8", "Deployment/web")
    assert "ReplicaSet web-5d8 (Deployment/web)" in report.risks[0].message


VOL = [make_node("n1")]


@pytest.mark.parametrize("volumes, storage, expected, text", [
    ([PVC], [], ["RWO_VOLUME"], "claim data-db-0 (access mode not read)"),
    ([PVC], [pvc("data-db-0", ["ReadWriteOnce"])], ["RWO_VOLUME"], "claim data-db-0 is ReadWriteOnce"),
    ([PVC], [pvc("data-db-0", ["ReadWriteMany"])], [], None),
    ([PVC], [pvc("data-db-0", ["ReadWriteOnce"], "pv-1"), pv("pv-1", iscsi={"targetPortal": "10.0.0.1"})],
     ["UNSAFE_VOLUME_TYPE", "RWO_VOLUME"], "bound to pv-1 (iSCSI)"),
    ([PVC], [pvc("data-db-0", ["ReadWriteOnce"], "pv-1"), pv("pv-1", csi={"driver": "ebs.csi.aws.com"})],
     ["RWO_VOLUME"], "backed by ebs.csi.aws.com"),
    ([PVC], [pvc("data-db-0", ["ReadWriteOnce"], "pv-1"), pv("pv-1", csi={"driver": "nas.example.com"})],
     ["UNSAFE_VOLUME_TYPE", "RWO_VOLUME"], "CSI driver nas.example.com"),
    ([{"name": "share", "nfs": {"server": "nas", "path": "/x"}}], [], ["UNSAFE_VOLUME_TYPE"], "volume share is NFS"),
    ([{"name": "lun", "fc": {"lun": 0}}], [], ["UNSAFE_VOLUME_TYPE"], "volume lun is Fibre Channel"),
    ([{"name": "x", "csi": {"driver": "weird.example.com"}}], [], ["UNSAFE_VOLUME_TYPE"], "CSI driver weird.example.com"),
    ([{"name": "x", "csi": {"driver": "secrets-store.csi.k8s.io"}}], [], [], None),
    ([{"name": "x", "csi": {"driver": "weird.example.com", "readOnly": True}}], [], [], None),
    ([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}], [],
     ["RWO_VOLUME"], "claim db-0-scratch is ReadWriteOnce"),
    ([{"name": "tmp", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}], [], [], None),
], ids=["pvc-unknown-mode", "pvc-rwo", "pvc-rwx-not-single-writer", "pv-iscsi", "pv-known-csi",
        "pv-unknown-csi", "inline-nfs", "inline-fc", "inline-unknown-csi", "inline-secrets-csi",
        "inline-readonly-csi", "generic-ephemeral", "node-local-volumes"])
def test_volume_risks(volumes, storage, expected, text):
    report = run(make_pod("db-0", owner=None, volumes=volumes), nodes=VOL, force=True, storage=storage)
    found = [r for r in report.risks if r.code in ("RWO_VOLUME", "UNSAFE_VOLUME_TYPE")]
    assert [r.code for r in found] == expected
    if text:
        assert any(text in r.message for r in found)


@pytest.mark.parametrize("storage, expected, text", [
    ([pvc("data-db-0", ["ReadWriteOnce"])], ["RWO_VOLUME"], "claim data-db-0 is ReadWriteOnce"),
    ([pvc("data-db-0", ["ReadWriteMany"])], [], None),
    ([pvc("data-db-0", ["ReadWriteMany"], "pv-1"), pv("pv-1", nfs={"server": "nas", "path": "/x"})],
     ["UNSAFE_VOLUME_TYPE"], "bound to pv-1 (NFS)"),
], ids=["dump-rwo", "dump-rwx", "dump-nfs-pv"])
def test_volume_risks_read_the_snapshots_claims(storage, expected, text):
    """A dump with pvc,pv: the access modes and volume types come from it, not 'not read'."""
    report = run(make_pod("db-0", owner=None, volumes=[PVC]), *storage, nodes=VOL, force=True)
    found = [r for r in report.risks if r.code in ("RWO_VOLUME", "UNSAFE_VOLUME_TYPE")]
    assert [r.code for r in found] == expected
    if text:
        assert any(text in r.message for r in found)


def test_volume_risks_only_for_force():
    report = run(make_pod("db-0", owner=STS, volumes=[PVC]), nodes=VOL)
    assert codes(report) == []


TERMINATING = {"deletionTimestamp": "2026-11-22T08:50:30Z", "deletionGracePeriodSeconds": 30}


@pytest.mark.parametrize("meta, nodes, since, overdue, severity, text", [
    (TERMINATING, [make_node("n1", ready="Unknown")], 600, 570, "warning", "the node is not confirming"),
    (TERMINATING, [make_node("n1")], 600, 570, "warning", "the kubelet has not finished"),
    ({"deletionTimestamp": "2026-11-22T09:00:20Z", "deletionGracePeriodSeconds": 30}, [make_node("n1")],
     10, 0, "info", "can only shorten"),
], ids=["stuck-on-partitioned-node", "stuck-on-ready-node", "within-grace"])
def test_already_terminating(meta, nodes, since, overdue, severity, text):
    report = run(make_pod("a", meta=meta), nodes=nodes, force=True)
    assert report.terminating.for_seconds == since
    assert report.terminating.overdue_seconds == overdue
    risk = next(r for r in report.risks if r.code == "ALREADY_TERMINATING")
    assert risk.severity == severity and text in risk.message


def test_terminating_without_clock_has_no_ages():
    stuck, running = snapshot(make_pod("a", meta=TERMINATING), make_pod("b")).pods
    assert terminating(stuck, None).for_seconds is None
    assert terminating(running, NOW) is None


@pytest.mark.parametrize("grace, meta, force, seconds, why", [
    (None, None, False, 120, "spec.terminationGracePeriodSeconds"),
    (10, None, False, 10, "from the delete request"),
    (None, None, True, 0, "from the delete request"),
    (60, {"deletionTimestamp": "2026-11-22T09:00:20Z", "deletionGracePeriodSeconds": 30}, False, 30,
     "can only be shortened"),
], ids=["pod-own", "flag", "force", "terminating-cannot-lengthen"])
def test_grace_period_and_timeline(grace, meta, force, seconds, why):
    pod = make_pod("a", terminationGracePeriodSeconds=120, meta=meta)
    report = run(pod, grace_period=grace, force=force)
    assert report.grace_period_seconds == seconds and why in report.grace_why
    last = report.timeline[-1]
    if seconds:
        assert last == TimelineStep(seconds, "SIGKILL to anything still running")
    else:
        assert any("processes may still run" in step.event for step in report.timeline)


def test_explain_shows_the_force_assessment():
    snap = snapshot(make_pod("db-0", owner=STS), make_node("n1"))
    report = assessment_for_explain(snap.pods[0], snap, NOW)
    assert report.force is True and codes(report) == ["STATEFULSET_IDENTITY", "NODE_READY"]


def test_assessment_is_pure_and_published_as_json():
    import json

    from kubectl_safety.cli.published import published

    pod = make_pod("db-0", owner=STS, volumes=[PVC], meta=TERMINATING)
    before = json.dumps(pod, sort_keys=True)
    report = published(run(pod, force=True))
    assert json.loads(json.dumps(report)) == report
    assert report["node"]["state"] == "Ready" and report["terminating"]["gracePeriodSeconds"] == 30
    assert json.dumps(pod, sort_keys=True) == before


OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}


@pytest.mark.parametrize("node, needed, verdict, risks", [
    (make_node("n1", ready="False", taints=[OUT_OF_SERVICE]), False, "pod garbage collector force-deletes",
     ["STATEFULSET_IDENTITY", "NODE_OUT_OF_SERVICE"]),
    (make_node("n1", ready="Unknown", heartbeat="2026-11-22T08:40:00Z",
               taints=[dict(OUT_OF_SERVICE, effect="NoSchedule")]), False, "pod garbage collector force-deletes",
     ["STATEFULSET_IDENTITY", "NODE_OUT_OF_SERVICE"]),
    (make_node("n1", taints=[OUT_OF_SERVICE]), False, "the node is Ready", ["STATEFULSET_IDENTITY", "NODE_READY"]),
    (make_node("n1", ready="False", taints=[{"key": "example.com/out-of-service", "effect": "NoExecute"}]), True,
     "powered off or fenced", ["STATEFULSET_IDENTITY", "NODE_PARTITIONED"]),
], ids=["notready-out-of-service", "unknown-out-of-service-any-effect", "ready-with-the-taint", "other-taint-key"])
def test_force_delete_on_an_out_of_service_node(node, needed, verdict, risks):
    """``gcTerminating`` force-deletes terminating pods on a node that is not Ready and carries the
    out-of-service taint (any value or effect): a graceful delete finishes there without force."""
    report = run(make_pod("db-0", owner=STS), nodes=[node], force=True)
    assert (report.force_needed, codes(report)) == (needed, risks)
    assert verdict in report.verdict
