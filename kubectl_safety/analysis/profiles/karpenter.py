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
  budgets (``nodes: 10%`` by default).
"""

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, Budgets, Decision, DrainProfile, Grace, GraceRule, Order,
                                                    PodRule, SettingSpec, duration, int_or_percent)

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


def grace_period(text):
    """A NodePool's terminationGracePeriod: a Go duration, or empty (unset: no deadline)."""
    if str(text).strip() in ("", "null"):
        return None
    return duration(text)


SETTINGS = (
    SettingSpec("terminationGracePeriod", "", grace_period,
                "NodePool spec.template.spec: how long a node may drain; each pod is deleted at the deadline minus "
                "its own grace, past PDBs and do-not-disrupt (empty: wait for ever)"),
    SettingSpec("nodes", "10%", int_or_percent, "NodePool disruption budget: nodes disrupted at once"),
)


NODEPOOL_LABEL = "karpenter.sh/nodepool"  # apis/v1/labels.go NodePoolLabelKey
DRIFTED = "Drifted"  # apis/v1/nodepool.go DisruptionReasonDrifted: the reason an upgrade disrupts for


def _node_pool(snapshot, node):
    """The NodePool of a node: its NodeClaim's ``karpenter.sh/nodepool`` label, else the node's own."""
    claim = next((c for c in snapshot.node_claims if c.node_name == node), None)
    n = snapshot.node(node)
    name = (claim.labels if claim is not None else {}).get(NODEPOOL_LABEL) or (n.labels if n else {}).get(
        NODEPOOL_LABEL)
    return next((p for p in snapshot.node_pools if p.name == name), None) if name else None


def _budget(pool, total):
    """The NodePool's budget for drift, ``(nodes, where)``: the one allowing the fewest of its ``total`` nodes
    among those whose reasons include Drifted (none listed: every reason), as nodepool.go
    ``GetAllowedDisruptionsByReason`` takes the minimum of the active ones; a scheduled budget counts as
    active (whether its cron schedule is active at the upgrade's time is not known here). None: no budget."""
    from kubectl_safety.analysis.profiles.base import SettingError, at, int_or_percent, of_total

    def allowed(budget):
        try:
            return of_total(int_or_percent(budget.get("nodes", "10%")), total)
        except SettingError:
            return -1  # not a value Karpenter takes: shown, and refused by the setting's parser
    def for_drift(budget):  # no reasons: every reason (a malformed list counts too)
        reasons = budget.get("reasons")
        return not isinstance(reasons, list) or not reasons or DRIFTED in reasons
    listed = at(pool.raw, "spec", "disruption", "budgets")
    budgets = [b for b in listed if isinstance(b, dict) and for_drift(b)] if isinstance(listed, list) else []
    if not budgets:
        return None
    chosen = min(budgets, key=allowed)
    when = f", budget scheduled {chosen['schedule']} for {chosen.get('duration')}" if chosen.get("schedule") else ""
    return str(chosen.get("nodes", "10%")), when


def read(snapshot, nodes=()) -> dict:
    """{setting: (value, origin)} from the NodePool of each node: its drift budget (``nodes``) and
    ``spec.template.spec.terminationGracePeriod`` (unset there: no deadline)."""
    from kubectl_safety.analysis.profiles.base import at, of_nodes

    def find(node):
        pool = _node_pool(snapshot, node)
        if pool is None:
            return {}
        origin = f"NodePool {pool.name}"
        tgp = at(pool.raw, "spec", "template", "spec", "terminationGracePeriod")
        found = {"terminationGracePeriod": ("" if tgp is None else str(tgp), origin)}
        total = sum(1 for n in snapshot.nodes if _node_pool(snapshot, n.name) is pool)
        budget = _budget(pool, total)
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
    if isinstance(nodes, str):
        parallel = 1
        notes.append(f"the disruption budget nodes={nodes} is a share of the NodePool's nodes, which the snapshot "
                     "does not hold: one node at a time is assumed")
    elif nodes == 0:
        parallel = 1
        notes.append("the disruption budget nodes=0 holds drift and consolidation; expiration and deletion are not "
                     "budgeted: one node at a time is assumed")
    else:
        parallel = nodes
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()),
        drain=DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True),
        rules=(rule,), budgets=Budgets.HONOUR, order_group=tier,
        grace=Grace(GraceRule.DEADLINE) if tgp is not None else Grace(),
        timeout_seconds=tgp, timeout_setting="terminationGracePeriod", at_timeout=AtTimeout.FORCE,
        leaves="", halts=False, parallel=parallel, order=Order.GIVEN,
        replaces_machine=True, new_capacity=True, sources=SOURCES, notes=tuple(notes))
