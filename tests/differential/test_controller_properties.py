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

from kubectl_safety.analysis.manifest import pod_from_manifest, stateful_pod
from kubectl_safety.analysis.scheduling.replacement import replacement
from tests.builders import snapshot
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
    if kind == "StatefulSet" and draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(["data", "logs", "scratch"]), min_size=1, max_size=2, unique=True))
        body["volumeClaimTemplates"] = [
            {"metadata": {"name": n, **({"labels": {"vol": n}} if draw(st.booleans()) else {})},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                      **({"storageClassName": "zonal"} if draw(st.booleans()) else {})}} for n in names]
        if draw(st.booleans()):  # a template volume of a claim's name is replaced by the claim
            spec["volumes"] = [{"name": names[0], "emptyDir": {}}, {"name": "cache", "emptyDir": {}}]
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
    if kind in ("ReplicaSet", "StatefulSet"):
        _same_replacement(obj, upstream)
    if info.get("statefulset"):
        _same_claims(pod, info["statefulset"], theirs)
        tally("test_controller_pods", "statefulset with claims")
    tally("test_controller_pods", kind)


def _same_claims(pod, statefulset, theirs):
    """Each ordinal's pod names the claims upstream's ``newStatefulSetPod`` names, and the claims
    created for them are upstream's ``getPersistentVolumeClaims`` (name, labels, spec as written)."""
    empty = snapshot()
    ours_claims = []
    for ordinal, upstream in enumerate(theirs["pods"]):
        made, with_claims = stateful_pod(pod, statefulset, ordinal, empty)
        assert made.name == upstream["metadata"]["name"]
        assert sorted(made.volumes, key=lambda v: v["name"]) == sorted(
            ({k: v for k, v in vol.items() if k != "persistentVolumeClaim"} | (
                {"persistentVolumeClaim": {"claimName": vol["persistentVolumeClaim"]["claimName"]}}
                if "persistentVolumeClaim" in vol else {}) for vol in upstream["spec"].get("volumes") or []),
            key=lambda v: v["name"])
        ours_claims += sorted(with_claims.pvcs, key=lambda c: c.name)
    fields = ("accessModes", "resources", "storageClassName")
    assert [(c.name, c.namespace, c.labels, {k: c.spec.get(k) for k in fields}) for c in ours_claims] == \
        [(c["metadata"]["name"], c["metadata"]["namespace"], c["metadata"].get("labels") or {},
          {k: c["spec"].get(k) for k in fields}) for c in theirs["claims"]]


def _same_replacement(obj, upstream):
    """A drain's replacement of the controller's pod (``scheduling.replacement``) is the pod the
    controller makes from its template: labels, scheduling fields, volumes."""
    owner = {**obj, "metadata": {**obj["metadata"], "uid": "uid-owner"}}
    running = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": upstream["metadata"].get("name") or upstream["metadata"]["generateName"] + "x",
                            "namespace": "ns",
                            "labels": upstream["metadata"].get("labels") or {},
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": obj["kind"], "name": "w",
                                                 "uid": "uid-owner", "controller": True}]},
               "spec": {**upstream["spec"], "nodeName": "n1"}, "status": {"phase": "Running"}}
    snap = snapshot(owner, running)
    new, from_template = replacement(snap.pods[0], snap)
    assert from_template
    assert new.labels == (upstream["metadata"].get("labels") or {})
    for field in ("nodeSelector", "affinity", "topologySpreadConstraints"):
        assert new.spec.get(field) == upstream["spec"].get(field), field
    assert [t for t in new.spec.get("tolerations") or [] if t.get("tolerationSeconds") is None] == \
        (upstream["spec"].get("tolerations") or [])  # DefaultTolerationSeconds is admission's, not the controller's
    assert [c.get("resources") or {} for c in new.spec["containers"]] == \
        [c.get("resources") or {} for c in upstream["spec"]["containers"]]
    assert sorted(v["name"] for v in new.volumes) == sorted(v["name"] for v in upstream["spec"].get("volumes") or [])
