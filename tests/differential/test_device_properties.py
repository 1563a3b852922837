"""NodeVolumeLimits, the volume plugins and DynamicResources against upstream: the filter question
runs them with the objects they read (PVCs, PVs, StorageClasses, CSINodes, VolumeAttachments,
ResourceClaims, ResourceSlices, DeviceClasses) through the scheduler's own CSI and DRA managers.

Generated: nodes with CSI attach limits and GPU slices (taints, shared, per-device, incomplete and
replaced pools); pods holding CSI volumes (claims, generic ephemeral volumes) and allocated claims; an incoming pod with bound or unbound claims and
device claims from a template or by name (allocated elsewhere, or not), requests by class and
selectors (ExactCount, All, firstAvailable, matchAttribute constraints, tolerations). Our side
sometimes gets the incoming pod as a replacement (no claim status: the template's claim is made
fresh), which must answer as upstream does once the controller created the claim.
"""

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.scheduling.filters import filter_node
from kubectl_safety.model.pods import Pod
from tests.builders import snapshot
from tests.differential.conftest import PROPERTY, count, tally
from tests.differential.test_scheduler_properties import assert_agrees, make, scheduler_view

DRIVER = "gpu.example.com"
CSI = "ebs.csi.aws.com"
SELECTORS = [f'device.attributes["{DRIVER}"].model == "A100"', f'device.attributes["{DRIVER}"].memory >= 40',
             f'device.attributes["{DRIVER}"].model != "T4" || device.attributes["{DRIVER}"].memory > 16',
             f'device.capacity["{DRIVER}"].vram.compareTo(quantity("40Gi")) >= 0',
             f'device.attributes["{DRIVER}"].nvlink']  # a key only some devices have: a CEL error on others
CLASSES = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
           {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "a100"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}},
                                   {"cel": {"expression": SELECTORS[0]}}]}}]


def rarely(draw, one_in):
    return draw(st.integers(1, one_in)) == one_in


@st.composite
def device(draw, name):
    model = draw(st.sampled_from(["A100", "T4"]))
    attrs = {"model": {"string": model}, "memory": {"int": 80 if model == "A100" else 16}}
    if rarely(draw, 3):
        attrs["nvlink"] = {"bool": draw(st.booleans())}
    d = {"name": name, "attributes": attrs, "capacity": {"vram": {"value": "80Gi" if model == "A100" else "16Gi"}}}
    if rarely(draw, 6):
        d["taints"] = [{"key": "broken", "effect": draw(st.sampled_from(["NoSchedule", "NoExecute"]))}]
    return d


def slice_for(name, devices, pool, count=1, **where):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRIVER, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                     "devices": devices, **where}}


@st.composite
def request(draw, name):
    exact = {"deviceClassName": draw(st.sampled_from(["gpu", "gpu", "a100"]))}
    mode = draw(st.sampled_from(["ExactCount"] * 6 + ["All"]))
    exact["allocationMode"] = mode
    if mode == "ExactCount":
        exact["count"] = draw(st.sampled_from([1, 1, 2]))
    if draw(st.integers(0, 2)) == 0:
        exact["selectors"] = [{"cel": {"expression": draw(st.sampled_from(SELECTORS))}}]
    if rarely(draw, 5):
        exact["tolerations"] = [{"key": "broken", "operator": "Exists"}]
    if rarely(draw, 6):
        second = dict(exact, name="small", deviceClassName="gpu", allocationMode="ExactCount", count=1)
        return {"name": name, "firstAvailable": [dict(exact, name="big", allocationMode="ExactCount",
                                                      count=exact.get("count", 2)), second]}
    return {"name": name, "exactly": exact}


@st.composite
def claim_spec(draw):
    requests = [draw(request(f"r{i}")) for i in range(draw(st.sampled_from([1, 1, 2])))]
    spec = {"devices": {"requests": requests}}
    if rarely(draw, 4):
        spec["devices"]["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
    return spec


def resource_claim(name, namespace, spec, owner=None, allocation=None, reserved=()):
    meta = {"name": name, "namespace": namespace, "uid": f"uid-claim-{namespace}-{name}"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True}]
    out = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta, "spec": spec}
    if allocation:
        out["status"] = {"allocation": allocation,
                         "reservedFor": [{"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}
                                         for p in reserved]}
    return out


def allocation(node, devices):
    return {"devices": {"results": [{"request": "r0", "driver": DRIVER, "pool": node, "device": d} for d in devices]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                    "values": [node]}]}]}}


def pvc(name, volume=None):
    out = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": name, "namespace": "ns", "uid": f"uid-pvc-{name}"},
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "ebs",
                    "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Pending"}}
    if volume:  # as the PV controller binds it (the binder reads the annotation)
        out["spec"]["volumeName"] = volume
        out["status"]["phase"] = "Bound"
        out["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return out


def pv(name, claim, handle):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "uid": f"uid-pv-{name}"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "ebs",
                     "persistentVolumeReclaimPolicy": "Delete",
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": claim,
                                  "uid": f"uid-pvc-{claim}"},
                     "csi": {"driver": CSI, "volumeHandle": handle}}, "status": {"phase": "Bound"}}


