"""PodDisruptionBudgets, once: the disruption controller's arithmetic (``budget``, ``never_allows``,
``summary``), the Eviction API's rules for spending a disruption (``skips_pdb_check``,
``unhealthy_goes_free``, ``spends_budget``), and the budgets a plan spends: drain's waves
(``BudgetTracker``) and rebalance's rounds (``Budgets``)."""

import math

from kubectl_safety.analysis.plans.common import BudgetSummary
from kubectl_safety.model.constants import NO_SCALE
from kubectl_safety.model.meta import parse_time


def scaled(value, total: int) -> int:
    """``GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


DELETION_TIMEOUT = 120  # seconds an Eviction's disruptedPods entry keeps a pod out of currentHealthy


class SyncFailed(Exception):
    """The disruption controller cannot compute the budget: it fails safe to 0 allowed (SyncFailed)."""


def _owner_scale(pod, snapshot):
    """(uid, replicas) of the controller the disruption controller finds for a pod, or None if the
    snapshot does not hold it. Raises SyncFailed where the controller's finders all fail."""
    ref = pod.controller_ref
    group = (ref.get("apiVersion") or "").rpartition("/")[0]
    if (ref.get("kind"), group) in NO_SCALE:
        raise SyncFailed(f"{NO_SCALE[ref.get('kind'), group]} does not implement the scale subresource")
    owner = snapshot.owner(pod)
    if owner is not None and owner.kind == "ReplicaSet" and owner.controller_ref \
            and owner.controller_ref.get("kind") == "Deployment":
        owner = snapshot.owner(owner)
    if owner is None or owner.replicas is None:
        return None
    return owner.uid, owner.replicas


def expected_scale(pdb, pods, snapshot):
    """``getExpectedScale``: the sum of the replicas of the matching pods' controllers (deduped);
    pods without a controller are skipped. None if an owner is not in the snapshot."""
    total, seen = 0, set()
    for pod in pods:
        if not pod.controller_ref:
            continue
        found = _owner_scale(pod, snapshot)
        if found is None:
            return None
        if found[0] not in seen:
            seen.add(found[0])
            total += found[1]
    return total


def _disrupted(pdb, pod, now) -> bool:
    """In status.disruptedPods and not yet past the controller's DeletionTimeout."""
    if pod.name not in pdb.disrupted_pods:
        return False
    if now is None:
        return True
    when = parse_time(pdb.disrupted_pods[pod.name])
    return when is None or when.timestamp() + DELETION_TIMEOUT > now.timestamp()


def desired_healthy(pdb, expected):
    """``getExpectedPodCount``'s desiredHealthy of ``expected`` pods: ``expected`` less maxUnavailable, a
    percentage minAvailable of ``expected``, or an integer minAvailable (None: the PDB sets neither)."""
    if pdb.max_unavailable is not None:
        return max(0, expected - scaled(pdb.max_unavailable, expected))
    if isinstance(pdb.min_available, str):
        return scaled(pdb.min_available, expected)
    return None if pdb.min_available is None else int(pdb.min_available)


def status_sync_failure(pdb):
    """The message of the status's DisruptionAllowed=False/SyncFailed condition, or None."""
    for c in pdb.status.get("conditions") or []:
        if c.get("type") == "DisruptionAllowed" and c.get("status") == "False" and c.get("reason") == "SyncFailed":
            return c.get("message") or "SyncFailed"
    return None


