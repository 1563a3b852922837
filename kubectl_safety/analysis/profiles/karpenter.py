"""Karpenter (v1): the node termination controller's drain (drift, expiration, consolidation, deletion).

Sources (sigs.k8s.io/karpenter v1.14.1):
- pkg/controllers/node/termination/controller.go: ``finalize`` (taint karpenter.sh/disrupted:NoSchedule,
  then ``awaitDrain``, volume detachment, instance termination), ``awaitDrain`` (a Drain every second
  until no pod is left to wait for).
- pkg/controllers/node/termination/terminator/terminator.go: ``Drain`` (the pods it waits for; only the
  first non-empty tier is handed to the eviction queue), ``groupPodsByPriority`` (non-critical,
  non-critical DaemonSet, critical, critical DaemonSet; critical = system-cluster-critical or
  system-node-critical), ``DeleteExpiringPods`` and ``podDeleteTimeWithGracePeriod`` (with a
  terminationGracePeriod each pod is deleted at the node's deadline minus its own grace, past its PDB
  and do-not-disrupt, in every tier at once).
- pkg/controllers/node/termination/terminator/eviction.go: ``Queue.Reconcile`` (the Eviction API: a PDB
  that does not allow, or two PDBs, hold the pod; retried with back-off).
- pkg/utils/pod/scheduling.go: ``IsWaitingEviction``, ``IsDrainable`` (pods tolerating the disrupted
  taint, static pods owned by the Node and pods stuck terminating over a minute are not waited for),
  ``IsEvictable``, ``IsDoNotDisruptActive`` (``true``, or a duration since the pod started).
- pkg/apis/v1/nodeclaim.go ``TerminationGracePeriod`` (unset: no deadline); pkg/apis/v1/nodepool.go
  budgets (``nodes: 10%`` by default), ``GetAllowedDisruptionsByReason`` (the fewest of the budgets whose
  ``reasons`` name the reason or that list none), ``Budget.GetAllowedDisruptions`` (inactive: no limit; a
  percentage of the pool rounded up; misconfigured: 0), ``Budget.IsActive`` (a hit of the cron schedule, in
  UTC, within ``duration`` before now).
- pkg/controllers/nodeclaim/expiration/controller.go ``Reconcile``: an expired NodeClaim is deleted at
  once, outside the disruption budgets.
"""

from datetime import timedelta, timezone

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, Budgets, Decision, DrainProfile, Grace, GraceRule, Hold,
                                                    Order, PodRule, SettingError, SettingSpec, choice, duration,
                                                    int_or_percent, of_total)

NAME = "karpenter"
TITLE = "Karpenter node termination"
SOURCES = (
    "sigs.k8s.io/karpenter v1.14.1 pkg/controllers/node/termination/controller.go finalize, awaitDrain",
    "sigs.k8s.io/karpenter v1.14.1 pkg/controllers/node/termination/terminator/terminator.go Drain, "
    "groupPodsByPriority, DeleteExpiringPods, podDeleteTimeWithGracePeriod",
    "sigs.k8s.io/karpenter v1.14.1 pkg/controllers/node/termination/terminator/eviction.go Queue.Reconcile",
    "sigs.k8s.io/karpenter v1.14.1 pkg/utils/pod/scheduling.go IsWaitingEviction, IsDrainable, IsEvictable, "
    "IsDoNotDisruptActive, ToleratesDisruptedNoScheduleTaint",
)
DISRUPTED_TAINT = {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}  # apis/v1/taints.go
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"  # apis/v1/labels.go DoNotDisruptAnnotationKey
CRITICAL = ("system-cluster-critical", "system-node-critical")
TIERS = ("non-critical", "non-critical DaemonSet", "critical", "critical DaemonSet")
STUCK_TERMINATING_SECONDS = 60  # scheduling.go IsStuckTerminating
DRIFTED = "Drifted"  # apis/v1/nodepool.go DisruptionReasonDrifted: the reason an upgrade disrupts for
REASONS = ("Drifted", "Underutilized", "Empty")  # apis/v1/nodepool.go DisruptionReason: what budgets bind
EXPIRED = "Expired"  # nodeclaim/expiration controller.go Reconcile deletes an expired NodeClaim: no budget


def grace_period(text):
    """A NodePool's terminationGracePeriod: a Go duration, or empty (unset: no deadline)."""
    if str(text).strip() in ("", "null"):
        return None
    return duration(text)