def gpu_node(name):
    alloc = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"uid-{name}",
                                                           "labels": {"kubernetes.io/hostname": name,
                                                                      "gpu": "yes" if name != "n2" else "no"}},
            "spec": {}, "status": {"capacity": dict(alloc), "allocatable": dict(alloc),
                                   "conditions": [{"type": "Ready", "status": "True"}]}}


@st.composite
def cluster(draw):
    names = [f"n{i}" for i in range(draw(st.integers(1, 3)))]
    nodes = [gpu_node(n) for n in names]
    objects = {"StorageClass": [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                 "metadata": {"name": "ebs"}, "provisioner": CSI,
                                 "volumeBindingMode": "WaitForFirstConsumer"}],
               "DeviceClass": list(CLASSES)}
    for kind in ("CSINode", "VolumeAttachment", "ResourceSlice", "ResourceClaim", "PersistentVolumeClaim",
                 "PersistentVolume"):
        objects[kind] = []
    pods, devices_of = [], {}
    for n in names:
        if not rarely(draw, 4):
            driver = {"name": CSI, "nodeID": n}
            if not rarely(draw, 5):
                driver["allocatable"] = {"count": draw(st.integers(1, 3))}
            objects["CSINode"].append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                                       "metadata": {"name": n}, "spec": {"drivers": [driver]}})
        if not rarely(draw, 4):
            devices = [draw(device(f"gpu-{i}")) for i in range(draw(st.integers(1, 3)))]
            devices_of[n] = [d["name"] for d in devices]
            incomplete = rarely(draw, 8)
            objects["ResourceSlice"].append(slice_for(f"{n}-gpu", devices, n, 2 if incomplete else 1, nodeName=n))
            if rarely(draw, 6):  # a replaced generation of the pool: never used
                old = slice_for(f"{n}-gpu-old", [draw(device("old-0"))], n, nodeName=n)
                old["spec"]["pool"]["generation"] = 0
                objects["ResourceSlice"].append(old)
    if rarely(draw, 4):
        where = draw(st.sampled_from([{"allNodes": True}, {"nodeSelector": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["yes"]}]}]}}]))
        objects["ResourceSlice"].append(slice_for("shared-gpu", [draw(device("net-0"))], "shared", **where))
    if rarely(draw, 5):  # devices that each name their nodes
        devices = []
        for i in range(draw(st.integers(1, 2))):
            d = draw(device(f"pd-{i}"))
            d.update(draw(st.sampled_from([{"nodeName": draw(st.sampled_from(names))}, {"allNodes": True}])))
            devices.append(d)
        objects["ResourceSlice"].append(slice_for("per-device", devices, "per-device", perDeviceNodeSelection=True))
    volumes = 0
    for i in range(draw(st.integers(0, 4))):
        node = draw(st.sampled_from(names))
        p = make(f"e{i}", "ns", {"app": "x"}, node)
        if draw(st.booleans()):
            ephemeral = rarely(draw, 4)  # a generic ephemeral volume: its claim is the pod's, named after it
            claim = f"e{i}-data" if ephemeral else f"data-e{i}"
            made = pvc(claim, f"pv-{claim}")
            if ephemeral:
                made["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": f"e{i}",
                                                        "uid": p["metadata"]["uid"], "controller": True}]
            objects["PersistentVolumeClaim"].append(made)
            objects["PersistentVolume"].append(pv(f"pv-{claim}", claim, f"vol-{claim}"))
            p["spec"]["volumes"] = [{"name": "data", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "accessModes": ["ReadWriteOnce"], "storageClassName": "ebs",
                "resources": {"requests": {"storage": "1Gi"}}}}}} if ephemeral else
                {"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
            volumes += 1
        free = [d for d in devices_of.get(node, []) if not any(
            d in [r["device"] for r in c["status"]["allocation"]["devices"]["results"]]
            for c in objects["ResourceClaim"] if c["status"]["allocation"]["devices"]["results"][0]["pool"] == node)]
        if free and draw(st.booleans()):
            spec = {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": "gpu"}}]}}
            claim = resource_claim(f"e{i}-gpu", "ns", spec, owner=p, allocation=allocation(node, [free[0]]),
                                   reserved=[p])
            objects["ResourceClaim"].append(claim)
            p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
            p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": f"e{i}-gpu"}]
        pods.append(p)
    for i in range(draw(st.integers(0, 2))):
        if not objects["VolumeAttachment"] and rarely(draw, 3):
            name = f"loose-{i}"
            objects["PersistentVolume"].append(pv(f"pv-{name}", name, f"vol-{name}"))
            objects["VolumeAttachment"].append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                                "metadata": {"name": f"va-{name}"},
                                                "spec": {"attacher": CSI, "nodeName": draw(st.sampled_from(names)),
                                                         "source": {"persistentVolumeName": f"pv-{name}"}}})
    incoming = make("incoming", "ns", {"app": "y"})
    incoming["metadata"]["uid"] = "uid-incoming"
    volumes_in = []
    for i in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["bound", "unbound", "shared"]))
        if kind == "shared" and objects["PersistentVolumeClaim"]:
            name = draw(st.sampled_from(objects["PersistentVolumeClaim"]))["metadata"]["name"]
        elif kind == "bound" or kind == "shared":
            name = f"data-in{i}"
            objects["PersistentVolumeClaim"].append(pvc(name, f"pv-{name}"))
            objects["PersistentVolume"].append(pv(f"pv-{name}", name, f"vol-{name}"))
        else:
            name = f"new-in{i}"
            objects["PersistentVolumeClaim"].append(pvc(name))
        if name not in [v["persistentVolumeClaim"]["claimName"] for v in volumes_in]:
            volumes_in.append({"name": f"v{i}", "persistentVolumeClaim": {"claimName": name}})
    if volumes_in:
        incoming["spec"]["volumes"] = volumes_in
    template = None
    claims = []
    for i in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
        spec = draw(claim_spec())
        kind = draw(st.sampled_from(["template", "template", "named", "allocated"]))
        if kind == "template":
            template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                        "metadata": {"name": f"t{i}", "namespace": "ns"}, "spec": {"spec": spec}}
            claims.append(({"name": f"c{i}", "resourceClaimTemplateName": f"t{i}"},
                           resource_claim(f"incoming-c{i}", "ns", spec, owner=incoming), template))
        elif kind == "named" or not any((c.get("status") or {}).get("reservedFor") for c in objects["ResourceClaim"]):
            claim = resource_claim(f"shared-{i}", "ns", spec)
            objects["ResourceClaim"].append(claim)
            claims.append(({"name": f"c{i}", "resourceClaimName": claim["metadata"]["name"]}, None, None))
        else:  # a claim another pod holds: pinned to its node
            claim = draw(st.sampled_from(objects["ResourceClaim"]))
            claims.append(({"name": f"c{i}", "resourceClaimName": claim["metadata"]["name"]}, None, None))
    if claims:
        incoming["spec"]["resourceClaims"] = [entry for entry, _, _ in claims]
    as_replacement = draw(st.booleans())
    return nodes, pods, incoming, objects, claims, as_replacement


