"""PodDisruptionBudget arithmetic, as the disruption controller computes status."""

import math


def scaled(value, total: int) -> int:
    """``GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def expected_scale(pdb, pods, snapshot):
    """Sum of the replicas of the matching pods' controllers (deduped), or None if unknown."""
    total, seen = 0, set()
    for pod in pods:
        ref = pod.controller_ref
        if not ref:
            continue
        owner = snapshot.owner(pod)
        if owner is not None and owner.kind == "ReplicaSet":
            parent = snapshot.owner(owner)
            if parent is not None and parent.kind == "Deployment":
                owner = parent
            elif owner.controller_ref and owner.controller_ref.get("kind") == "Deployment":
                return None  # the Deployment is not in the snapshot
        if owner is None or owner.replicas is None:
            return None
        if owner.uid in seen:
            continue
        seen.add(owner.uid)
        total += owner.replicas
    return total


def budget(pdb, snapshot) -> dict:
    """Recomputed desiredHealthy/expectedPods/currentHealthy/disruptionsAllowed, with status.

    The recomputation uses the snapshot's pods and owners; ``status`` is what the controller
    last wrote. Where they differ, the API server's Eviction check uses ``status``. When the
    snapshot does not hold every pod of the namespace (a node-scoped read), nothing can be
    recounted: the numbers are the status's and ``matchingPods`` is None.
    """
    status = {k: pdb.status.get(k) for k in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")}
    if not snapshot.pods_complete_in(pdb.namespace):
        return {"matchingPods": None, "healthyPods": pdb.status_int("currentHealthy"),
                "expectedPods": pdb.status_int("expectedPods"), "desiredHealthy": pdb.status_int("desiredHealthy"),
                "disruptionsAllowed": pdb.disruptions_allowed, "status": status, "statusCurrent": pdb.status_is_current}
    pods = [p for p in snapshot.pods_in(pdb.namespace) if pdb.selects(p)]
    healthy = [p for p in pods if not p.is_terminating and p.is_ready and p.name not in pdb.disrupted_pods]
    expected = None
    if pdb.max_unavailable is not None or isinstance(pdb.min_available, str):
        expected = expected_scale(pdb, pods, snapshot)
        if expected is None:
            expected = pdb.status_int("expectedPods")
        if expected is None:
            desired = None
        elif pdb.max_unavailable is not None:
            desired = max(0, expected - scaled(pdb.max_unavailable, expected))
        else:
            desired = scaled(pdb.min_available, expected)
    else:
        expected = len(pods)
        desired = int(pdb.min_available) if pdb.min_available is not None else None
    allowed = None
    if desired is not None:
        allowed = max(0, len(healthy) - desired) if expected and expected > 0 else 0
    return {
        "matchingPods": len(pods), "healthyPods": len(healthy),
        "expectedPods": expected, "desiredHealthy": desired, "disruptionsAllowed": allowed,
        "status": status,
        "statusCurrent": pdb.status_is_current,
    }


def never_allows(pdb, snapshot):
    """Why this PDB can never allow a voluntary disruption even with every pod healthy, or None."""
    if not snapshot.pods_complete_in(pdb.namespace):
        return _never_allows_from_status(pdb)
    if pdb.max_unavailable is not None:
        b = budget(pdb, snapshot)
        expected = b["expectedPods"]
        if expected is not None and scaled(pdb.max_unavailable, expected) <= 0:
            return f"maxUnavailable {pdb.max_unavailable} of {expected} pods allows no disruption"
        return None
    if pdb.min_available is None:
        return None
    b = budget(pdb, snapshot)
    expected, desired = b["expectedPods"], b["desiredHealthy"]
    if isinstance(pdb.min_available, str):
        if expected is not None and desired is not None and desired >= expected and expected > 0:
            return f"minAvailable {pdb.min_available} of {expected} pods needs every pod healthy"
        return None
    replicas = _replicas_of_matching_owners(pdb, snapshot)
    pods = replicas if replicas is not None else b["matchingPods"]
    if desired is not None and pods and desired >= pods:
        return f"minAvailable {desired} with {pods} {'replicas' if replicas is not None else 'pods'}: no pod may ever be evicted"
    return None


def _never_allows_from_status(pdb):
    """The same judgement from the status alone (pods not all in the snapshot)."""
    expected, desired = pdb.status_int("expectedPods"), pdb.status_int("desiredHealthy")
    if expected is None or desired is None or expected <= 0 or desired < expected:
        return None
    rule = (f"maxUnavailable {pdb.max_unavailable}" if pdb.max_unavailable is not None
            else f"minAvailable {pdb.min_available}")
    return f"{rule} of {expected} pods needs every pod healthy (PDB status)"


def _replicas_of_matching_owners(pdb, snapshot):
    pods = [p for p in snapshot.pods_in(pdb.namespace) if pdb.selects(p)]
    return expected_scale(pdb, pods, snapshot) if pods else None


def summary(pdb, snapshot) -> dict:
    """The JSON view of a PDB used by every report."""
    b = budget(pdb, snapshot)
    return {
        "name": pdb.name, "namespace": pdb.namespace,
        "minAvailable": pdb.min_available, "maxUnavailable": pdb.max_unavailable,
        "unhealthyPodEvictionPolicy": pdb.unhealthy_pod_eviction_policy,
        "selector": str(pdb.selector) if pdb.selector is not None else None,
        "disruptionsAllowed": pdb.disruptions_allowed,
        "currentHealthy": pdb.status_int("currentHealthy"),
        "desiredHealthy": pdb.status_int("desiredHealthy"),
        "expectedPods": pdb.status_int("expectedPods"),
        "matchingPods": b["matchingPods"],
        "neverAllows": never_allows(pdb, snapshot),
    }