SETTINGS = (
    SettingSpec("terminationGracePeriod", "", grace_period,
                "NodePool spec.template.spec: how long a node may drain; each pod is deleted at the deadline minus "
                "its own grace, past PDBs and do-not-disrupt (empty: wait for ever)"),
    SettingSpec("nodes", "10%", int_or_percent, "NodePool disruption budget: nodes disrupted at once (read from "
                "the NodePool: the fewest its active budgets for the reason allow, at the snapshot's time)"),
    SettingSpec("reason", DRIFTED, choice(*REASONS, EXPIRED),
                "why the nodes are replaced: Drifted (an upgrade), Underutilized, Empty (budgeted), or Expired "
                "(expireAfter: not budgeted, every expired node at once)"),
)


NODEPOOL_LABEL = "karpenter.sh/nodepool"  # apis/v1/labels.go NodePoolLabelKey


def _node_pool(snapshot, node):
    """The NodePool of a node: its NodeClaim's ``karpenter.sh/nodepool`` label, else the node's own."""
    claim = next((c for c in snapshot.node_claims if c.node_name == node), None)
    n = snapshot.node(node)
    name = (claim.labels if claim is not None else {}).get(NODEPOOL_LABEL) or (n.labels if n else {}).get(
        NODEPOOL_LABEL)
    return next((p for p in snapshot.node_pools if p.name == name), None) if name else None


def _allowed(budget, total, now):
    """nodepool.go ``Budget.GetAllowedDisruptions`` at ``now``: (nodes of ``total`` it allows, or None when it is
    not active; how it is active). ``IsActive``: no schedule and no duration, or a hit of the cron schedule (UTC)
    within the duration before ``now``; a schedule that does not parse fails closed (0)."""
    from kubectl_safety.model.cron import CronError, parse_cron

    schedule, length = budget.get("schedule"), budget.get("duration")
    how = ""
    if (schedule is not None or length is not None) and now is None:
        how = f", budget scheduled {schedule} for {length}, counted active (the snapshot has no time)"
    elif schedule is not None or length is not None:
        try:
            seconds = duration(length) if length is not None else 0
            hit = parse_cron(schedule or "").last_hit(now - timedelta(seconds=seconds), now)
        except (CronError, SettingError) as e:
            return 0, f", budget schedule {schedule!r} for {length} does not parse ({e}): Karpenter fails closed"
        if hit is None:
            return None, ""
        how = f", budget scheduled {schedule} for {length}, active since {hit.strftime('%Y-%m-%dT%H:%MZ')}"
    nodes = budget.get("nodes", "10%")
    try:
        return of_total(int_or_percent(nodes), total), how + (f", nodes={nodes} of {total} rounded up"
                                                              if str(nodes).endswith("%") else "")
    except SettingError as e:
        return 0, f", budget nodes={nodes!r} ({e}): Karpenter fails closed"


def _budget(pool, total, reason, now):
    """The NodePool's budget for ``reason`` at ``now``, ``(nodes, where)``, as nodepool.go
    ``GetAllowedDisruptionsByReason``: the fewest nodes the active budgets that bind the reason allow (no
    ``reasons``: every reason); none active: every node of the pool. None: the NodePool lists no budgets."""
    from kubectl_safety.analysis.profiles.base import at

    if now is not None:  # Karpenter reads its schedules in UTC (budget ``IsActive``: c.Now().UTC())
        now = (now if now.tzinfo else now.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)
    listed = at(pool.raw, "spec", "disruption", "budgets")
    if not isinstance(listed, list):
        return None
    binding = [b for b in listed if isinstance(b, dict)
               and (not isinstance(b.get("reasons"), list) or reason in b["reasons"])]
    active = [(n, how) for n, how in (_allowed(b, total, now) for b in binding) if n is not None]
    if not active:
        return str(total), f": no budget binds {reason} at {now.strftime('%Y-%m-%dT%H:%MZ')}, every node at once" \
            if now is not None else f": no budget binds {reason}, every node at once"
    nodes, how = min(active, key=lambda a: a[0])
    return str(nodes), how


def read(snapshot, nodes=(), given=None) -> dict:
    """{setting: (value, origin)} from the NodePool of each node: its budget for the reason (``nodes``, at the
    snapshot's time) and ``spec.template.spec.terminationGracePeriod`` (unset there: no deadline)."""
    from kubectl_safety.analysis.profiles.base import at, of_nodes

    reason = (given or {}).get("reason", DRIFTED)

    def find(node):
        pool = _node_pool(snapshot, node)
        if pool is None:
            return {}
        origin = f"NodePool {pool.name}"
        tgp = at(pool.raw, "spec", "template", "spec", "terminationGracePeriod")
        found = {"terminationGracePeriod": ("" if tgp is None else str(tgp), origin)}
        total = sum(1 for n in snapshot.nodes if _node_pool(snapshot, n.name) is pool)
        budget = _budget(pool, total, reason, snapshot.taken_at) if reason != EXPIRED else None
        if budget is not None:
            found["nodes"] = (budget[0], origin + budget[1])
        return found
    return of_nodes(nodes, find)


