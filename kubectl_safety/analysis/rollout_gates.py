"""The rollout's gates as the plan shows them (pure: snapshot, options, now): the maintenance windows
from the plan's instant (when the open one closes, when the next opens, when each batch could start
by the estimates), the alerts query that will be made, and the pool nodes a blocking pod holds now
(kured's ``--blocking-pod-selector``: a pod that has not ended; ``engine/gates.py`` checks it again,
live, before each batch)."""

from datetime import timedelta, timezone

from kubectl_safety.analysis.plans.rollout import HeldNode, RolloutGates
from kubectl_safety.model.windows import closes_at, next_fitting, next_opening

ENDED = ("Succeeded", "Failed", "Unknown")  # kured pkg/blockers/kubernetespod.go: these phases never block


def _at(instant):
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if instant is not None else None


def held_nodes(snapshot, nodes, selector) -> tuple:
    """``selector`` (a ``LabelSelector``) against the pods on ``nodes`` that have not ended."""
    out = []
    for node in nodes:
        pods = sorted(f"{p.namespace}/{p.name}" for p in snapshot.pods_on(node)
                      if p.phase not in ENDED and selector.matches(p.labels))
        if pods:
            out.append(HeldNode(node, tuple(pods)))
    return tuple(out)


def batch_starts(windows, now, estimates) -> tuple:
    """Each batch's earliest start when every batch takes its estimate and waits for a window long
    enough (None from the first batch no window of the coming week fits)."""
    out, at = [], now
    for seconds in estimates:
        start = next_fitting(windows, at, seconds) if at is not None else None
        out.append(_at(start))
        at = start + timedelta(seconds=seconds) if start is not None else None
    return tuple(out)


def plan_gates(snapshot, nodes, now, *, windows=(), window_texts=(), outside="wait", alerts=None,
               alert_filter=None, selector=None, selector_text=None, estimates=()) -> RolloutGates:
    """``windows``: parsed (``model/windows.py``), ``window_texts`` as given; ``now``: an aware datetime."""
    return RolloutGates(
        windows=tuple(window_texts), outside_window=outside,
        window_closes_at=_at(closes_at(windows, now)) if windows else None,
        next_window_opens_at=_at(next_opening(windows, now)) if windows else None,
        batch_starts=batch_starts(windows, now, estimates) if windows else (),
        alerts_url=alerts, alert_filter=alert_filter, blocking_pod_selector=selector_text,
        held_nodes=held_nodes(snapshot, nodes, selector) if selector is not None else ())