def budget(pdb, snapshot, pods=None) -> dict:
    """Recomputed desiredHealthy/expectedPods/currentHealthy/disruptionsAllowed, with status
    (``pods``: the snapshot's pods the PDB selects, in snapshot order, when the caller knows them).

    The recomputation follows the disruption controller over the snapshot's pods and owners;
    ``syncFailed`` says why its sync fails (it then writes 0 allowed and keeps the rest). ``status``
    is what the controller last wrote: where they differ, the Eviction check uses ``status``. When
    the snapshot does not hold every pod of the namespace (a node-scoped read), nothing can be
    recounted: the numbers are the status's and ``matchingPods`` is None.
    """
    status = {k: pdb.status.get(k) for k in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")}
    if not snapshot.pods_complete_in(pdb.namespace):
        return {"matchingPods": None, "healthyPods": pdb.status_int("currentHealthy"),
                "expectedPods": pdb.status_int("expectedPods"), "desiredHealthy": pdb.status_int("desiredHealthy"),
                "disruptionsAllowed": pdb.disruptions_allowed, "status": status, "statusCurrent": pdb.status_is_current,
                "syncFailed": status_sync_failure(pdb)}
    pods = _selected(pdb, snapshot) if pods is None else pods
    now = snapshot.taken_at
    healthy = [p for p in pods if not p.is_terminating and p.is_ready and not _disrupted(pdb, p, now)]
    expected, desired, failed = None, None, None
    try:
        if pdb.max_unavailable is not None or isinstance(pdb.min_available, str):
            expected = expected_scale(pdb, pods, snapshot)
            if expected is None:  # an owner is not in the snapshot: trust the controller's status
                expected, failed = pdb.status_int("expectedPods"), status_sync_failure(pdb)
            desired = None if expected is None else desired_healthy(pdb, expected)
        elif pdb.min_available is not None:
            expected, desired = len(pods), desired_healthy(pdb, len(pods))
    except SyncFailed as e:
        failed = str(e)
        expected, desired = pdb.status_int("expectedPods"), pdb.status_int("desiredHealthy")
    allowed = None
    if failed:
        allowed = 0
    elif desired is not None:
        allowed = max(0, len(healthy) - desired) if expected and expected > 0 else 0
    return {
        "matchingPods": len(pods), "healthyPods": len(healthy),
        "expectedPods": expected, "desiredHealthy": desired, "disruptionsAllowed": allowed,
        "status": status, "statusCurrent": pdb.status_is_current, "syncFailed": failed,
    }


def never_allows(pdb, snapshot, b=None, pods=None):
    """Why this PDB can never allow a voluntary disruption even with every pod healthy, or None
    (``b``: its ``budget`` on ``snapshot``, when already computed; ``pods``: as for ``budget``)."""
    if not snapshot.pods_complete_in(pdb.namespace):
        return _never_allows_from_status(pdb)
    b = b or budget(pdb, snapshot, pods)
    if b["syncFailed"]:
        return (f"the disruption controller fails safe to 0 disruptions allowed (SyncFailed: {b['syncFailed']}): "
                "every eviction is refused until the PDB or its pods change")
    expected, desired = b["expectedPods"], b["desiredHealthy"]
    if pdb.max_unavailable is not None or isinstance(pdb.min_available, str):
        if b["matchingPods"] and expected == 0:
            return "its pods have no controller, so expectedPods is 0 and no disruption is ever allowed"
    if pdb.max_unavailable is not None:
        if expected is not None and scaled(pdb.max_unavailable, expected) <= 0:
            return f"maxUnavailable {pdb.max_unavailable} of {expected} pods allows no disruption"
        return None
    if pdb.min_available is None:
        return None
    if isinstance(pdb.min_available, str):
        if expected is not None and desired is not None and desired >= expected and expected > 0:
            return f"minAvailable {pdb.min_available} of {expected} pods needs every pod healthy"
        return None
    replicas = _replicas_of_matching_owners(pdb, snapshot, pods)
    count = replicas if replicas is not None else b["matchingPods"]
    if desired is not None and count and desired >= count:
        return (f"minAvailable {desired} with {count} {'replicas' if replicas is not None else 'pods'}: "
                "no pod may ever be evicted")
    return None


def never_evicts(pdb, known: BudgetSummary):
    """Why no eviction of ``pdb``'s pods ever passes (``known``: its ``summary``), or None: ``never_allows``,
    or the status's desiredHealthy >= expectedPods > 0 with none allowed where expectedPods is the
    owners' scale (maxUnavailable, percentages; for an integer minAvailable it is the pods that exist
    now, which dips while replacements start)."""
    if known.never_allows is not None:
        return known.never_allows
    desired, expected = pdb.status_int("desiredHealthy"), pdb.status_int("expectedPods")
    if (pdb.max_unavailable is not None or isinstance(pdb.min_available, str)) and pdb.disruptions_allowed == 0 \
            and desired is not None and expected is not None and desired >= expected > 0:
        return f"desiredHealthy {desired} >= expectedPods {expected}"
    return None


def _never_allows_from_status(pdb):
    """The same judgement from the status alone (pods not all in the snapshot)."""
    failed = status_sync_failure(pdb)
    if failed:
        return (f"the disruption controller fails safe to 0 disruptions allowed (SyncFailed: {failed}): "
                "every eviction is refused until the PDB or its pods change")
    expected, desired = pdb.status_int("expectedPods"), pdb.status_int("desiredHealthy")
    if expected is None or desired is None or expected <= 0 or desired < expected:
        return None
    rule = (f"maxUnavailable {pdb.max_unavailable}" if pdb.max_unavailable is not None
            else f"minAvailable {pdb.min_available}")
    return f"{rule} of {expected} pods needs every pod healthy (PDB status)"


def _replicas_of_matching_owners(pdb, snapshot, pods=None):
    """The owners' replicas plus the pods without a controller (which nothing replaces)."""
    pods = _selected(pdb, snapshot) if pods is None else pods
    try:
        replicas = expected_scale(pdb, pods, snapshot) if pods else None
    except SyncFailed:
        return None
    return None if replicas is None else replicas + sum(1 for p in pods if not p.controller_ref)


def _selected(pdb, snapshot) -> list:
    return [p for p in snapshot.pods_in(pdb.namespace) if pdb.selects(p)]


def summary(pdb, snapshot, pods=None) -> BudgetSummary:
    """A PDB as every report shows it (``pods``: as for ``budget``)."""
    if pods is None and snapshot.pods_complete_in(pdb.namespace):
        pods = _selected(pdb, snapshot)  # once for the budget and never_allows
    b = budget(pdb, snapshot, pods)
    return BudgetSummary(pdb.name, pdb.namespace, pdb.min_available, pdb.max_unavailable,
                         pdb.unhealthy_pod_eviction_policy, str(pdb.selector) if pdb.selector is not None else None,
                         pdb.disruptions_allowed, pdb.status_int("currentHealthy"), pdb.status_int("desiredHealthy"),
                         pdb.status_int("expectedPods"), b["matchingPods"], never_allows(pdb, snapshot, b, pods))


# -- the Eviction API: which evictions spend a disruption -----------------------------------------

def skips_pdb_check(pod) -> bool:
    """``canIgnorePDB``: the Eviction API deletes terminal, Pending and terminating pods without
    consulting any PDB."""
    return pod.is_terminal or pod.phase == "Pending" or pod.is_terminating


def unhealthy_goes_free(pdb) -> str:
    """How a not-Ready pod of ``pdb`` goes without spending a disruption (unhealthyPodEvictionPolicy):
    "AlwaysAllow"; "IfHealthyBudget" while the PDB is healthy (currentHealthy >= desiredHealthy > 0);
    '' when it needs one like a Ready pod."""
    if pdb.unhealthy_pod_eviction_policy == "AlwaysAllow":
        return "AlwaysAllow"
    healthy, desired = pdb.status_int("currentHealthy") or 0, pdb.status_int("desiredHealthy") or 0
    return "IfHealthyBudget" if healthy >= desired > 0 else ""


def spends_budget(pod, pdb) -> bool:
    """Whether evicting ``pod`` takes one of ``pdb``'s disruptions."""
    return not (skips_pdb_check(pod) or not pod.is_ready and unhealthy_goes_free(pdb))


# -- budgets a plan spends -------------------------------------------------------------------------

class BudgetTracker:
    """One PDB's remaining disruptions across waves (status numbers, as the API server uses them)."""

    def __init__(self, pdb, snapshot, known=None):
        self.pdb = pdb
        self.summary = known if known is not None else summary(pdb, snapshot)
        self.allowed = pdb.disruptions_allowed
        self.healthy = pdb.status_int("currentHealthy")
        self.desired = pdb.status_int("desiredHealthy")
        self.expected = pdb.status_int("expectedPods")
        self.never = never_evicts(pdb, self.summary)
        self.lost = 0  # healthy pods evicted for good (no replacement, or it cannot be placed)
        self.waves = {}  # wave -> pods evicted in it

    def numbers(self) -> str:
        return (f"needs {self.desired if self.desired is not None else '?'} healthy, has "
                f"{self.healthy if self.healthy is not None else '?'}, disruptionsAllowed {self.allowed}")

    def per_wave(self) -> int:
        return self.allowed - self.lost

class Budgets:
    """PDB allowances, cumulative within a round; a new round restores the full budget."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self.round = 1
        self.left = {}

    def full(self, pdb) -> int:
        b = budget(pdb, self.snapshot)
        if b["expectedPods"] is not None and b["desiredHealthy"] is not None:
            return max(0, b["expectedPods"] - b["desiredHealthy"])
        return pdb.disruptions_allowed

    def _left(self, pdb) -> int:
        if pdb.uid not in self.left:
            self.left[pdb.uid] = pdb.disruptions_allowed if self.round == 1 else self.full(pdb)
        return self.left[pdb.uid]

    def check(self, pod) -> str:
        """'' if evicting ``pod`` fits this round, 'wait' if only a later round, else the reason."""
        budgets = self.snapshot.pdbs_for(pod)
        if not budgets:
            return ""
        pdb = budgets[0]
        if not spends_budget(pod, pdb):
            return ""
        if self._left(pdb) > 0:
            return ""
        never = never_allows(pdb, self.snapshot)
        if never:
            return f"PDB {pdb.name}: {never}"
        if self.full(pdb) <= 0:
            return f"PDB {pdb.name} allows no disruption"
        return "wait"

    def spend(self, pod):
        budgets = self.snapshot.pdbs_for(pod)
        if budgets and spends_budget(pod, budgets[0]):
            self.left[budgets[0].uid] = self._left(budgets[0]) - 1

    def next_round(self):
        self.round += 1
        self.left = {}
