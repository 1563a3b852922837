"""What every plan shares: the actions a drain takes, severities, reasons, risks and object references."""

from dataclasses import replace
from enum import Enum
from typing import Mapping, Optional, Tuple, Union

from kubectl_safety.analysis.risks import RISKS
from kubectl_safety.record import record


class Action(str, Enum):
    """What a drain does to a pod."""

    EVICT = "evict"  # through the Eviction API, now (wave 1)
    DELETE = "delete"  # deleted (--disable-eviction)
    WAIT = "wait"  # evicted once its PDB allows it (a later wave)
    SKIP = "skip"  # stays on the node (kubectl's filters skip it)
    BLOCKED = "blocked"  # cannot go as asked

    @property
    def moves(self) -> bool:
        """The pod leaves the node during the drain."""
        return self in MOVING


MOVING = frozenset({Action.EVICT, Action.DELETE, Action.WAIT})


ACTIONS = tuple(Action)  # the summary's order


class Severity(str, Enum):
    """How much a reason or finding matters: one word in every command's output, as kubectl's error:/Warning:."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


SEVERITIES = tuple(s.value for s in Severity)  # least to most severe


RiskCode = Enum("RiskCode", {code: code for code in RISKS}, type=str)


RiskCode.__doc__ = "The stable codes of the risks that make a plan not SAFE (``risks.RISKS``, in its order)."


@record
class Reason:
    """Why a pod gets its action, or a plan-wide warning: a stable code, its severity, a message."""

    code: str
    severity: Severity
    message: str


@record
class ObjectRef:
    kind: str
    namespace: str
    name: str


@record
class Finding:
    """An observation with a stable code; ``check`` names its ``objects`` and, for one that does not
    gate, the ``reason`` (outside|ignored)."""

    code: str
    severity: Severity
    message: str
    objects: Tuple[ObjectRef, ...] = ()
    reason: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "severity", Severity(self.severity))


@record
class BudgetSummary:
    """A PDB as every report shows it (``budgets.summary``)."""

    name: str
    namespace: str
    min_available: Union[int, str, None]
    max_unavailable: Union[int, str, None]
    unhealthy_pod_eviction_policy: str
    selector: Optional[str]
    disruptions_allowed: Optional[int]
    current_healthy: Optional[int]
    desired_healthy: Optional[int]
    expected_pods: Optional[int]
    matching_pods: Optional[int]
    never_allows: Optional[str]


def obj(kind, namespace, name) -> ObjectRef:
    return ObjectRef(kind, namespace or "", name)


def pod_obj(pod) -> ObjectRef:
    """The reference of a pod (a model Pod, a PodAction or anything with ``namespace`` and ``name``)."""
    return ObjectRef("Pod", pod.namespace or "", pod.name)


@record
class Risk:
    """An exception to the SAFE contract, with the objects concerned; ``accepted`` by --accept-risk."""

    code: RiskCode
    message: str
    objects: Tuple[ObjectRef, ...]
    accepted: bool = False
    nodes: Optional[Mapping] = None  # REPLACEMENT_UNPLACEABLE: why each node refuses the replacement
    nodes_not_listed: Optional[int] = None  # REPLACEMENT_UNPLACEABLE: how many more nodes than ``nodes`` lists


class RiskList:
    """Risks collected by a planner: one per (code, message), their objects merged."""

    def __init__(self):
        self.items = []

    def add(self, code, message, objects, nodes=None, nodes_not_listed=None):
        code = RiskCode(code)
        for i, item in enumerate(self.items):
            if item.code is code and item.message == message:
                self.items[i] = replace(item, objects=item.objects + tuple(o for o in objects
                                                                            if o not in item.objects))
                return
        self.items.append(Risk(code, message, tuple(objects), nodes=nodes, nodes_not_listed=nodes_not_listed))

    def judged(self, accepted=frozenset()) -> tuple:
        """The risks with ``accepted`` set, in ``RISKS`` order."""
        order = list(RiskCode)
        return tuple(replace(r, accepted=r.code.value in accepted)
                     for r in sorted(self.items, key=lambda r: order.index(r.code)))
