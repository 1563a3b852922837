"""A pod's QoS class computed from its spec (``analysis/qos.py``)."""

from dataclasses import dataclass
from enum import Enum
from typing import Optional, Tuple


class QosClass(str, Enum):
    """A QoS class computed from the spec (``ComputePodQOS``)."""

    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


@dataclass(frozen=True, slots=True)
class ContainerQos:
    """The class one container alone would give, and why."""

    name: str
    init: bool
    qos_class: QosClass
    reason: str


@dataclass(frozen=True, slots=True)
class QosExplanation:
    qos_class: str  # status.qosClass when set (the API server's word), else ``computed``
    computed: QosClass
    status: Optional[str]
    matches_status: bool
    reason: str
    containers: Tuple[ContainerQos, ...]
