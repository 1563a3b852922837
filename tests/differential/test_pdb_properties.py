"""PDB status against the disruption controller's own sync (pkg/controller/disruption) on the same
pods, owners and PDBs: expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed, fail-safe."""

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.budgets import budget
from tests.builders import snapshot
from tests.differential import strategies as gen
from tests.differential.conftest import PROPERTY, count

NS = gen.NAMESPACE


def ref(kind, name, api="apps/v1"):
    return {"apiVersion": api, "kind": kind, "name": name, "uid": f"uid-{kind}-{name}", "controller": True}


def workload(kind, name, replicas, owner=None, api="apps/v1"):
    meta = {"name": name, "namespace": NS, "uid": f"uid-{kind}-{name}"}
    if owner:
        meta["ownerReferences"] = [owner]
    spec = {"selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec}


OWNERS = {"rs-d": ref("ReplicaSet", "rs-d"), "rs": ref("ReplicaSet", "rs"), "ss": ref("StatefulSet", "ss"),
          "job": ref("Job", "job", "batch/v1"), "ds": ref("DaemonSet", "ds"), None: None}


@st.composite
def namespace(draw):
    now = datetime.now(timezone.utc)
    replicas = st.integers(0, 4)
    workloads = [workload("Deployment", "d", draw(replicas)),
                 workload("ReplicaSet", "rs-d", draw(replicas), owner=ref("Deployment", "d")),
                 workload("ReplicaSet", "rs", draw(replicas)), workload("StatefulSet", "ss", draw(replicas)),
                 workload("Job", "job", None, api="batch/v1"), workload("DaemonSet", "ds", None)]
    pods = [draw(gen.pod(name=f"p{i}", owner=OWNERS[draw(st.sampled_from(list(OWNERS)))]))
            for i in range(draw(st.integers(0, 5)))]
    pdbs = []
    for name in gen._names("b", draw(st.integers(1, 3))):
        pdb = draw(gen.pdb(name))
        pdb["status"].pop("conditions", None)
        if pods and draw(st.booleans()):
            when = draw(st.sampled_from([now - timedelta(minutes=10), now - timedelta(seconds=30)]))
            pdb["status"]["disruptedPods"] = {pods[0]["metadata"]["name"]: when.strftime("%Y-%m-%dT%H:%M:%SZ")}
        pdbs.append(pdb)
    return workloads, pods, pdbs, now


@PROPERTY
@given(case=namespace())
def test_pdb_status(oracle, case):
    count("test_pdb_status")
    workloads, pods, pdbs, now = case
    by_kind = {k: [w for w in workloads if w["kind"] == k] for k in ("ReplicaSet", "Deployment", "StatefulSet", "DaemonSet")}
    expected = oracle.ask("pdbStatus", pods=pods, pdbs=pdbs, replicaSets=by_kind["ReplicaSet"],
                          deployments=by_kind["Deployment"], statefulSets=by_kind["StatefulSet"],
                          daemonSets=by_kind["DaemonSet"])
    snap = snapshot(*workloads, *pods, *pdbs, now=now)
    for pdb in snap.pdbs:
        status = expected[f"{NS}/{pdb.name}"]["status"]
        failed = [c for c in status.get("conditions") or [] if c["reason"] == "SyncFailed"]
        ours = budget(pdb, snap)
        assert bool(ours["syncFailed"]) == bool(failed), (ours, status)
        assert ours["disruptionsAllowed"] == status.get("disruptionsAllowed", 0), (ours, status)
        if not failed:
            assert (ours["expectedPods"], ours["desiredHealthy"], ours["healthyPods"]) == \
                (status.get("expectedPods", 0), status.get("desiredHealthy", 0), status.get("currentHealthy", 0)), \
                (ours, status)
