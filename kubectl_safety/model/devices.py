"""resource.k8s.io (DRA): device classes, claims, claim templates and the devices drivers publish."""

from kubectl_safety.model.meta import ApiObject


class DeviceClass(ApiObject):
    """resource.k8s.io: a class of devices, by CEL selectors every device of it must satisfy."""

    kind = "DeviceClass"

    @property
    def selectors(self) -> list:
        return self.spec.get("selectors") or []


class ResourceClaim(ApiObject):
    """resource.k8s.io: a request for devices; allocated (``status.allocation``) by the scheduler."""

    kind = "ResourceClaim"

    @property
    def requests(self) -> list:
        return (self.spec.get("devices") or {}).get("requests") or []

    @property
    def constraints(self) -> list:
        return (self.spec.get("devices") or {}).get("constraints") or []

    @property
    def allocation(self):
        return self.status.get("allocation")

    @property
    def reserved_for(self) -> list:
        return self.status.get("reservedFor") or []

    @property
    def allocated_devices(self) -> list:
        """(driver, pool, device, adminAccess) of the allocation's results."""
        results = ((self.allocation or {}).get("devices") or {}).get("results") or ()
        return [(r.get("driver") or "", r.get("pool") or "", r.get("device") or "", bool(r.get("adminAccess")))
                for r in results]


class ResourceClaimTemplate(ApiObject):
    """resource.k8s.io: the claim the resource claim controller creates for each pod naming it."""

    kind = "ResourceClaimTemplate"

    @property
    def claim_spec(self) -> dict:
        return self.spec.get("spec") or {}


class ResourceSlice(ApiObject):
    """resource.k8s.io: devices a driver publishes, for one node (``nodeName``) or a set of them."""

    kind = "ResourceSlice"

    @property
    def driver(self) -> str:
        return self.spec.get("driver") or ""

    @property
    def pool(self) -> dict:
        return self.spec.get("pool") or {}

    @property
    def devices(self) -> list:
        return self.spec.get("devices") or []
