"""The graceful termination timeline (API server ``BeforeDelete`` + kubelet pod worker)."""

MIN_RUNTIME_GRACE = 2  # kubelet: minimumGracePeriodInSeconds handed to the runtime


def api_grace_period(pod, requested=None) -> dict:
    """The grace period the API server sets on DELETE (incl. via Eviction).

    ``requested`` is DeleteOptions.gracePeriodSeconds (None: the pod's own).
    """
    if pod.is_terminal or not pod.node_name:
        why = "the pod has finished" if pod.is_terminal else "the pod is not scheduled to a node"
        return {"seconds": 0, "why": f"0: {why}, so the API server deletes it at once"}
    if requested is not None:
        seconds, why = int(requested), "from the delete request"
    else:
        seconds = pod.termination_grace_period
        why = ("spec.terminationGracePeriodSeconds" if pod.spec.get("terminationGracePeriodSeconds")
               is not None else "default 30 s (terminationGracePeriodSeconds unset)")
    if seconds < 0:
        seconds, why = 1, "negative values become 1"
    current = pod.deletion_grace_period
    if current is not None and pod.is_terminating and seconds >= current:
        return {"seconds": current, "why": f"already terminating with {current} s: a grace period can only be shortened"}
    return {"seconds": seconds, "why": why}


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


def timeline(pod, requested=None, eviction_max_pod_grace=None) -> dict:
    """Delete, eviction, kubelet soft/hard eviction and probe-failure timelines for a pod."""
    grace = api_grace_period(pod, requested)
    g = grace["seconds"]
    pre_stops = [{"container": c.name, "hook": _pre_stop_kind(c)}
                 for c in pod.containers if c.pre_stop]
    steps = []
    if g == 0:
        steps.append({"at": 0, "event": "object removed from the API at once; processes may still run"})
    else:
        steps.append({"at": 0, "event": "deletionTimestamp set; pod removed from Service endpoints"})
        if pre_stops:
            names = ", ".join(p["container"] for p in pre_stops)
            steps.append({"at": 0, "event": f"preStop hooks run ({names}); their time counts against the grace period"})
            steps.append({"at": 0, "event": f"SIGTERM after preStop returns (at least {MIN_RUNTIME_GRACE} s remain for it)"})
        else:
            steps.append({"at": 0, "event": "SIGTERM to every container"})
        steps.append({"at": max(g, MIN_RUNTIME_GRACE) if pre_stops else max(g, 1), "event": "SIGKILL to anything still running"})
    probes = []
    for c in pod.containers:
        for kind in ("livenessProbe", "startupProbe"):
            probe = c.probe(kind)
            if probe:
                override = probe.get("terminationGracePeriodSeconds")
                probes.append({"container": c.name, "probe": kind,
                               "gracePeriodSeconds": pod.termination_grace_period if override is None else int(override),
                               "probeOverride": override is not None})
    soft = pod.termination_grace_period
    if eviction_max_pod_grace is not None:
        soft = min(soft, eviction_max_pod_grace)
    return {
        "gracePeriodSeconds": g,
        "why": grace["why"],
        "preStop": pre_stops,
        "steps": steps,
        "eviction": {"gracePeriodSeconds": g, "note": "the Eviction API deletes with the same grace period unless the request sets one"},
        "kubeletSoftEviction": {"gracePeriodSeconds": soft,
                                "note": "min(pod grace period, --eviction-max-pod-grace-period)" if eviction_max_pod_grace is not None
                                else "min(pod grace period, the kubelet's --eviction-max-pod-grace-period)"},
        "kubeletHardEviction": {"gracePeriodSeconds": 1, "note": "hard threshold: killed immediately (at least 1 s)"},
        "probeFailure": probes,
    }
