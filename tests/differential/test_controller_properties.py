"""The pods controllers write from templates, against upstream's own controllers (the oracle's
``controllerPods``: Deployment's pod-template-hash, ReplicaSet and StatefulSet pod construction,
one Job controller sync), versus ``manifest.pod_from_manifest`` as ``preemption -f`` previews them.

Templates of every kind with labels, node selectors, tolerations and spreads with matchLabelKeys;
Jobs with every combination of parallelism and completions (unset, 0, smaller and larger). What
must agree: the labels the scheduler and spreads select by (the hash's presence; its value is
upstream's ComputeHash of the Go object, which the preview stands in for), the scheduling fields,
and for a Job how many pods its first sync starts.
"""

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.manifest import pod_from_manifest
from tests.differential.conftest import PROPERTY, count, tally

SCHEDULING = ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "containers")


@st.composite
def workload(draw):
    kind = draw(st.sampled_from(["Deployment", "ReplicaSet", "StatefulSet", "Job"]))
    labels = {"app": "web", **({"tier": "1"} if draw(st.booleans()) else {})}
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}
    if draw(st.booleans()):
        spec["nodeSelector"] = {"disk": "ssd"}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "spot", "operator": "Exists"}]
    if draw(st.booleans()):
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": "web"}},
                                              "matchLabelKeys": ["pod-template-hash"]}]
    if kind == "Job":
        spec["restartPolicy"] = "Never"
    body = {"template": {"metadata": {"labels": labels}, "spec": spec}}
    if kind == "Job":
        for field in ("parallelism", "completions"):
            value = draw(st.sampled_from([None, 0, 1, 2, 5]))
            if value is not None:
                body[field] = value
    else:
        body["replicas"] = draw(st.sampled_from([1, 2, 3]))
        body["selector"] = {"matchLabels": {"app": "web"}}
    group = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": group, "kind": kind, "metadata": {"name": "w", "namespace": "ns"}, "spec": body}


@PROPERTY
@given(obj=workload())
def test_controller_pods(oracle, obj):
    """The previewed pod against the controller's: selectable labels, scheduling fields, Job pod count."""
    count("test_controller_pods")
    kind = obj["kind"]
    key = {"Deployment": "deployment", "ReplicaSet": "replicaSet", "StatefulSet": "statefulSet", "Job": "job"}[kind]
    theirs = oracle.ask("controllerPods", kind=kind, **{key: obj})
    pod, info = pod_from_manifest(obj, "ns")
    if kind == "Job":
        assert info["replicas"] == len(theirs["pods"]), (obj["spec"], len(theirs["pods"]))
        tally("test_controller_pods", f"job starts {len(theirs['pods'])}")
        if not theirs["pods"]:
            return
    upstream = theirs["pods"][0]
    ours_labels = {k: v for k, v in pod.labels.items() if not k.startswith(("batch.kubernetes.io/", "controller-uid",
                                                                              "job-name"))}
    their_labels = {k: v for k, v in (upstream["metadata"].get("labels") or {}).items()
                    if not k.startswith(("batch.kubernetes.io/", "controller-uid", "job-name",
                                         "statefulset.kubernetes.io/", "apps.kubernetes.io/"))}
    assert set(ours_labels) == set(their_labels)
    assert {k: v for k, v in ours_labels.items() if k != "pod-template-hash"} == \
        {k: v for k, v in their_labels.items() if k != "pod-template-hash"}
    for field in SCHEDULING:
        if field == "containers":
            assert [c.get("resources") or {} for c in pod.spec[field]] == \
                [c.get("resources") or {} for c in upstream["spec"][field]]
        else:
            assert pod.spec.get(field) == upstream["spec"].get(field), field
    tally("test_controller_pods", kind)
