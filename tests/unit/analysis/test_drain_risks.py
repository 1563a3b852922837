"""The SAFE contract of a drain plan: each risk with its code and objects, --accept-risk, volumes."""

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.risks import RISKS
from kubectl_safety.cli.risks import accepted_risks
from kubectl_safety.errors import UsageError
from tests.builders import NOW, make_node, make_pdb, make_pod, snapshot, spread
from tests.published import plan_drain

APP = {"app": "db"}
ZONE = "topology.kubernetes.io/zone"
TOLERATE_ALL = [{"operator": "Exists"}]


def pvc(name, volume="", cls="zonal", modes=("ReadWriteOnce",), namespace="default"):
    spec = {"accessModes": list(modes), "storageClassName": cls, "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": spec, "status": {"phase": "Bound" if volume else "Pending"}}


def pv(name, zone=None, cls="zonal", claim=None, labels=None):
    spec = {"accessModes": ["ReadWriteOnce"], "storageClassName": cls, "capacity": {"storage": "1Gi"}}
    if zone:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}}
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec, "status": {"phase": "Bound" if claim else "Available"}}


def storage_class(name="zonal", mode="WaitForFirstConsumer", provisioner="ebs.csi.aws.com", topologies=None):
    out = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
           "provisioner": provisioner, "volumeBindingMode": mode}
    if topologies:
        out["allowedTopologies"] = topologies
    return out


def with_claim(name="db-0", node="n1", claim="data", **kw):
    return make_pod(name, node=node, labels=APP, owner=("StatefulSet", "db"),
                    volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim}}], **kw)


TWO_ZONES = [make_node("n1", zone="a"), make_node("n2", zone="a"), make_node("n3", zone="b")]


def plan(*objects, nodes=("n1",), **options):
    return plan_drain(snapshot(*objects), list(nodes), DrainOptions(**options), NOW)


def risk_codes(report) -> list:
    return [r["code"] for r in report["risks"]]

OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}

