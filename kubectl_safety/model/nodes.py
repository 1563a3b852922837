"""Nodes and the Leases their kubelets renew."""

from kubectl_safety.model.cached import cached
from kubectl_safety.model.meta import ApiObject, parse_time
from kubectl_safety.model.quantity import resource_list


class Node(ApiObject):
    kind = "Node"

    @property
    def unschedulable(self) -> bool:
        return bool(self.spec.get("unschedulable"))

    @property
    def taints(self) -> list:
        return self.spec.get("taints") or []

    @cached
    def allocatable(self) -> dict:
        return resource_list(self.status.get("allocatable") or self.status.get("capacity"))

    @cached
    def capacity(self) -> dict:
        return resource_list(self.status.get("capacity") or self.status.get("allocatable"))

    def condition(self, kind: str):
        for c in self.status.get("conditions") or []:
            if c.get("type") == kind:
                return c
        return None

    @property
    def ready_status(self) -> str:
        """"True", "False" or "Unknown" (no Ready condition reads as Unknown)."""
        c = self.condition("Ready")
        return (c or {}).get("status") or "Unknown"

    @property
    def last_heartbeat(self):
        c = self.condition("Ready")
        return parse_time((c or {}).get("lastHeartbeatTime")) if c else None


class Lease(ApiObject):
    """A coordination.k8s.io Lease: a node's (``NODE_LEASE_NAMESPACE``, named after the node) is renewed
    by its kubelet, its heartbeat as the node lifecycle controller reads it."""

    kind = "Lease"

    @property
    def renew_time(self):
        return parse_time(self.spec.get("renewTime"))
