"""A pod's QoS class computed from its spec (``analysis/qos.py``)."""

from enum import Enum
from typing import Optional, Tuple

from kubectl_safety.record import record


class QosClass(str, Enum):
    """A QoS class computed from the spec (``ComputePodQOS``)."""

    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


@record
class ContainerQos:
    """The class one container alone would give, and why."""

    name: str
    init: bool
    qos_class: QosClass
    reason: str


@record
class QosExplanation:
    qos_class: str  # status.qosClass when set (the API server's word), else ``computed``
    computed: QosClass
    status: Optional[str]
    matches_status: bool
    reason: str
    containers: Tuple[ContainerQos, ...]
