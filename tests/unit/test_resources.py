"""Pod requests as the scheduler charges them (component-helpers PodRequests)."""

import pytest

from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.model.objects import Pod
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
    # found by test_sub_milli_cpu_is_summed_before_rounding: upstream adds exact quantities and
    # rounds the pod's total up to a millicore once
    ("sub-millicore cpu is summed before rounding", Pod(make_pod("p", containers=[
        container(f"c{i}", {"cpu": "0.0001"}) for i in range(3)])), 1),
    ("sub-millicore cpu of a resized container is summed before rounding", Pod(make_pod(
        "p", containers=[container("c", {"cpu": "0.0001"}), container("d", {"cpu": "0.0001"})],
        status={"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "0.0004"}}}]})), 1),
    ("sub-millicore overhead is added before rounding", Pod(make_pod(
        "p", containers=[container("c", {"cpu": "0.0005"})], overhead={"cpu": "0.0005"})), 1),
]


@pytest.mark.parametrize("pod,cpu", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pod_requests_cpu(pod, cpu):
    assert pod_requests(pod)["cpu"] == cpu
