"""Parts shared by ``explain pod``, ``explain node`` and delete's assessment."""

from enum import Enum
from typing import Optional

from kubectl_safety.record import record


class NodeReadiness(str, Enum):
    """A node's health as seen from the API (``node_health``); a delete's node may also be unscheduled or
    unreadable."""

    READY = "Ready"
    NOT_READY = "NotReady"
    UNKNOWN = "Unknown"
    GONE = "Gone"
    UNSCHEDULED = "Unscheduled"  # delete's assessment: the pod has no node
    UNREADABLE = "Unreadable"  # delete's assessment: the Node could not be read


@record
class NodeHealth:
    state: NodeReadiness
    partitioned: bool
    heartbeat_age_seconds: Optional[int]
    unschedulable: Optional[bool]  # None: the Node object is gone
    message: str


@record
class TimelineStep:
    at: int  # seconds after the delete
    event: str