# (id, objects, drained, options, expected risk codes, (code, object kind/name that must be listed))
SCENARIOS = [
    ("replacement-fits-nowhere", [make_node("n1"), make_node("n2", cpu="1"), make_pod("big", cpu="2")], ("n1",), {},
     ["REPLACEMENT_UNPLACEABLE"], ("REPLACEMENT_UNPLACEABLE", "Pod", "big")),
    ("replacement-tolerating-unschedulable-returns", [make_node("n1"), make_node("n2"),
                                                      make_pod("addon", tolerations=TOLERATE_ALL)], ("n1",), {},
     ["REPLACEMENT_RETURNS_TO_NODE"], ("REPLACEMENT_RETURNS_TO_NODE", "Node", "n1")),
    ("disable-eviction-bypasses-a-pdb", [make_node("n1"), make_node("n2"), make_pod("db-0", labels=APP),
                                         make_pdb("db", selector=APP, min_available=1, allowed=0, healthy=1,
                                                  desired=1, expected=1)],
     ("n1",), {"disable_eviction": True}, ["PDB_BYPASSED"], ("PDB_BYPASSED", "PodDisruptionBudget", "db")),
    ("disable-eviction-within-the-budget", [make_node("n1"), make_node("n2"), make_pod("db-0", labels=APP),
                                            make_pdb("db", selector=APP, allowed=1, healthy=2, desired=1, expected=2)],
     ("n1",), {"disable_eviction": True}, [], None),
    ("node-unreachable", [make_node("n1", ready="Unknown", heartbeat="2026-11-22T08:40:00Z"), make_node("n2"),
                          make_pod("a")], ("n1",), {}, ["NODE_UNREACHABLE"], ("NODE_UNREACHABLE", "Node", "n1")),
    ("node-not-ready", [make_node("n1", ready="False"), make_node("n2"), make_pod("a")], ("n1",), {},
     ["NODE_NOT_READY"], ("NODE_NOT_READY", "Pod", "a")),
    ("out-of-service-not-ready-node-pod-gc-force-deletes",
     [make_node("n1", ready="False", taints=[OUT_OF_SERVICE]), make_node("n2"), make_pod("a")], ("n1",), {}, [], None),
    ("out-of-service-unreachable-node-pod-gc-force-deletes",
     [make_node("n1", ready="Unknown", taints=[OUT_OF_SERVICE]), make_node("n2"), make_pod("a")], ("n1",), {}, [],
     None),
    ("finalizer-holds-an-evicted-pod",
     [make_node("n1"), make_node("n2"), make_pod("held", meta={"finalizers": ["example.com/backup"]})], ("n1",), {},
     ["POD_HELD_BY_FINALIZER"], ("POD_HELD_BY_FINALIZER", "Pod", "held")),
    ("finalizer-holds-a-pod-the-pod-gc-force-deletes",
     [make_node("n1", ready="False", taints=[OUT_OF_SERVICE]), make_node("n2"),
      make_pod("held", meta={"finalizers": ["example.com/backup"]})], ("n1",), {},
     ["POD_HELD_BY_FINALIZER"], ("POD_HELD_BY_FINALIZER", "Pod", "held")),
    ("job-tracking-finalizer-is-removed-by-the-job-controller",
     [make_node("n1"), make_node("n2"), make_pod("job-x", owner=("Job", "x"),
                                                 meta={"finalizers": ["batch.kubernetes.io/job-tracking"]})],
     ("n1",), {}, [], None),
    ("unreachable-node-with-only-skipped-pods", [make_node("n1", ready="Unknown"), make_node("n2")], ("n1",), {}, [],
     None),
    ("pdb-never-allows", [make_node("n1"), make_node("n2"), make_pod("db-0", labels=APP),
                          make_pdb("db", selector=APP, min_available=1, allowed=0, healthy=1, desired=1, expected=1)],
     ("n1",), {}, ["PDB_NEVER_ALLOWS"], ("PDB_NEVER_ALLOWS", "Pod", "db-0")),
    ("unmanaged-pod-without-force", [make_node("n1"), make_node("n2"), make_pod("bare", owner=None)], ("n1",), {},
     ["POD_NOT_EVICTABLE"], ("POD_NOT_EVICTABLE", "Pod", "bare")),
    ("unmanaged-pod-with-force-is-accepted-by-the-flag", [make_node("n1"), make_node("n2"), make_pod("bare", owner=None)],
     ("n1",), {"force": True}, [], None),
    ("longer-than-timeout", [make_node("n1"), make_node("n2"), make_pod("slow", terminationGracePeriodSeconds=600)],
     ("n1",), {"timeout": 60}, ["DRAIN_TIMEOUT"], ("DRAIN_TIMEOUT", "Node", "n1")),
    ("zonal-pv-has-no-other-node-in-its-zone", TWO_ZONES[:1] + TWO_ZONES[2:] + [
        with_claim(), pvc("data", "pv-a"), pv("pv-a", zone="a", claim="data", labels={ZONE: "a"}), storage_class()],
     ("n1",), {}, ["REPLACEMENT_UNPLACEABLE"], ("REPLACEMENT_UNPLACEABLE", "Pod", "db-0")),
    ("zonal-pv-follows-its-zone", TWO_ZONES + [with_claim(), pvc("data", "pv-a"), pv("pv-a", zone="a", claim="data"),
                                               storage_class()], ("n1",), {}, [], None),
    ("unbound-immediate-claim", TWO_ZONES + [with_claim(), pvc("data", cls="now"), storage_class("now", "Immediate")],
     ("n1",), {}, ["REPLACEMENT_UNPLACEABLE"], ("REPLACEMENT_UNPLACEABLE", "Pod", "db-0")),
    ("wait-for-first-consumer-outside-allowed-topologies",
     TWO_ZONES[:1] + TWO_ZONES[2:] + [with_claim(), pvc("data"), storage_class(topologies=[
         {"matchLabelExpressions": [{"key": ZONE, "values": ["a"]}]}])],
     ("n1",), {}, ["REPLACEMENT_UNPLACEABLE"], ("REPLACEMENT_UNPLACEABLE", "Pod", "db-0")),
    ("volume-zone-label-without-node-affinity", TWO_ZONES[:1] + TWO_ZONES[2:] + [
        with_claim(), pvc("data", "pv-a"), pv("pv-a", claim="data", labels={ZONE: "a"}), storage_class()],
     ("n1",), {}, ["REPLACEMENT_UNPLACEABLE"], ("REPLACEMENT_UNPLACEABLE", "Pod", "db-0")),
    ("claim-missing", TWO_ZONES + [with_claim(claim="gone"), pvc("data", "pv-a"), pv("pv-a", claim="data")],
     ("n1",), {}, ["REPLACEMENT_UNPLACEABLE"], ("REPLACEMENT_UNPLACEABLE", "Pod", "db-0")),
    ("wait-for-first-consumer-provisions-anywhere", TWO_ZONES + [with_claim(), pvc("data"), storage_class()],
     ("n1",), {}, [], None),
    ("local-pv-no-provisioner-needs-an-available-volume",
     TWO_ZONES + [with_claim(), pvc("data", cls="local"), storage_class("local", provisioner="kubernetes.io/no-provisioner"),
                  pv("local-n3", zone="b", cls="local")],
     ("n1",), {}, [], None),
    ("read-write-once-pod-claim-used-elsewhere",
     TWO_ZONES + [with_claim(), make_pod("reader", node="n3", owner=None,
                                         volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]),
                  pvc("data", "pv-x", modes=("ReadWriteOncePod",)), pv("pv-x", claim="data")],
     ("n1",), {}, ["REPLACEMENT_UNPLACEABLE"], ("REPLACEMENT_UNPLACEABLE", "Pod", "db-0")),
]


@pytest.mark.parametrize("objects, nodes, options, expected, listed", [s[1:] for s in SCENARIOS],
                         ids=[s[0] for s in SCENARIOS])
def test_risks(objects, nodes, options, expected, listed):
    report = plan(*objects, nodes=nodes, **options)
    assert risk_codes(report) == expected
    assert report["safe"] == (not expected)
    if listed:
        code, kind, name = listed
        [risk] = [r for r in report["risks"] if r["code"] == code]
        assert {"kind": kind, "name": name} in [{"kind": o["kind"], "name": o["name"]} for o in risk["objects"]]
        assert risk["message"] and risk["accepted"] is False


