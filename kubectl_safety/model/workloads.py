"""Pod owners (ReplicaSets, Deployments, ...) and the autoscalers that scale them."""

from kubectl_safety.model.cached import cached
from kubectl_safety.model.constants import NO_SCALE_KINDS
from kubectl_safety.model.meta import ApiObject
from kubectl_safety.model.selectors import LabelSelector


class HorizontalPodAutoscaler(ApiObject):
    """An autoscaler: the workload whose replica count it owns (``spec.scaleTargetRef``) and its bounds."""

    kind = "HorizontalPodAutoscaler"

    @property
    def target(self) -> tuple:
        ref = self.spec.get("scaleTargetRef") or {}
        return ref.get("kind") or "", ref.get("name") or ""

    @property
    def min_replicas(self) -> int:
        value = self.spec.get("minReplicas")
        return 1 if value is None else int(value)

    @property
    def max_replicas(self) -> int:
        return int(self.spec.get("maxReplicas") or 0)


class Workload(ApiObject):
    """A pod owner: ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, ReplicationController."""

    def __init__(self, raw: dict):
        super().__init__(raw)
        self.kind = raw.get("kind", "")

    @property
    def replicas(self):
        if self.kind in NO_SCALE_KINDS:
            return None
        value = self.spec.get("replicas")
        return 1 if value is None else int(value)

    @cached
    def selector(self):
        return LabelSelector.parse(self.spec.get("selector"))

    @property
    def template(self) -> dict:
        if self.kind == "CronJob":
            return ((self.spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
        return self.spec.get("template") or {}
