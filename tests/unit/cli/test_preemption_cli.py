"""``kubectl safety preemption`` end to end on the demo dump and on manifests (file and stdin)."""

import json

import pytest

from kubectl_safety.analysis.manifest import UnsupportedManifest, pod_from_manifest
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

BASE = ["preemption", "--snapshot", DEMO, "--as-of", DEMO_NOW]

DEPLOYMENT = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: rollout-top}
value: 500000
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: jobs}
spec:
  replicas: 2
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      priorityClassName: rollout-top
      containers:
      - name: big
        image: big:1
        resources: {limits: {cpu: "3", memory: 1Gi}}
"""


def test_demo_pending_pod_preempts_the_cheapest_node():
    code, out, err = run_cli([*BASE, "report-xyz", "-n", "jobs", "-o", "json"])
    report = json.loads(out)
    assert code == 0, err
    assert (report["kind"], report["outcome"], report["pod"]["priority"]) == ("PreemptionPreview", "preempt", 500000)
    assert report["node"] == "node-b1"
    assert [(v["namespace"], v["name"], v["pdbViolation"]) for v in report["victims"]] == [("shop", "api-7c9b4-1q1", False)]
    assert [c["node"] for c in report["candidates"]][:2] == ["node-b1", "node-a1"]


def test_demo_pending_pod_blocked_by_equal_priority():
    manifest = DEMO_POD_AT_API_PRIORITY
    code, out, err = run_cli([*BASE, "-f", "-", "-o", "json"], input=manifest)
    report = json.loads(out)
    assert code == 3, err
    assert report["outcome"] == "unschedulable" and report["node"] is None and report["candidates"] == []
    assert "EQUAL_PRIORITY_BLOCKS" in [f["code"] for f in report["findings"]]


def test_demo_table_output():
    code, out, _ = run_cli([*BASE, "report-xyz", "-n", "jobs"])
    assert code == 0 and "Excluded nodes:" in out and "node-c2" in out and "Victims" in out


DEMO_POD_AT_API_PRIORITY = """
apiVersion: v1
kind: Pod
metadata: {name: big-report, namespace: jobs}
spec:
  priorityClassName: critical-service
  containers:
  - name: report
    image: shop/report:2
    resources: {requests: {cpu: 3500m, memory: 12Gi}}