def test_accepted_risks_stay_listed_and_make_the_plan_safe():
    objects = [make_node("n1"), make_node("n2", cpu="1"), make_pod("big", cpu="2")]
    report = plan(*objects, accept_risks=accepted_risks(["unplaceable"]))
    assert report["safe"] is True
    assert [(r["code"], r["accepted"]) for r in report["risks"]] == [("REPLACEMENT_UNPLACEABLE", True)]
    other = plan(*objects, accept_risks=accepted_risks(["PDB_BYPASSED"]))
    assert other["safe"] is False


@pytest.mark.parametrize("scenario, reason", [
    ("volume-zone-label-without-node-affinity", "had no available volume zone"),
    ("claim-missing", 'persistentvolumeclaim "gone" not found'),
    ("zonal-pv-has-no-other-node-in-its-zone", "didn't match PersistentVolume's node affinity"),
    ("unbound-immediate-claim", "unbound immediate PersistentVolumeClaims"),
    ("wait-for-first-consumer-outside-allowed-topologies", "didn't find available persistent volumes to bind"),
    ("read-write-once-pod-claim-used-elsewhere", "ReadWriteOncePod access mode already in-use"),
])
def test_volume_reasons_use_the_schedulers_words(scenario, reason):
    objects, nodes, options = next(s[1:4] for s in SCENARIOS if s[0] == scenario)
    [risk] = plan(*objects, nodes=nodes, **options)["risks"]
    assert reason in risk["nodes"]["n3"]


def test_unplaceable_lists_each_nodes_reason():
    report = plan(make_node("n1"), make_node("n2", cpu="1"), make_node("n3", taints=[{"key": "k", "effect": "NoSchedule"}]),
                  make_pod("big", cpu="2"))
    [risk] = report["risks"]
    assert risk["nodes"]["n2"].startswith("Insufficient cpu")
    assert "untolerated taint" in risk["nodes"]["n3"] and risk["nodes"]["n1"].startswith("being drained")


def test_node_risk_says_the_way_out():
    report = plan(make_node("n1", ready="Unknown"), make_node("n2"), make_pod("a"))
    message = report["risks"][0]["message"]
    assert "--skip-wait-for-delete-timeout" in message and "out-of-service" in message and "--confirm" in message


def test_flags_count_what_they_lose():
    report = plan(make_node("n1"), make_node("n2"), make_pod("bare", owner=None),
                  make_pod("cache", volumes=[{"name": "tmp", "emptyDir": {}}]), force=True, delete_emptydir_data=True)
    assert report["safe"] and report["losses"] == {"emptyDirData": ["default/cache"], "unmanagedPods": ["default/bare"]}


def test_accept_risk_values():
    assert accepted_risks(["unplaceable,node_unreachable", "PDB-BYPASSED"]) == {
        "REPLACEMENT_UNPLACEABLE", "NODE_UNREACHABLE", "PDB_BYPASSED"}
    with pytest.raises(UsageError, match="unknown risk"):
        accepted_risks(["everything"])


def test_risk_codes_are_stable_upper_snake_with_unique_aliases():
    assert all(code.isupper() and " " not in code for code in RISKS)
    aliases = [alias for alias, _ in RISKS.values()]
    assert len(set(aliases)) == len(aliases)


def test_a_snapshot_without_storage_does_not_judge_volumes():
    report = plan(*TWO_ZONES[:1], *TWO_ZONES[2:], with_claim())
    assert report["safe"] is True


def test_scales_with_spread_constraints_on_a_large_cluster():
    """1,000 nodes x 30 pods, every pod with a zone spread constraint: placing the 60 replacements of
    two nodes (its speed is measured by benchmarks/run.py)."""

    objects = [make_node(f"n{i}", cpu="64", memory="256Gi", zone=f"z{i % 3}") for i in range(1000)]
    objects += [make_pod(f"p{i}-{j}", node=f"n{i}", cpu="100m", labels={"app": f"a{j}"},
                         topologySpreadConstraints=[spread(f"a{j}", ZONE)]) for i in range(1000) for j in range(30)]
    snap = snapshot(*objects)
    report = plan_drain(snap, ["n1", "n2"], DrainOptions(), NOW)
    assert report["safe"] and report["capacity"]["replacementsPlaced"] == 60


def test_zonal_volume_keeps_the_replacement_in_its_zone_even_when_another_zone_is_emptier():
    report = plan(*TWO_ZONES, with_claim(), make_pod("busy", node="n2", cpu="3"), pvc("data", "pv-a"),
                  pv("pv-a", zone="a", claim="data"), storage_class())
    assert report["safe"] and {p["name"]: p["replacementNode"] for p in report["pods"]}["db-0"] == "n2"
    without_volume = plan(*TWO_ZONES, with_claim(), make_pod("busy", node="n2", cpu="3"))
    assert {p["name"]: p["replacementNode"] for p in without_volume["pods"]}["db-0"] == "n3"