def _owned_by(pod, api_version, kind) -> bool:
    """IsOwnedBy: any owner reference (not only the controller) of that apiVersion and kind."""
    return any(o.get("apiVersion") == api_version and o.get("kind") == kind for o in pod.owner_references)


def tier(pod):
    """groupPodsByPriority: the pod's tier (rank, name)."""
    rank = (2 if pod.priority_class_name in CRITICAL else 0) + (1 if _owned_by(pod, "apps/v1", "DaemonSet") else 0)
    return rank, TIERS[rank]


def _do_not_disrupt(pod, now):
    """IsDoNotDisruptActive: the reason the annotation holds the pod at ``now``, or None."""
    from kubectl_safety.model.duration import DurationError, parse_duration

    value = pod.annotations.get(DO_NOT_DISRUPT)
    if value is None:
        return None
    if value == "true":
        return f"{DO_NOT_DISRUPT}=true"
    try:
        seconds = parse_duration(value)
    except DurationError:
        return None  # an invalid value is ignored (an event says so)
    if seconds <= 0:
        return None
    started = pod.start_time
    if started is None:
        return f"{DO_NOT_DISRUPT}={value} (the pod's start time is unknown)"
    if (now - started).total_seconds() < seconds:
        return f"{DO_NOT_DISRUPT}={value} (the pod started at {started.isoformat()})"
    return None


def rule(pod, snapshot):
    """IsWaitingEviction and IsEvictable, in Karpenter's terms, before kubectl drain's filters."""
    from kubectl_safety.model.selectors import toleration_tolerates

    if any(toleration_tolerates(t, DISRUPTED_TAINT) for t in pod.tolerations):
        return PodRule(Decision.SKIP, "KARPENTER_TOLERATES_DISRUPTED",
                       "left in place: it tolerates karpenter.sh/disrupted:NoSchedule, so Karpenter never evicts it")
    if _owned_by(pod, "v1", "Node"):
        return PodRule(Decision.SKIP, "KARPENTER_STATIC_POD", "left in place: a static pod (owned by the Node)")
    if pod.is_terminal:
        return PodRule(Decision.SKIP, "KARPENTER_TERMINAL", "left in place: it has finished")
    deleted = pod.deletion_timestamp
    if deleted is not None and (snapshot.taken_at - deleted).total_seconds() > STUCK_TERMINATING_SECONDS:
        return PodRule(Decision.SKIP, "KARPENTER_STUCK_TERMINATING",
                       "not waited for: terminating for over a minute past its deadline")
    held = _do_not_disrupt(pod, snapshot.taken_at)
    if held:
        return PodRule(Decision.WAIT, "KARPENTER_DO_NOT_DISRUPT",
                       f"not evicted: {held}; the node waits for it")
    if _owned_by(pod, "apps/v1", "DaemonSet"):
        return PodRule(Decision.EVICT, "KARPENTER_DAEMONSET", "evicted: Karpenter drains DaemonSet pods too")
    return None


def profile(settings) -> DrainProfile:
    tgp = settings["terminationGracePeriod"].value
    nodes = settings["nodes"].value
    notes = ["drift replaces the oldest-drifted nodes first (the NodeClaims' Drifted condition), which the "
             "snapshot does not hold: the nodes are taken in the order given"]
    reason = settings["reason"].value
    holds = ()
    if reason == EXPIRED:
        parallel = 0
        notes.append("expiration is not budgeted (the NodeClaim is deleted when it expires): every expired node "
                     "drains at once")
    elif isinstance(nodes, str):
        parallel = 1
        notes.append(f"the disruption budget nodes={nodes} is a share of the NodePool's nodes, which the snapshot "
                     "does not hold: one node at a time is assumed")
    elif nodes == 0:
        parallel = 1
        holds = (Hold(True, "nodes", "KARPENTER_BUDGET", f"the disruption budget nodes=0 allows no {reason} "
                      "disruption while it is active"),)
    else:
        parallel = nodes
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()),
        drain=DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True),
        rules=(rule,), budgets=Budgets.HONOUR, order_group=tier,
        grace=Grace(GraceRule.DEADLINE) if tgp is not None else Grace(),
        timeout_seconds=tgp, timeout_setting="terminationGracePeriod", at_timeout=AtTimeout.FORCE,
        leaves="", halts=False, parallel=parallel, order=Order.GIVEN, holds=holds,
        replaces_machine=True, new_capacity=True, sources=SOURCES, notes=tuple(notes))
