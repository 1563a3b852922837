"""``preemption -f`` previews the pod admission makes of a manifest: LimitRanger defaults and
bounds, Priority (a pod contradicting its class is rejected), RuntimeClass overhead and
scheduling, ResourceQuota. Each scenario on the demo dump plus the objects it needs."""

import json

import pytest
import yaml

from kubectl_safety.analysis.admission import AdmissionRejected, admit
from kubectl_safety.model.pods import Pod
from tests.builders import make_class, snapshot
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli


def manifest_pod(**spec):
    spec.setdefault("containers", [{"name": "c", "image": "x"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "jobs"}, "spec": spec}


def preview(tmp_path, pod, *extra):
    """preemption -f on the demo dump with ``extra`` objects added to it: (exit code, report or stderr)."""
    dump = yaml.safe_load(open(DEMO))
    dump["items"] += list(extra)
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump))
    manifest = tmp_path / "pod.json"
    manifest.write_text(json.dumps(pod))
    code, out, err = run_cli(["preemption", "--snapshot", str(path), "--as-of", DEMO_NOW, "-f", str(manifest),
                              "-o", "json"])
    return code, (json.loads(out) if out else err)


LIMIT_RANGE = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "jobs"},
               "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "3"}, "default": {"cpu": "3"}}]}}
KATA = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m"}}, "scheduling": {"nodeSelector": {"sandbox": "kata"}}}
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "pods", "namespace": "jobs"},
         "spec": {"hard": {"pods": "3"}}, "status": {"hard": {"pods": "3"}, "used": {"pods": "3"}}}


def test_admission_priority_contradicting_its_class_is_rejected(tmp_path):
    code, err = preview(tmp_path, manifest_pod(priorityClassName="batch-low", priority=999999))
    assert code == 1 and "the API server would reject the pod: Priority: the integer value of priority" in err


def test_admission_preemption_policy_contradicting_its_class_is_rejected(tmp_path):
    never = make_class("gentle", 1000, policy="Never")
    code, err = preview(tmp_path, manifest_pod(priorityClassName="gentle", preemptionPolicy="PreemptLowerPriority"),
                        never)
    assert code == 1 and "the string value of PreemptionPolicy (PreemptLowerPriority)" in err


def test_admission_limitrange_defaults_the_requests_the_preview_places(tmp_path):
    code, report = preview(tmp_path, manifest_pod(), LIMIT_RANGE)
    assert report["pod"]["requests"]["cpu"] == 3000


def test_admission_runtimeclass_adds_overhead_and_its_node_selector(tmp_path):
    code, report = preview(tmp_path, manifest_pod(runtimeClassName="kata"), KATA)
    assert report["pod"]["requests"]["cpu"] == 250
    assert report["feasibleNodes"] == [] and report["outcome"] != "fits"  # no demo node is labelled sandbox=kata


def test_admission_unknown_runtimeclass_is_rejected(tmp_path):
    code, err = preview(tmp_path, manifest_pod(runtimeClassName="kata"))
    assert code == 1 and 'RuntimeClass "kata" not found' in err


def test_admission_quota_exceeded_is_rejected(tmp_path):
    code, err = preview(tmp_path, manifest_pod(), QUOTA)
    assert code == 1 and "ResourceQuota: exceeded quota: pods" in err


def scoped_quota(**scope):
    """A pods quota of the jobs namespace already used up, limited to the pods its scope matches."""
    return {**QUOTA, "spec": {**QUOTA["spec"], **scope}}


def in_class(operator, *values):
    return {"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": operator,
                                                    **({"values": list(values)} if values else {})}]}}


@pytest.mark.parametrize("scope, spec, rejected", [
    (in_class("In", "batch-low"), {"priorityClassName": "batch-low"}, True),
    (in_class("In", "critical-service"), {"priorityClassName": "batch-low"}, False),
    (in_class("NotIn", "batch-low"), {"priorityClassName": "batch-low"}, False),
    (in_class("NotIn", "batch-low"), {}, True),  # the global default "standard" is stored as its class
    (in_class("In", "standard"), {}, True),
    (in_class("Exists"), {}, True),
    (in_class("DoesNotExist"), {"priorityClassName": "batch-low"}, False),
    ({"scopes": ["BestEffort"]}, {}, True),
    ({"scopes": ["NotBestEffort"]}, {}, False),
    ({"scopes": ["Terminating"]}, {"activeDeadlineSeconds": 60}, True),
    ({"scopes": ["Terminating"]}, {}, False),
    ({"scopes": ["NotTerminating"], **in_class("In", "batch-low")}, {"priorityClassName": "batch-low"}, True),
])
def test_admission_quota_with_scopes_judges_the_pods_it_matches(tmp_path, scope, spec, rejected):
    """A quota scoped to a PriorityClass (or QoS, or a deadline) limits only the pods its scopes match."""
    code, out = preview(tmp_path, manifest_pod(**spec), scoped_quota(**scope))
    assert (code == 1 and "ResourceQuota: exceeded quota: pods" in out) == rejected, out


