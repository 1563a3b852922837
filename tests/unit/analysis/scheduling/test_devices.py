"""DynamicResources and NodeVolumeLimits in drain plans: a GPU pod's replacement needs a device
another node publishes, a CSI driver's attach limit caps a node's volumes, and kinds that cannot
be read are named (``analysis/scheduling/dra.py``, ``volume_limits.py``)."""

import pytest

from kubectl_safety.analysis.scheduling.device_cel import ERROR, Unsupported, device_view, evaluate
from kubectl_safety.analysis.scheduling.filters import filter_node
from kubectl_safety.model.pods import Pod
from tests.builders import make_node, make_pod, snapshot
from tests.published import plan_drain

DRIVER = "gpu.example.com"


def device_class(name="gpu", expression=f'device.driver == "{DRIVER}"'):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def resource_slice(node, devices=("gpu-0",), model="A100", name=None, pool=None):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name or f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": pool or node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": d, "attributes": {"model": {"string": model}}} for d in devices]}}


def template(name="gpu", selectors=(), count=1):
    exactly = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def claim(name, node, device="gpu-0", owner=None, reserved=(), spec=None):
    meta = {"name": name, "namespace": "default", "uid": f"uid-claim-{name}"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner,
                                    "uid": f"uid-default-{owner}", "controller": True}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": spec or template()["spec"]["spec"],
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": node, "device": device}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                "reservedFor": [{"resource": "pods", "name": p, "uid": f"uid-default-{p}"} for p in reserved]}}


def gpu_pod(name, node="n1", claim_name=None):
    """A pod whose claim comes from the ``gpu`` template (generated as ``<name>-gpu``), or ``claim_name``."""
    if claim_name:
        return make_pod(name, node=node, cpu="100m", resourceClaims=[{"name": "gpu", "resourceClaimName": claim_name}])
    return make_pod(name, node=node, cpu="100m", resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                    status={"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]})


def gpu_cluster(*extra):
    return snapshot(make_node("n1"), make_node("n2"), device_class(), template(), resource_slice("n1"),
                    gpu_pod("train"), claim("train-gpu", "n1", owner="train", reserved=["train"]), *extra)


def risks(plan) -> list:
    return [r["code"] for r in plan["risks"]]


def test_a_drain_of_the_only_node_with_a_gpu_is_not_safe():
    plan = plan_drain(gpu_cluster(), ["n1"])
    assert plan["safe"] is False and "REPLACEMENT_UNPLACEABLE" in risks(plan), plan["risks"]
    unplaceable = [r for r in plan["risks"] if r["code"] == "REPLACEMENT_UNPLACEABLE"][0]
    assert "cannot allocate all claims" in unplaceable["message"], unplaceable


def test_a_drain_of_a_gpu_node_is_safe_when_another_node_publishes_a_matching_device():
    plan = plan_drain(gpu_cluster(resource_slice("n2")), ["n1"])
    assert plan["safe"] is True, plan["risks"]
    assert plan["capacity"]["placedOn"] == {"n2": 1}


def test_a_device_another_claim_holds_is_not_free():
    other = gpu_pod("infer", node="n2")
    plan = plan_drain(gpu_cluster(resource_slice("n2"), other, claim("infer-gpu", "n2", owner="infer",
                                                                      reserved=["infer"])), ["n1"])
    assert plan["safe"] is False and "REPLACEMENT_UNPLACEABLE" in risks(plan), plan["risks"]


def test_a_device_the_selectors_refuse_is_not_free():
    cluster = snapshot(make_node("n1"), make_node("n2"), device_class(),
                       template(selectors=[f'device.attributes["{DRIVER}"].model == "A100"']),
                       resource_slice("n1"), resource_slice("n2", model="T4"),
                       gpu_pod("train"), claim("train-gpu", "n1", owner="train", reserved=["train"]))
    assert plan_drain(cluster, ["n1"])["safe"] is False


def test_two_gpu_pods_cannot_share_the_one_free_device():
    cluster = snapshot(make_node("n1"), make_node("n2"), device_class(), template(),
                       resource_slice("n1", devices=("gpu-0", "gpu-1")), resource_slice("n2"),
                       gpu_pod("train"), claim("train-gpu", "n1", owner="train", reserved=["train"]),
                       gpu_pod("tune"), claim("tune-gpu", "n1", device="gpu-1", owner="tune", reserved=["tune"]))
    plan = plan_drain(cluster, ["n1"])
    assert plan["safe"] is False and plan["capacity"]["placedOn"] == {"n2": 1}, plan["capacity"]


def test_a_shared_claim_reserved_only_by_the_drained_pod_is_allocated_again_elsewhere():
    shared = claim("shared-gpu", "n1", reserved=["train"])
    cluster = snapshot(make_node("n1"), make_node("n2"), device_class(), resource_slice("n1"),
                       resource_slice("n2"), gpu_pod("train", claim_name="shared-gpu"), shared)
    assert plan_drain(cluster, ["n1"])["safe"] is True


def test_a_shared_claim_a_pod_elsewhere_still_holds_pins_the_replacement_to_its_node():
    shared = claim("shared-gpu", "n1", reserved=["train", "watch"])
    cluster = snapshot(make_node("n1"), make_node("n2"), make_node("n3"), device_class(), resource_slice("n1"),
                       resource_slice("n2"), gpu_pod("train", claim_name="shared-gpu"),
                       gpu_pod("watch", node="n3", claim_name="shared-gpu"), shared)
    plan = plan_drain(cluster, ["n1"])
    assert plan["safe"] is False, plan["risks"]
    assert "resourceclaim not available on the node" in str(plan["risks"])


def test_pod_claims_without_the_device_kinds_are_not_judged():
    pod = gpu_pod("train")
    plan = plan_drain(snapshot(make_node("n1"), make_node("n2"), pod), ["n1"])
    assert plan["safe"] is True


@pytest.mark.parametrize("unread", [{"resourceslices": "forbidden"}, {"deviceclasses": "not served"}])
def test_device_kinds_that_cannot_be_read_are_named_and_not_judged(unread):
    cluster = gpu_cluster().replace(unread=unread)
    plan = plan_drain(cluster, ["n1"])
    warnings = [w for w in plan["warnings"] if w["code"] == "DEVICES_NOT_JUDGED"]
    assert len(warnings) == 1 and "default/train (gpu)" in warnings[0]["message"], plan["warnings"]
    assert next(iter(unread)) in warnings[0]["message"]


# -- NodeVolumeLimits -------------------------------------------------------------------------------

def csi_node(node, count):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": node},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": node, "allocatable": {"count": count}}]}}


