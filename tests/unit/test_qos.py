"""QoS classes, including the three manifests of seed 000."""

import pytest

from kubectl_safety.analysis.qos import compute_qos, explain_qos, qos_class
from kubectl_safety.model.objects import Pod
from tests.builders import container, make_pod

SEED_GUARANTEED = [container("guaranteed-nginx", {"memory": "512Mi", "cpu": "1024m"}, {"memory": "512Mi", "cpu": "1024m"})]
SEED_BURSTABLE = [container("guaranteed-nginx", {"memory": "512Mi"}, {"memory": "1024Mi"})]
SEED_BEST_EFFORT = [container("guaranteed-nginx")]

CASES = [
    ("seed 000 guaranteed manifest", SEED_GUARANTEED, [], "Guaranteed"),
    ("seed 000 burstable manifest", SEED_BURSTABLE, [], "Burstable"),
    ("seed 000 best-effort manifest", SEED_BEST_EFFORT, [], "BestEffort"),
    ("limits only: requests default to limits", [container("c", None, {"cpu": "1", "memory": "1Gi"})], [], "Guaranteed"),
    ("cpu limit only", [container("c", None, {"cpu": "1"})], [], "Burstable"),
    ("one guaranteed, one empty container", SEED_GUARANTEED + [container("side")], [], "Burstable"),
    ("ephemeral-storage only is best effort", [container("c", {"ephemeral-storage": "1Gi"})], [], "BestEffort"),
    ("init container without limits spoils guaranteed", SEED_GUARANTEED, [container("init", {"cpu": "100m"})], "Burstable"),
    ("zero requests do not count", [container("c", {"cpu": "0", "memory": "0"})], [], "BestEffort"),
]


@pytest.mark.parametrize("containers,inits,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_compute_qos(containers, inits, expected):
    pod = Pod(make_pod("p", containers=containers, initContainers=inits))
    assert compute_qos(pod) == expected


def test_pod_level_resources_decide():
    pod = Pod(make_pod("p", containers=[container("a"), container("b")],
                       resources={"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}))
    assert compute_qos(pod) == "Guaranteed"


def test_status_qos_class_wins_and_mismatch_is_reported():
    pod = Pod(make_pod("p", containers=SEED_BEST_EFFORT, status={"qosClass": "Burstable"}))
    report = explain_qos(pod)
    assert qos_class(pod) == "Burstable"
    assert report["computed"] == "BestEffort" and report["matchesStatus"] is False


def test_per_container_reasons():
    pod = Pod(make_pod("p", containers=SEED_GUARANTEED + SEED_BURSTABLE))
    reasons = {c["class"] for c in explain_qos(pod)["containers"]}
    assert reasons == {"Guaranteed", "Burstable"}
