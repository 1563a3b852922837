"""A pod's termination timeline (``analysis/termination.py``)."""

from enum import Enum
from typing import Tuple

from kubectl_safety.analysis.explanations.common import TimelineStep
from kubectl_safety.record import record


class ProbeKind(str, Enum):
    """The probes whose failure restarts a container with their own grace period."""

    LIVENESS = "livenessProbe"
    STARTUP = "startupProbe"


@record
class PreStopHook:
    container: str
    hook: str  # exec, httpGet, tcpSocket, "sleep Ns" or hook
    sidecar: bool


@record
class GracePeriod:
    grace_period_seconds: int
    note: str


@record
class ProbeGrace:
    """The grace period a container gets when a probe's failure restarts it."""

    container: str
    probe: ProbeKind
    grace_period_seconds: int
    probe_override: bool


@record
class TerminationTimeline:
    """Delete, eviction, kubelet soft/hard eviction and probe-failure timelines of a pod."""

    grace_period_seconds: int
    why: str
    pre_stop: Tuple[PreStopHook, ...]
    steps: Tuple[TimelineStep, ...]
    eviction: GracePeriod
    kubelet_soft_eviction: GracePeriod
    kubelet_hard_eviction: GracePeriod
    probe_failure: Tuple[ProbeGrace, ...]