def bound_claim(name, handle):
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
           "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": f"pv-{name}", "storageClassName": "ebs",
                    "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound"}}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "ebs",
                   "claimRef": {"namespace": "default", "name": name},
                   "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": handle}}, "status": {"phase": "Bound"}}
    return pvc, pv


def volume_pod(name, node, claim_name):
    return make_pod(name, node=node, cpu="100m",
                    volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}])


def volume_cluster(limit):
    storage_class = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "ebs"},
                     "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer"}
    objects = [make_node("n1"), make_node("n2"), storage_class, csi_node("n1", 39), csi_node("n2", limit)]
    for i, node in enumerate(("n1", "n2")):
        pvc, pv = bound_claim(f"data-{i}", f"vol-{i}")
        objects += [pvc, pv, volume_pod(f"db-{i}", node, f"data-{i}")]
    return snapshot(*objects)


def test_a_replacement_over_the_csi_attach_limit_of_every_other_node_is_unplaceable():
    plan = plan_drain(volume_cluster(limit=1), ["n1"])
    assert plan["safe"] is False, plan["risks"]
    assert "exceed max volume count" in str(plan["risks"])


def test_a_replacement_within_the_csi_attach_limit_is_placed():
    assert plan_drain(volume_cluster(limit=2), ["n1"])["safe"] is True


def test_a_volume_attached_without_a_pod_counts_against_the_limit():
    attachment = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va-x"},
                  "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n2",
                           "source": {"persistentVolumeName": "pv-x"}}}
    _, pv = bound_claim("x", "vol-x")
    cluster = volume_cluster(limit=2)
    cluster = cluster.replace(volume_attachments=snapshot(attachment).volume_attachments,
                              pvs=cluster.pvs + snapshot(pv).pvs)
    pod = Pod({**cluster.pod("default", "db-0").raw, "spec": {**cluster.pod("default", "db-0").spec, "nodeName": ""}})
    failures = filter_node(pod, cluster.node("n2"), cluster.without_pods([pod.key]))
    assert [f.plugin for f in failures] == ["NodeVolumeLimits"], failures


# -- device selectors -------------------------------------------------------------------------------

DEVICE = device_view({"name": "g", "attributes": {"model": {"string": "A100"}, "cores": {"int": 80},
                                                  "ecc": {"bool": True}, "x.io/fw": {"version": "1.2.3"}},
                      "capacity": {"memory": {"value": "40Gi"}}}, DRIVER)


@pytest.mark.parametrize("expression, expected", [
    (f'device.driver == "{DRIVER}"', True),
    ('device.driver != "other"', True),
    (f'device.attributes["{DRIVER}"].model == "A100" && device.attributes["{DRIVER}"].cores >= 64', True),
    (f'device.attributes["{DRIVER}"].ecc', True),
    (f'!device.attributes["{DRIVER}"].ecc || false', False),
    (f'device.capacity["{DRIVER}"].memory.compareTo(quantity("32Gi")) >= 0', True),
    (f'device.capacity["{DRIVER}"].memory.isLessThan(quantity("32Gi"))', False),
    ('device.attributes["x.io"].fw.isGreaterThan(semver("1.10.0"))', False),
    (f'"model" in device.attributes["{DRIVER}"]', True),
    ('device.attributes["other.io"].model == "A100"', ERROR),  # no such key
    ('device.attributes["other.io"].model == "A100" && false', False),  # absorbed
    (f'device.attributes["{DRIVER}"].model.startsWith("A1")', True),
    (f'device.attributes["{DRIVER}"].model == 1', False),  # heterogeneous equality
    (f'device.attributes["{DRIVER}"].model > 1', ERROR),  # no such overload
])
def test_device_selectors_evaluate_as_cel(expression, expected):
    assert evaluate(expression, DEVICE) is expected


