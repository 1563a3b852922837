"""What the scheduler's volume filters read: claims, volumes, storage classes, CSI nodes, attachments."""

from kubectl_safety.model.cached import cached
from kubectl_safety.model.meta import ApiObject
from kubectl_safety.model.quantity import resource_list


class PersistentVolumeClaim(ApiObject):
    """The fields the scheduler's volume filters read."""

    kind = "PersistentVolumeClaim"

    @property
    def access_modes(self) -> list:
        return self.spec.get("accessModes") or []

    @property
    def volume_name(self) -> str:
        return self.spec.get("volumeName") or ""

    @property
    def storage_class_name(self) -> str:
        """spec.storageClassName, else the legacy beta annotation ('' = no class)."""
        name = self.spec.get("storageClassName")
        if name is None:
            name = self.annotations.get("volume.beta.kubernetes.io/storage-class")
        return name or ""

    @cached
    def requested_storage(self) -> int:
        return resource_list((self.spec.get("resources") or {}).get("requests")).get("storage", 0)


class PersistentVolume(ApiObject):
    kind = "PersistentVolume"

    @property
    def node_affinity(self):
        """spec.nodeAffinity.required (a NodeSelector) or None."""
        return (self.spec.get("nodeAffinity") or {}).get("required")

    @property
    def access_modes(self) -> list:
        return self.spec.get("accessModes") or []

    @property
    def storage_class_name(self) -> str:
        return self.spec.get("storageClassName") or ""

    @cached
    def storage(self) -> int:
        return resource_list(self.spec.get("capacity")).get("storage", 0)

    @property
    def claim_ref(self) -> dict:
        return self.spec.get("claimRef") or {}

    @property
    def phase(self) -> str:
        return self.status.get("phase") or ""


class StorageClass(ApiObject):
    kind = "StorageClass"

    @property
    def binding_mode(self) -> str:
        """Immediate (the API default) or WaitForFirstConsumer."""
        return self.raw.get("volumeBindingMode") or "Immediate"

    @property
    def provisioner(self) -> str:
        return self.raw.get("provisioner") or ""

    @property
    def allowed_topologies(self) -> list:
        return self.raw.get("allowedTopologies") or []


class CSINode(ApiObject):
    """A node's CSI drivers: how many volumes of each it may attach (NodeVolumeLimits)."""

    kind = "CSINode"

    @cached
    def limits(self) -> dict:
        """{driver: allocatable.count} for the drivers that declare a count (``getVolumeLimits``)."""
        out = {}
        for d in self.spec.get("drivers") or ():
            count = (d.get("allocatable") or {}).get("count")
            if count is not None:
                out[d.get("name") or ""] = int(count)
        return out


class VolumeAttachment(ApiObject):
    """A volume attached to a node by a CSI driver (counted against the node's limits)."""

    kind = "VolumeAttachment"

    @property
    def attacher(self) -> str:
        return self.spec.get("attacher") or ""

    @property
    def node_name(self) -> str:
        return self.spec.get("nodeName") or ""

    @property
    def volume_name(self) -> str:
        return (self.spec.get("source") or {}).get("persistentVolumeName") or ""