@PROPERTY
@given(case=cluster())
def test_volume_limits_and_devices_as_the_scheduler_filters_them(oracle, case):
    """Fits or not on every node, and the first failing plugin, with volumes and device claims."""
    count("test_volume_limits_and_devices_as_the_scheduler_filters_them")
    nodes, pods, incoming, objects, claims, as_replacement = case
    theirs_claims = [c for _, c, _ in claims if c is not None]
    theirs_incoming = {**incoming, "status": {**incoming["status"], "resourceClaimStatuses": [
        {"name": entry["name"], "resourceClaimName": c["metadata"]["name"]} for entry, c, _ in claims if c]}}
    stored = [{**oracle.ask("defaultPod", pod=p), "status": p["status"]} for p in pods]
    incoming_stored = {**oracle.ask("defaultPod", pod=theirs_incoming), "status": theirs_incoming["status"]}
    expected = oracle.ask("filter", pod=incoming_stored, nodes=nodes, pods=scheduler_view(stored), namespaces=[],
                          persistentVolumeClaims=objects["PersistentVolumeClaim"],
                          persistentVolumes=objects["PersistentVolume"], storageClasses=objects["StorageClass"],
                          csiNodes=objects["CSINode"], volumeAttachments=objects["VolumeAttachment"],
                          resourceClaims=objects["ResourceClaim"] + theirs_claims,
                          resourceSlices=objects["ResourceSlice"], deviceClasses=objects["DeviceClass"])
    templates = [t for _, _, t in claims if t is not None]
    everything = [o for kind in objects.values() for o in kind] + templates
    if as_replacement and templates:  # ours: the template's claim is yet to be made (a replacement's)
        ours = {**incoming_stored, "status": {k: v for k, v in incoming_stored["status"].items()
                                              if k != "resourceClaimStatuses"}}
        tally("test_volume_limits_and_devices_as_the_scheduler_filters_them", "as replacements")
    else:
        ours, everything = incoming_stored, everything + theirs_claims
    snap = snapshot(*nodes, *stored, *everything)
    pod = Pod(ours)
    fits = 0
    for n in snap.nodes:
        failures = filter_node(pod, n, snap)
        fits += not failures
        assert_agrees(expected, n, failures)
    tally("test_volume_limits_and_devices_as_the_scheduler_filters_them", "fitting somewhere" if fits else "fitting nowhere")
    if claims:
        tally("test_volume_limits_and_devices_as_the_scheduler_filters_them", "with device claims")
    if volumes_of(incoming):
        tally("test_volume_limits_and_devices_as_the_scheduler_filters_them", "with volumes")


def volumes_of(pod):
    return pod["spec"].get("volumes") or []