@pytest.mark.parametrize("expression", [f'device.attributes["{DRIVER}"].model.matches("^A")', "x == 1",
                                        'device.attributes["a"].b ? 1 : 2', "[1, 2].all(x, x > 0)"])
def test_selectors_outside_the_evaluated_cel_are_unsupported(expression):
    with pytest.raises(Unsupported):
        evaluate(expression, DEVICE)


def test_an_unsupported_selector_makes_the_device_not_match_and_says_so():
    cluster = snapshot(make_node("n1"), make_node("n2"), device_class(),
                       template(selectors=[f'device.attributes["{DRIVER}"].model.matches("^A")']),
                       resource_slice("n1"), resource_slice("n2"),
                       gpu_pod("train"), claim("train-gpu", "n1", owner="train", reserved=["train"]))
    plan = plan_drain(cluster, ["n1"])
    assert plan["safe"] is False and "not judged: selector" in str(plan["risks"]), plan["risks"]


# -- live reads -------------------------------------------------------------------------------------

def _pages(cluster) -> dict:
    """The LIST pages of a snapshot's objects, by resource."""
    from kubectl_safety.cluster.live import RESOURCES

    plural = {kind: resource for resource, (_, _, kind) in RESOURCES.items()}
    pages = {}
    for field in ("nodes", "pods", "device_classes", "resource_claims", "resource_claim_templates",
                  "resource_slices", "csi_nodes"):
        for o in getattr(cluster, field):
            pages.setdefault(plural[o.kind], []).append(o.raw)
    return pages


def test_a_whole_cluster_read_includes_devices_and_csi_nodes():
    from kubectl_safety.cluster.live import Connection
    from kubectl_safety.cluster.scopes import cluster_scope
    from kubectl_safety.cluster.source import load_snapshot
    from tests.unit.cluster.test_bounds import _PartialTransport

    pages = _pages(gpu_cluster())
    pages["csinodes"] = [csi_node("n2", 1)]
    snap = load_snapshot(connection=Connection(_transport=_PartialTransport(pages, {})), queries=cluster_scope())
    assert (len(snap.resource_slices), len(snap.device_classes), len(snap.resource_claims),
            len(snap.resource_claim_templates), len(snap.csi_nodes)) == (1, 1, 1, 1, 1)
    assert snap.pod("default", "train").resource_claim_statuses == {"gpu": "train-gpu"}
    assert plan_drain(snap, ["n1"])["safe"] is False


def test_a_whole_cluster_read_refused_the_slices_names_the_claims_it_could_not_judge():
    from kubectl_safety.cluster.live import Connection
    from kubectl_safety.cluster.scopes import cluster_scope
    from kubectl_safety.cluster.source import load_snapshot
    from tests.unit.cluster.test_bounds import _PartialTransport

    warnings = []
    connection = Connection(_transport=_PartialTransport(_pages(gpu_cluster()), {"resourceslices": 403}))
    snap = load_snapshot(connection=connection, queries=cluster_scope(), warnings=warnings)
    assert snap.dra_unread == {"resourceslices": "forbidden"} and len(warnings) == 1
    plan = plan_drain(snap, ["n1"])
    assert [w["code"] for w in plan["warnings"]] == ["DEVICES_NOT_JUDGED"], plan["warnings"]


def test_two_replacements_sharing_a_released_claim_go_where_the_first_one_allocates_it():
    shared = claim("shared-gpu", "n1", reserved=["a", "b"])
    cluster = snapshot(make_node("n1"), make_node("n2", cpu="150m"), make_node("n3"), device_class(),
                       resource_slice("n1"), resource_slice("n3"),
                       gpu_pod("a", claim_name="shared-gpu"), gpu_pod("b", claim_name="shared-gpu"), shared)
    plan = plan_drain(cluster, ["n1"])
    assert plan["safe"] is True and plan["capacity"]["placedOn"] == {"n3": 2}, plan["capacity"]


def test_a_request_for_all_devices_fails_when_they_differ_in_a_matched_attribute():
    spec = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}],
                        "constraints": [{"matchAttribute": f"{DRIVER}/model"}]}}
    mixed = resource_slice("n2", devices=("gpu-0",))
    mixed["spec"]["devices"].append({"name": "gpu-1", "attributes": {"model": {"string": "T4"}}})
    cluster = snapshot(make_node("n1"), make_node("n2"), device_class(), mixed,
                       {**template(), "spec": {"spec": spec}}, resource_slice("n1"),
                       gpu_pod("train"), claim("train-gpu", "n1", owner="train", reserved=["train"], spec=spec))
    assert plan_drain(cluster, ["n1"])["safe"] is False
