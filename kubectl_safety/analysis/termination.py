"""The graceful termination timeline (API server ``BeforeDelete`` + kubelet pod worker)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubectl_safety.analysis.explanations.termination import TerminationTimeline

MIN_RUNTIME_GRACE = 2  # kubelet: minimumGracePeriodInSeconds, the least any container gets


def api_grace_period(pod, requested=None, now=None) -> dict:
    """The grace period the API server sets on DELETE (incl. via Eviction): ``rest.BeforeDelete``.

    ``requested`` is DeleteOptions.gracePeriodSeconds (None: the pod's own). A terminating pod
    keeps its deletion grace period unless the request shortens it; ``now`` (aware datetime)
    decides whether a shortened deadline already passed (then 1 s).
    """
    if requested is not None and int(requested) < 0:
        requested = 1  # negative values become 1 on the delete path
    if pod.is_terminating:
        current = pod.deletion_grace_period
        if current is not None and current < 0:
            current = 1
        if not current:
            return {"seconds": 0, "pending": False,
                    "why": "0: already terminating without a grace period, so the API server deletes it at once"}
        if requested is None or int(requested) >= current:
            return {"seconds": current, "pending": True,
                    "why": f"already terminating with {current} s: a grace period can only be shortened"}
        seconds = int(requested)
        deadline = pod.deletion_timestamp.timestamp() - current + seconds
        if now is not None and deadline < now.timestamp() and seconds != 0:
            return {"seconds": 1, "pending": False,
                    "why": "already terminating and the shortened grace period has passed: 1 s"}
        return {"seconds": seconds, "pending": False, "why": f"already terminating: shortened to {seconds} s"}
    if pod.is_terminal or not pod.node_name:
        why = "the pod has finished" if pod.is_terminal else "the pod is not scheduled to a node"
        return {"seconds": 0, "pending": False, "why": f"0: {why}, so the API server deletes it at once"}
    if requested is not None:
        seconds, why = int(requested), "from the delete request"
    else:
        seconds = pod.termination_grace_period
        why = ("spec.terminationGracePeriodSeconds" if pod.spec.get("terminationGracePeriodSeconds")
               is not None else "default 30 s (terminationGracePeriodSeconds unset)")
    if seconds < 0:
        seconds, why = 1, "negative values become 1"
    return {"seconds": seconds, "pending": False, "why": why}


def _pre_stop_kind(container):
    hook = container.pre_stop
    if not hook:
        return None
    for kind in ("exec", "httpGet", "tcpSocket", "sleep"):
        if hook.get(kind) is not None:  # (null is no handler, as in the API)
            if kind == "sleep":
                return f"sleep {hook['sleep'].get('seconds')}s"
            return kind
    return "hook"


def _pre_stop_seconds(container, grace: int) -> int:
    """How long the kubelet waits for a container's preStop hook: a sleep hook's duration, else
    (unknown) up to the whole grace period, after which it stops waiting."""
    seconds = _sleep_seconds(container)
    return grace if seconds is None else min(max(seconds, 0), grace)


def _sleep_seconds(container):
    """A sleep preStop hook's seconds (None: another hook, whose duration is not known)."""
    sleep = (container.pre_stop or {}).get("sleep")
    return sleep["seconds"] if isinstance(sleep, dict) and isinstance(sleep.get("seconds"), int) else None


def last_kill(pod, grace: int) -> int:
    """When the kubelet's last SIGKILL can come (``killContainer``): the grace period, but every
    container gets at least 2 s after its SIGTERM, counted after its preStop hook (which may use
    up the grace period) and, for a sidecar, after its turn (waited for up to the grace period)."""
    latest = max(grace, MIN_RUNTIME_GRACE)
    for c in pod.containers:
        if c.pre_stop:
            latest = max(latest, _pre_stop_seconds(c, grace) + MIN_RUNTIME_GRACE)
    if any(c.is_sidecar for c in pod.init_containers):
        latest = grace + MIN_RUNTIME_GRACE
    return latest


def sigterm_steps(pod, grace: int) -> list:
    """When the main containers get SIGTERM (``killContainer``): at once without a preStop hook, else
    when the hook ends or the grace period does, whichever is first (``executePreStopHook`` waits for
    the hook up to the grace period); a hook of unknown duration (not a sleep) ends by the grace period."""
    if not any(c.pre_stop for c in pod.containers):
        return [{"at": 0, "event": "SIGTERM to the main containers"}]
    rows = {}  # (time, what) -> container names
    for c in pod.containers:
        seconds = _pre_stop_seconds(c, grace) if c.pre_stop else 0
        if not c.pre_stop:
            what = "(no preStop hook)"  # (no 2 s note: it has the whole grace period)
        elif _sleep_seconds(c) is None:
            what = "when its preStop hook ends, at the latest here, as the grace period ends"
        elif seconds < grace:
            what = "when its preStop hook ends"
        else:
            what = "as the grace period ends: its preStop hook is no longer waited for"
        rows.setdefault((seconds, what), []).append(c.name)
    least = f" (at least {MIN_RUNTIME_GRACE} s remain for it)"
    return [{"at": seconds, "event": f"SIGTERM to {', '.join(names)} {what}" + ("" if what.startswith("(") else least)}
            for (seconds, what), names in sorted(rows.items(), key=lambda row: row[0][0])]


def timeline(pod, requested=None, eviction_max_pod_grace=None) -> TerminationTimeline:
    """Delete, eviction, kubelet soft/hard eviction and probe-failure timelines for a pod."""
    from kubectl_safety.analysis.explanations.common import TimelineStep  # explain's types: a drain needs none
    from kubectl_safety.analysis.explanations.termination import GracePeriod, PreStopHook, ProbeGrace, ProbeKind
    from kubectl_safety.analysis.explanations.termination import TerminationTimeline

    grace = api_grace_period(pod, requested)
    g = grace["seconds"]
    sidecars = [c for c in pod.init_containers if c.is_sidecar]
    pre_stops = [PreStopHook(c.name, _pre_stop_kind(c), c.is_sidecar) for c in list(pod.containers) + sidecars
                 if c.pre_stop]
    steps = []
    if g == 0:
        steps.append({"at": 0, "event": "object removed from the API at once; processes may still run"})
        if pod.node_name and not pod.is_terminal:
            # The kubelet's pod worker raises a zero grace period to 1 s, killContainer to 2 s.
            latest = last_kill(pod, 1)
            steps.append({"at": latest, "event": "if its node's kubelet runs, it still stops the containers: "
                                                 f"SIGTERM when it sees the deletion, SIGKILL by t+{latest}s"})
    else:
        steps.append({"at": 0, "event": "deletionTimestamp set; pod removed from Service endpoints"})
        if pre_stops:
            names = ", ".join(p.container for p in pre_stops)
            steps.append({"at": 0, "event": f"preStop hooks run ({names}), sidecars' too; their time counts against the grace period"})
        steps += sigterm_steps(pod, g)
        if sidecars:
            order = ", ".join(c.name for c in reversed(sidecars))
            steps.append({"at": 0, "event": f"sidecars ({order}) get SIGTERM only after every main container has exited, "
                                            f"in reverse order, each with at least {MIN_RUNTIME_GRACE} s"})
        latest = last_kill(pod, g)
        if latest > max(g, MIN_RUNTIME_GRACE):
            steps.append({"at": max(g, MIN_RUNTIME_GRACE),
                          "event": "grace period over: SIGKILL to containers that had SIGTERM "
                                   f"{MIN_RUNTIME_GRACE} s ago or more"})
            why = "a preStop hook" + (" or a sidecar's wait for its turn" if sidecars else "")
            steps.append({"at": latest, "event": f"SIGKILL to anything still running ({why} that used up the grace "
                                                 f"period leaves SIGTERM {MIN_RUNTIME_GRACE} s more)"})
        else:
            steps.append({"at": latest, "event": "SIGKILL to anything still running"})
        steps.sort(key=lambda s: s["at"])  # (stable: at one time, in the order the kubelet acts)
    probes = []
    for c in pod.containers:
        for kind in ("livenessProbe", "startupProbe"):
            probe = c.probe(kind)
            if probe:
                override = probe.get("terminationGracePeriodSeconds")
                probes.append(ProbeGrace(c.name, ProbeKind(kind),
                                         pod.termination_grace_period if override is None else int(override),
                                         override is not None))
    soft = pod.termination_grace_period
    if eviction_max_pod_grace is not None:
        soft = min(soft, eviction_max_pod_grace)
    return TerminationTimeline(
        grace_period_seconds=g,
        why=grace["why"],
        pre_stop=tuple(pre_stops),
        steps=tuple(TimelineStep(s["at"], s["event"]) for s in steps),
        eviction=GracePeriod(g, "the Eviction API deletes with the same grace period unless the request sets one"),
        kubelet_soft_eviction=GracePeriod(soft, "min(pod grace period, --eviction-max-pod-grace-period)"
                                          if eviction_max_pod_grace is not None
                                          else "min(pod grace period, the kubelet's --eviction-max-pod-grace-period)"),
        kubelet_hard_eviction=GracePeriod(1, f"hard threshold: a 1 s grace period; SIGKILL {MIN_RUNTIME_GRACE} s "
                                             "after SIGTERM (the kubelet's minimum)"),
        probe_failure=tuple(probes),
    )
