"""What every plan shares: the actions a drain takes, severities, reasons, risks and object references."""

from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.risks import RISKS


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
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


RiskCode = Enum("RiskCode", {code: code for code in RISKS}, type=str)


RiskCode.__doc__ = "The stable codes of the risks that make a plan not SAFE (``risks.RISKS``, in its order)."


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a pod gets its action, or a plan-wide warning: a stable code, its severity, a message."""

    code: str
    severity: Severity
    message: str


@dataclass(frozen=True, slots=True)
class ObjectRef:
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class Risk:
    """An exception to the SAFE contract, with the objects concerned; ``accepted`` by --accept-risk."""

    code: RiskCode
    message: str
    objects: Tuple[ObjectRef, ...]
    accepted: bool = False
    nodes: Optional[Mapping] = None  # REPLACEMENT_UNPLACEABLE: why each node refuses the replacement
    nodes_not_listed: Optional[int] = None  # REPLACEMENT_UNPLACEABLE: how many more nodes than ``nodes`` lists
