"""The scheduler's NodeVolumeLimits Filter plugin (``nodevolumelimits/csi.go``): the CSI volumes a
pod would attach to a node, counted per driver with those its pods and VolumeAttachments already
hold, must stay within the driver's ``allocatable.count`` in the node's CSINode.

A volume is a claim (``persistentVolumeClaim``, or a generic ephemeral volume's claim) whose PV
is a CSI volume (driver and volume handle), or, unbound, whose StorageClass's provisioner names
the driver (a new volume). In-tree volumes migrated to CSI are not counted (docs/deviations.md).
"""

from kubectl_safety.analysis.scheduling.failure import Failure

PLUGIN = "NodeVolumeLimits"
_UNBOUND = "new"  # upstream: a random prefix per scheduler; any name unique per claim does


def counts_volumes(pod) -> bool:
    """Whether the plugin reads the pod (PreFilter: a claim or an ephemeral volume, else Skip)."""
    return any("persistentVolumeClaim" in v or "ephemeral" in v for v in pod.volumes)


def volume_limits_filter(pod, node, snapshot, state) -> list:
    """The plugin's Filter on ``node`` (``state``: the node's pods)."""
    if not pod.volumes or not snapshot.csi_nodes:
        return []
    csi_node = snapshot.csi_node(node.name)
    new = {}
    problem = _attachable(pod, snapshot, True, new)
    if problem:
        return [Failure(PLUGIN, "volume-claim-missing", problem, False)]
    limits = csi_node.limits if csi_node is not None else {}
    if not new or not limits:
        return []
    attached = {}
    for other in state.pods.values():
        problem = _attachable(other, snapshot, False, attached)
        if problem:
            return [Failure(PLUGIN, "volume-error", problem, False)]
    counts = {}
    for unique, driver in attached.items():
        new.pop(unique, None)
        counts[driver] = counts.get(driver, 0) + 1
    for attachment in snapshot.attachments_on(node.name):
        pv = snapshot.pv(attachment.volume_name) if attachment.attacher and attachment.volume_name else None
        csi = (pv.spec.get("csi") or {}) if pv is not None else {}
        if csi:
            unique = f"{attachment.attacher}/{csi.get('volumeHandle') or ''}"
            if unique not in attached:
                attached[unique] = attachment.attacher
                counts[attachment.attacher] = counts.get(attachment.attacher, 0) + 1
    wanted = {}
    for driver in new.values():
        wanted[driver] = wanted.get(driver, 0) + 1
    for driver, count in sorted(wanted.items()):
        limit = limits.get(driver)
        if limit is not None and counts.get(driver, 0) + count > limit:
            return [Failure(PLUGIN, "max-volume-count",
                            f"node(s) exceed max volume count ({driver}: {counts.get(driver, 0)} attached + "
                            f"{count} of limit {limit})", True)]
    return []


def _attachable(pod, snapshot, new_pod, result) -> str:
    """Add the pod's CSI volumes to ``result`` ({driver/handle: driver}); '' or the error upstream's
    ``filterAttachableVolumes`` returns."""
    for volume in pod.volumes:
        ephemeral = False
        if "persistentVolumeClaim" in volume:
            name = (volume.get("persistentVolumeClaim") or {}).get("claimName") or ""
        elif "ephemeral" in volume:
            name, ephemeral = f"{pod.name}-{volume.get('name') or ''}", True
        else:
            continue  # inline in-tree volumes: not counted
        if not name:
            return "PersistentVolumeClaim had no name"
        claim = snapshot.pvc(pod.namespace, name)
        if claim is None:
            if ephemeral and new_pod:  # a replacement's claim, created with it from the template
                spec = (((volume.get("ephemeral") or {}).get("volumeClaimTemplate") or {}).get("spec") or {})
                driver = _provisioner(snapshot, spec.get("storageClassName") or "")
                if driver:
                    result[f"{driver}/{_UNBOUND}-{pod.namespace}/{name}"] = driver
                continue
            if new_pod:
                return f'looking up PVC {pod.namespace}/{name}: persistentvolumeclaim "{name}" not found'
            continue
        if ephemeral and (claim.controller_ref or {}).get("uid") != pod.uid:
            return f"PVC {pod.namespace}/{name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
        driver, handle = _csi_info(snapshot, claim)
        if driver and handle:
            result[f"{driver}/{handle}"] = driver
    return ""


def _csi_info(snapshot, claim) -> tuple:
    if claim.volume_name:
        pv = snapshot.pv(claim.volume_name)
        if pv is not None:
            csi = pv.spec.get("csi") or {}
            return (csi.get("driver") or "", csi.get("volumeHandle") or "") if csi else ("", "")
    driver = _provisioner(snapshot, claim.storage_class_name)
    return (driver, f"{_UNBOUND}-{claim.namespace}/{claim.name}") if driver else ("", "")


IN_TREE = ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk", "kubernetes.io/cinder",
           "kubernetes.io/portworx-volume", "kubernetes.io/azure-file", "kubernetes.io/vsphere-volume")


def _provisioner(snapshot, class_name) -> str:
    """The CSI driver a new volume of the class would use ('' when unknown or in-tree)."""
    cls = snapshot.storage_class(class_name) if class_name else None
    if cls is None or cls.provisioner in IN_TREE:
        return ""
    return cls.provisioner
