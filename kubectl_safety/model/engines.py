"""The objects upgrade engines keep their settings in (``analysis/profiles`` reads them): Karpenter's
NodePools and NodeClaims (karpenter.sh/v1), Cluster API's Machines, MachineDeployments and
MachineDrainRules (cluster.x-k8s.io/v1beta2), the system-upgrade-controller's Plans (upgrade.cattle.io/v1)."""

from kubectl_safety.model.cached import cached
from kubectl_safety.model.meta import ApiObject


class NodePool(ApiObject):
    """A Karpenter NodePool: its disruption budgets and its nodes' terminationGracePeriod."""

    kind = "NodePool"


class NodeClaim(ApiObject):
    """A Karpenter NodeClaim: the NodePool (label ``karpenter.sh/nodepool``) of the node ``status.nodeName``."""

    kind = "NodeClaim"

    @cached
    def node_name(self) -> str:
        status = self.raw.get("status")
        return str(status.get("nodeName") or "") if isinstance(status, dict) else ""


class Machine(ApiObject):
    """A Cluster API Machine: its node (``status.nodeRef.name``), its drain timeout and its owner."""

    kind = "Machine"

    @cached
    def node_name(self) -> str:
        status = self.raw.get("status")
        ref = status.get("nodeRef") if isinstance(status, dict) else None
        return str(ref.get("name") or "") if isinstance(ref, dict) else ""


class MachineDeployment(ApiObject):
    """A Cluster API MachineDeployment: its Machines' template and its rolling update's surge."""

    kind = "MachineDeployment"


class MachineDrainRule(ApiObject):
    """A Cluster API MachineDrainRule: how a drain treats the pods it selects."""

    kind = "MachineDrainRule"


class Plan(ApiObject):
    """A system-upgrade-controller Plan: its nodes, concurrency and drain."""

    kind = "Plan"