@pytest.mark.parametrize("spec, objects, expected", [
    ({"priority": 7}, [], "Priority"),  # no class, no global default: 0
    ({}, [LIMIT_RANGE | {"spec": {"limits": [{"type": "Container", "min": {"cpu": "1"}}]}}], None),  # min defaults
    ({"overhead": {"cpu": "1"}}, [], "RuntimeClass"),
    ({"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]},
     [], "validation"),
])
def test_admission_rejects_as_upstream(spec, objects, expected):
    try:
        admit(Pod(manifest_pod(**spec)), snapshot(*objects))
    except AdmissionRejected as e:
        assert e.plugin == expected
    else:
        assert expected is None


def test_admission_host_network_manifest_gets_its_default_host_port():
    """The API's defaulting gives a hostNetwork pod's ports their containerPort as hostPort (NodePorts reads it)."""
    pod = manifest_pod(hostNetwork=True, containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 9100}]}])
    admitted = admit(Pod(pod), snapshot())
    assert [p["hostPort"] for p in admitted.spec["containers"][0]["ports"]] == [9100]


def container(name="c", requests=None, limits=None, **extra):
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"name": name, "image": "x", **({"resources": resources} if resources else {}), **extra}


def limit_range(*items):
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "jobs"},
            "spec": {"limits": list(items)}}


def quota(hard, used):
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "jobs"},
            "spec": {"hard": hard}, "status": {"hard": hard, "used": used}}


POD_MAX_CPU = limit_range({"type": "Pod", "max": {"cpu": "1"}})


@pytest.mark.parametrize("spec, objects, expected", [
    pytest.param({"resources": {"limits": {"cpu": "1"}}}, [POD_MAX_CPU], None,
                 id="pod-level limit counts for a LimitRange Pod max"),
    pytest.param({"resources": {"limits": {"cpu": "2"}}, "containers": [container(limits={"cpu": "500m"})]},
                 [POD_MAX_CPU], "LimitRanger", id="pod-level limit above a LimitRange Pod max"),
    pytest.param({"containers": [container(limits={"cpu": "600m"})],
                  "initContainers": [container("side", limits={"cpu": "600m"}, restartPolicy="Always")]},
                 [POD_MAX_CPU], "LimitRanger", id="a sidecar counts toward a LimitRange Pod max"),
    pytest.param({"resources": {"requests": {"cpu": "1"}}}, [quota({"cpu": "4"}, {"cpu": "0"})], None,
                 id="a cpu quota needs no container request with pod-level resources"),
    pytest.param({"containers": [container(limits={"cpu": "500m"})],
                  "initContainers": [container("init", limits={"cpu": "2"})]},
                 [quota({"limits.cpu": "1"}, {"limits.cpu": "0"})], "ResourceQuota",
                 id="an init container's larger limit is charged to a limits quota"),
    pytest.param({"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}, [], "validation",
                 id="pod-level request above the pod-level limit"),
    pytest.param({"resources": {"requests": {"cpu": "1"}}}, [limit_range(
        {"type": "Container", "defaultRequest": {"cpu": "2"}})], "validation",
                 id="LimitRange default requests above the pod-level request"),
    pytest.param({"resources": {"limits": {"cpu": "1"}}, "containers": [container(limits={"cpu": "2"})]}, [],
                 "validation", id="a container limit above the pod-level limit"),
])
def test_admission_pod_level_resources_and_sidecars_as_upstream(spec, objects, expected):
    """LimitRanger's Pod items, quota usage and constraints, and validation read pod-level resources
    (PodLevelResources) and sidecars as upstream does."""
    try:
        admit(Pod(manifest_pod(**spec)), snapshot(*objects))
    except AdmissionRejected as e:
        assert e.plugin == expected, str(e)
    else:
        assert expected is None


def test_admission_pod_level_request_defaults_from_the_pod_as_given(tmp_path):
    """The API defaults a missing pod-level request before admission: containers requesting no cpu
    leave it the pod-level limit, though LimitRanger then gives them a smaller default request."""
    code, report = preview(tmp_path, manifest_pod(resources={"limits": {"cpu": "2"}}), limit_range(
        {"type": "Container", "defaultRequest": {"cpu": "500m"}, "default": {"cpu": "1"}}))
    assert report["pod"]["requests"]["cpu"] == 2000