"""


def test_manifest_from_stdin_with_its_own_priority_class():
    code, out, err = run_cli([*BASE, "-f", "-", "-o", "json", "--replicas", "2"], input=DEPLOYMENT)
    report = json.loads(out)
    assert code == 0, err
    assert report["pod"]["priority"] == 500000 and report["pod"]["priorityClassName"] == "rollout-top"
    assert report["outcome"] == "preempt" and report["placed"] == 2
    assert report["pod"]["requests"]["cpu"] == 3000  # requests defaulted from limits
    assert all(v["priority"] < 500000 for v in report["victims"])


def test_manifest_file_json(tmp_path):
    path = tmp_path / "pod.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "jobs"},
                                "spec": {"containers": [{"name": "c", "image": "i",
                                                         "resources": {"requests": {"cpu": "100m"}}}]}}))
    code, out, err = run_cli([*BASE, "-f", str(path), "-o", "json"])
    assert code == 0, err
    assert json.loads(out)["fitsWithoutPreemption"] is True


ERRORS = [
    ("invalid-field", ["-f", "-"], "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
     "  - {name: c, image: i, ports: [{containerPort: http}]}\n", 1, "field spec.containers[0].ports[0].containerPort"),
    ("template-missing", ["-f", "-"], "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
     "spec: {selector: {matchLabels: {a: b}}, template: {}}\n", 1, "spec.template.spec is missing"),
    ("unknown-field", ["-f", "-"], "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"
     "  nodeSelecter: {a: b}\n", 1, "nodeSelecter"),
    ("unknown-class", ["-f", "-"], "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priorityClassName: nope\n"
     "  containers: [{name: c, image: i}]\n", 1, "no PriorityClass with name nope"),
    ("not-a-workload", ["-f", "-"], "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {}\n", 1, "found 0"),
    ("both-pod-and-file", ["report-xyz", "-f", "x.yaml"], None, 2, "either a POD name or -f FILE"),
    ("neither", [], None, 2, "either a POD name or -f FILE"),
    ("pod-not-found", ["nope", "-n", "jobs"], None, 1, 'pod "nope" not found'),
    ("unsupported-version", ["-f", "-", "--kubernetes-version", "1.99"],
     "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n", 2, "supports"),
]


@pytest.mark.parametrize("args,stdin,code,message", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_are_one_line(args, stdin, code, message):
    got, out, err = run_cli([*BASE, *args], input=stdin)
    assert got == code and message in err and out == ""


MANIFESTS = [
    ("statefulset", {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                     "spec": {"replicas": 3, "template": {"metadata": {"labels": {"a": "b"}},
                                                          "spec": {"containers": [{"name": "c"}]}}}},
     ("db-0", "ns", 3, {"a": "b"})),
    ("cronjob", {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "x"},
                 "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}}},
     ("nightly-preview", "x", 1, {})),
    ("job-runs-min-parallelism-completions",
     {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
      "spec": {"parallelism": 5, "completions": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}},
     ("j-preview", "ns", 2, {})),
    ("job-parallelism-defaults-to-one",
     {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
      "spec": {"completions": 4, "template": {"spec": {"containers": [{"name": "c"}]}}}}, ("j-preview", "ns", 1, {})),
    ("deployment-pod-has-pod-template-hash",
     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
      "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}},
                                           "spec": {"containers": [{"name": "c"}]}}}},
     ("web-preview", "ns", 2, {"app": "web", "pod-template-hash": "preview"})),
    ("pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"k": "v"}},
             "spec": {"containers": [{"name": "c"}], "nodeName": "n1"}}, ("p", "ns", 1, {"k": "v"})),
]


@pytest.mark.parametrize("obj,expected", [m[1:] for m in MANIFESTS], ids=[m[0] for m in MANIFESTS])
def test_pod_from_manifest(obj, expected):
    pod, info = pod_from_manifest(obj, "ns")
    assert (pod.name, pod.namespace, info["replicas"], pod.labels) == expected


def test_pod_manifest_copied_from_a_terminating_pod_is_previewed_as_created():
    """A create wipes deletionTimestamp and deletionGracePeriodSeconds (WipeObjectMetaSystemFields):
    the previewed pod is scheduled like any new one."""
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "deletionTimestamp": "2026-11-22T08:00:00Z",
                                                           "deletionGracePeriodSeconds": 30},
           "spec": {"containers": [{"name": "c"}]}}
    pod, _ = pod_from_manifest(obj, "ns")
    assert not pod.is_terminating and "deletionGracePeriodSeconds" not in pod.raw["metadata"]


def test_daemonset_is_not_previewed():
    with pytest.raises(UnsupportedManifest, match="cannot preview a DaemonSet"):
        pod_from_manifest({"kind": "DaemonSet", "metadata": {"name": "d"}, "spec": {}}, "ns")


def test_read_manifest_flattens_lists(tmp_path):
    from kubectl_safety.cluster.manifest_io import read_manifest

    path = tmp_path / "list.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [{"kind": "Pod"}, {"kind": "Service"}]}))
    assert [o["kind"] for o in read_manifest(str(path))] == ["Pod", "Service"]


VERSIONS = [
    ("server-version", "v1.34.7", False, "1.34.7"),
    ("unstamped-server", "v0.0.0-master+$Format:%H$", False, "1.34.0"),
    ("no-server", None, False, "1.34.0"),
    ("user-minor-only", "1.30", True, "1.30.0"),
]


@pytest.mark.parametrize("wanted,by_user,expected", [v[1:] for v in VERSIONS], ids=[v[0] for v in VERSIONS])
def test_validation_version(wanted, by_user, expected):
    from kubectl_safety.cluster.manifest_io import supported_version

    assert supported_version(wanted, by_user) == expected
