"""The evictor: one module says which pods may leave a node and every reason why not, for drain
(kubectl's filters, then the Eviction API) and rebalance (the descheduler's protections)."""

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.eviction import FILTER_CODES, PodVerdict, eviction_rules, kubectl_filters, refusals
from tests.builders import make_pod, snapshot

TERMINATING = {"deletionTimestamp": "2026-11-22T08:59:00Z"}
HOST_PATH = [{"name": "logs", "hostPath": {"path": "/var/log"}}]


def drain_verdict(pod_dict, **options):
    snap = snapshot(pod_dict)
    v = PodVerdict(snap.pod("default", "p"))
    kubectl_filters(v, DrainOptions(**options), snap.taken_at, False, snap)  # DaemonSets not in the dump
    if v.decision != "skip":
        eviction_rules(v, DrainOptions(**options), snap)
    return v


def descheduler_codes(pod_dict, evict_local_storage=False):
    snap = snapshot(pod_dict)
    return [f.code for f in refusals(snap.pod("default", "p"), snap, evict_local_storage)]


def test_the_descheduler_filters_keep_every_refusal():
    pod = make_pod("p", priority=2_000_000_000, meta=TERMINATING, volumes=HOST_PATH)
    assert descheduler_codes(pod) == ["ALREADY_TERMINATING", "SYSTEM_CRITICAL", "LOCAL_STORAGE"]
    assert descheduler_codes(pod, evict_local_storage=True) == ["ALREADY_TERMINATING", "SYSTEM_CRITICAL"]


def test_kubectl_filters_keep_every_blocking_reason():
    """kubectl would stop at the first; the plan names both the emptyDir and the missing controller."""
    v = drain_verdict(make_pod("p", owner=None, volumes=[{"name": "tmp", "emptyDir": {}}]))
    assert v.decision == "blocked"
    assert [(r.code, r.severity) for r in v.reasons] == [("LOCAL_STORAGE", "error"), ("UNMANAGED", "error")]


@pytest.mark.parametrize("pod,descheduler", [
    (make_pod("p", priority_class="system-cluster-critical", priority=2_000_000_000), ["SYSTEM_CRITICAL"]),
    (make_pod("p", volumes=HOST_PATH), ["LOCAL_STORAGE"]),
    (make_pod("p", meta=TERMINATING), ["ALREADY_TERMINATING"]),
], ids=["system-critical", "host-path", "terminating"])
def test_drain_and_rebalance_differ_only_where_their_upstreams_do(pod, descheduler):
    """kubectl drain evicts these pods (or waits for them); the descheduler never moves them."""
    assert drain_verdict(pod).decision == "delete"
    assert descheduler_codes(pod) == descheduler


@pytest.mark.parametrize("pod,code", [
    (make_pod("p", meta={"annotations": {"kubernetes.io/config.mirror": "x"}}), "MIRROR_POD"),
    (make_pod("p", owner=("DaemonSet", "ds")), "DAEMONSET"),
], ids=["mirror", "daemonset"])
def test_drain_and_rebalance_agree(pod, code):
    """Both lists keep such pods where they are."""
    assert drain_verdict(pod).decision in ("skip", "blocked") and code in [r.code for r in drain_verdict(pod).reasons]
    assert descheduler_codes(pod) == [code]


def test_filter_codes_are_the_codes_kubectls_filters_block_with():
    """``FILTER_CODES`` (a plan's filterErrors) names exactly what the filters block with by default."""
    pods = [make_pod("p", owner=("DaemonSet", "ds")), make_pod("p", owner=None, volumes=[{"name": "t", "emptyDir": {}}])]
    blocking = set()
    for pod in pods:
        snap = snapshot(pod)
        for known in (False, True):
            v = PodVerdict(snap.pod("default", "p"))
            kubectl_filters(v, DrainOptions(), snap.taken_at, known, snap)
            blocking |= {r.code for r in v.reasons if r.severity == "error"}
    assert blocking == set(FILTER_CODES)
