"""Drain decisions against upstream: kubectl drain's pod filters (k8s.io/kubectl/pkg/drain) and
the Eviction subresource's decision (PDB checks, skipped PDBs, several PDBs, unhealthy pods)."""

from datetime import datetime, timezone
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.eviction import PodVerdict, eviction_rules, kubectl_filters
from kubectl_safety.model.pods import Pod
from tests.builders import snapshot
from tests.differential import strategies as gen
from tests.differential.conftest import PROPERTY, count


def options(**kw):
    base = dict(force=False, ignore_daemonsets=False, delete_emptydir_data=False,
                skip_wait_for_delete_timeout=0, disable_eviction=False)
    return SimpleNamespace(**{**base, **kw})


def daemonset(name):
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": gen.NAMESPACE, "uid": f"uid-DaemonSet-{name}"},
            "spec": {"selector": {"matchLabels": {"app": "a"}},
                     "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}


@st.composite
def drain_case(draw):
    pods = []
    for i in range(draw(st.integers(1, 4))):
        raw = draw(gen.pod(name=f"p{i}", owner=draw(gen.owner_ref())))
        raw["spec"]["nodeName"] = "n1"
        if draw(st.integers(0, 4)) == 0:
            raw["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
        if draw(st.integers(0, 2)) == 0:
            raw["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        pods.append(raw)
    flags = dict(force=draw(st.booleans()), ignore_daemonsets=draw(st.booleans()),
                 delete_emptydir_data=draw(st.booleans()),
                 skip_wait_for_delete_timeout=draw(st.sampled_from([0, 0, 20])))
    daemonsets = [daemonset(n) for n in draw(st.sets(st.sampled_from(["w0", "w1"])))]
    return pods, daemonsets, flags


@PROPERTY
@given(case=drain_case())
def test_kubectl_eviction(oracle, case):
    count("test_kubectl_eviction")
    pods, daemonsets, flags = case
    expected = oracle.ask("drainPods", node="n1", pods=pods, daemonSets=daemonsets, force=flags["force"],
                          ignoreAllDaemonSets=flags["ignore_daemonsets"],
                          deleteEmptyDirData=flags["delete_emptydir_data"],
                          skipWaitForDeleteTimeoutSeconds=flags["skip_wait_for_delete_timeout"])
    snap = snapshot(*pods, *daemonsets)
    now = datetime.now(timezone.utc)
    upstream = {"delete": "delete", "skip": "skip", "error": "blocked"}
    for answer in expected:
        v = PodVerdict(snap.pod(answer["namespace"], answer["name"]))
        kubectl_filters(v, options(**flags), now, True, snap)
        assert v.decision == upstream[answer["decision"]], (answer, [r.message for r in v.reasons])


@st.composite
def eviction_case(draw):
    raw = draw(gen.pod())
    raw["spec"]["nodeName"] = "n1"
    pdbs = [draw(gen.pdb(name)) for name in gen._names("b", draw(st.integers(0, 3)))]
    return raw, pdbs


@PROPERTY
@given(case=eviction_case())
def test_eviction_decision(oracle, case):
    """Evicted or refused (code) as the Eviction subresource decides, from the PDBs' status."""
    count("test_eviction_decision")
    raw, pdbs = case
    expected = oracle.ask("evict", pod=raw, pdbs=pdbs)
    snap = snapshot(raw, *pdbs)
    v = PodVerdict(Pod(raw))
    eviction_rules(v, options(), snap)
    if v.eviction == "refused":
        ours = (False, 500)
    elif v.eviction == "budget" and not (v.pdb.status_is_current and v.pdb.disruptions_allowed > 0):
        ours = (False, 429)
    else:
        ours = (True, 200)
    assert ours == (expected["evicted"], expected["code"]), (expected, [r.message for r in v.reasons])
