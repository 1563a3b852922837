"""Pod requests as the scheduler charges them (component-helpers PodRequests)."""

import pytest

from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.model.pods import Pod
from tests.builders import container, make_pod


def resized(spec_cpu, actuated_cpu, allocated_cpu=None, reason=None):
    status = {"name": "c", "resources": {"requests": {"cpu": actuated_cpu}}}
    if allocated_cpu:
        status["allocatedResources"] = {"cpu": allocated_cpu}
    pod = make_pod("p", containers=[container("c", {"cpu": spec_cpu})], status={"containerStatuses": [status]})
    if reason:
        pod["status"]["conditions"].append({"type": "PodResizePending", "status": "True", "reason": reason})
    return Pod(pod)


CASES = [
    ("resized pod: downsize in flight charges the actuated request", resized("500m", "1"), 1000),
    ("resized pod: upsize in flight charges the spec", resized("2", "1"), 2000),
    ("resized pod: allocated larger than both", resized("500m", "1", "1500m"), 1500),
    ("resized pod: infeasible resize ignores the spec", resized("2", "1", None, "Infeasible"), 1000),
    ("sidecars and init peak", Pod(make_pod("p", containers=[container("c", {"cpu": "1"})], initContainers=[
        container("init", {"cpu": "3"}), container("side", {"cpu": "500m"}, restartPolicy="Always")])), 3000),
    ("pod-level requests override the containers", Pod(make_pod(
        "p", containers=[container("c", {"cpu": "1"})], resources={"requests": {"cpu": "4"}})), 4000),
    # the API server rounds each quantity up to milli precision on create: whole millicores
    ("sub-millicore cpu counts a millicore per container, as stored", Pod(make_pod("p", containers=[
        container(f"c{i}", {"cpu": "0.0001"}) for i in range(3)])), 3),
    ("sub-millicore cpu of a resized container, as stored", Pod(make_pod(
        "p", containers=[container("c", {"cpu": "0.0001"}), container("d", {"cpu": "0.0001"})],
        status={"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "0.0004"}}}]})), 2),
]


@pytest.mark.parametrize("pod,cpu", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pod_requests_cpu(pod, cpu):
    assert pod_requests(pod)["cpu"] == cpu


def test_sub_unit_memory_is_summed_at_milli_precision_then_rounded_once():
    """Found by test_sub_milli_quantities_are_rounded_on_create_then_summed: three containers of
    "0.5" bytes are stored as 500m each and PodRequests adds them exactly: 1.5, rounded to 2
    (each container rounded first would make 3); overhead is added before the rounding too."""
    pod = make_pod("p", containers=[container(f"c{i}", {"memory": "0.5"}) for i in range(3)])
    assert pod_requests(Pod(pod))["memory"] == 2
    assert pod_requests(Pod({**pod, "spec": {**pod["spec"], "overhead": {"memory": "0.5"}}}))["memory"] == 2


def test_pods_with_the_same_container_resources_share_their_requests():
    """``requests_of`` parses a template's quantities once (read-only dict shared); pod-level
    resources, overhead or a resize make a pod's requests its own."""
    from kubectl_safety.analysis.scheduling.node_state import requests_of

    def pod(name, **spec):
        return Pod(make_pod(name, containers=[container("c", {"cpu": "250m", "memory": "1Gi"})], **spec))

    a, b = pod("a"), pod("b")
    assert requests_of(a) is requests_of(b) and requests_of(a) == pod_requests(a)
    sidecar = pod("s", initContainers=[container("side", {"cpu": "1"}, restartPolicy="Always")])
    init = pod("i", initContainers=[container("side", {"cpu": "1"})])
    assert (requests_of(sidecar)["cpu"], requests_of(init)["cpu"]) == (1250, 1000)
    for own in (pod("l", resources={"requests": {"cpu": "2"}}), pod("o", overhead={"cpu": "1"}),
                resized("250m", "1")):
        assert requests_of(own) == pod_requests(own) and requests_of(own) is not requests_of(a)
