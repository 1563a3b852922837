"""QoS classes, including the three manifests of seed 000."""

import pytest

from kubectl_safety.analysis.qos import compute_qos, explain_qos, qos_class
from kubectl_safety.model.pods import Pod
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
    # found by test_qos_class_of_manifest: stored at milli precision, 500m bytes is not 1 byte
    ("sub-unit memory request below its limit is burstable",
     [container("c", {"cpu": "1", "memory": "0.5"}, {"cpu": "1", "memory": "1"})], [], "Burstable"),
]


@pytest.mark.parametrize("containers,inits,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_compute_qos(containers, inits, expected):
    pod = Pod(make_pod("p", containers=containers, initContainers=inits))
    assert compute_qos(pod) == expected


def test_pod_level_resources_decide():
    pod = Pod(make_pod("p", containers=[container("a"), container("b")],
                       resources={"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}))
    assert compute_qos(pod) == "Guaranteed"


POD_LEVEL_MANIFESTS = [
    # (name, containers, init containers, pod-level resources, expected pod-level requests, QoS)
    ("manifest with pod-level limits: requests default from the containers first",
     [container("c", {"memory": "0"})], [], {"limits": {"cpu": "4", "memory": "16Gi"}}, {"cpu": 4000, "memory": 0},
     "Burstable"),
    ("manifest with pod-level limits: the aggregate is the init peak when larger",
     [container("c", {"cpu": "1"})], [container("init", {"cpu": "2"})], {"limits": {"cpu": "4"}}, {"cpu": 2000},
     "Burstable"),
    ("manifest with pod-level limits and no container requests: requests equal limits",
     [container("c")], [], {"limits": {"cpu": "4", "memory": "16Gi"}}, {"cpu": 4000, "memory": 16 * 2 ** 30},
     "Guaranteed"),
    ("explicit pod-level requests are kept",
     [container("c", {"cpu": "1"})], [], {"requests": {"cpu": "3"}, "limits": {"cpu": "4"}}, {"cpu": 3000}, "Burstable"),
]


@pytest.mark.parametrize("containers,inits,level,requests,expected", [c[1:] for c in POD_LEVEL_MANIFESTS],
                         ids=[c[0] for c in POD_LEVEL_MANIFESTS])
def test_pod_level_requests_of_a_manifest_are_defaulted_like_the_api_server(containers, inits, level, requests,
                                                                             expected):
    """Found by test_qos_class_of_manifest: defaultPodRequests takes the containers' aggregate request
    before the pod-level limit (only resources no container requests get the limit)."""
    pod = Pod(make_pod("p", containers=containers, initContainers=inits, resources=level))
    assert (pod.pod_level[0], compute_qos(pod)) == (requests, expected)


def test_status_qos_class_wins_and_mismatch_is_reported():
    pod = Pod(make_pod("p", containers=SEED_BEST_EFFORT, status={"qosClass": "Burstable"}))
    report = explain_qos(pod)
    assert qos_class(pod) == "Burstable"
    assert report.computed == "BestEffort" and report.matches_status is False


def test_per_container_reasons():
    pod = Pod(make_pod("p", containers=SEED_GUARANTEED + SEED_BURSTABLE))
    reasons = {c.qos_class for c in explain_qos(pod).containers}
    assert reasons == {"Guaranteed", "Burstable"}


def test_qos_of_exact_quantities_as_a_dump_holds_them():
    """A dump never stored by an API server may hold sub-milli quantities: GetPodQOS compares them
    as held (0.0001 and 0.0002 cpu differ: Burstable), though both would be stored as 1m."""
    from kubectl_safety.analysis.qos import compute_qos
    from kubectl_safety.model.pods import Pod
    pod = Pod({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "0.0001", "memory": "1Gi"},
                                    "limits": {"cpu": "0.0002", "memory": "1Gi"}}}]}})
    assert compute_qos(pod) == "Burstable"
