"""What admission and eviction apply to pods: disruption budgets, priority classes, limit ranges,
runtime classes and quotas."""

from kubectl_safety.model.cached import cached
from kubectl_safety.model.meta import ApiObject
from kubectl_safety.model.selectors import LabelSelector


class PodDisruptionBudget(ApiObject):
    kind = "PodDisruptionBudget"

    @cached
    def selector(self):
        return LabelSelector.parse(self.spec.get("selector"))

    @property
    def min_available(self):
        return self.spec.get("minAvailable")

    @property
    def max_unavailable(self):
        return self.spec.get("maxUnavailable")

    @property
    def unhealthy_pod_eviction_policy(self) -> str:
        return self.spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"

    def status_int(self, field: str):
        value = self.status.get(field)
        return None if value is None else int(value)

    @property
    def disruptions_allowed(self) -> int:
        return self.status_int("disruptionsAllowed") or 0

    @property
    def disrupted_pods(self) -> dict:
        return self.status.get("disruptedPods") or {}

    @property
    def generation(self):
        return self.meta.get("generation")

    @property
    def status_is_current(self) -> bool:
        observed = self.status.get("observedGeneration")
        return observed is not None and (self.generation is None or observed >= self.generation)

    def selects(self, pod) -> bool:
        """policy/v1 Eviction semantics: same namespace; nil selects nothing, ``{}`` everything."""
        return (self.selector is not None and pod.namespace == self.namespace
                and self.selector.matches(pod.labels))


class PriorityClass(ApiObject):
    kind = "PriorityClass"

    @property
    def value(self) -> int:
        return int(self.raw.get("value") or 0)

    @property
    def global_default(self) -> bool:
        return bool(self.raw.get("globalDefault"))

    @property
    def preemption_policy(self) -> str:
        return self.raw.get("preemptionPolicy") or "PreemptLowerPriority"


class LimitRange(ApiObject):
    """Per-namespace defaults and bounds LimitRanger admission applies to pods' containers."""

    kind = "LimitRange"

    @property
    def limits(self) -> list:
        return self.spec.get("limits") or []


class RuntimeClass(ApiObject):
    """A container runtime configuration: the overhead and scheduling admission adds to its pods."""

    kind = "RuntimeClass"

    @property
    def overhead(self) -> dict:
        return (self.raw.get("overhead") or {}).get("podFixed") or {}

    @property
    def scheduling(self) -> dict:
        return self.raw.get("scheduling") or {}


class ResourceQuota(ApiObject):
    """A namespace's quota: ``status.hard`` and ``status.used`` as the quota controller last wrote them."""

    kind = "ResourceQuota"
