"""``explain pod|node|priorities``: typed reports (``analysis/explanations/``) built from the other analyses."""

from kubectl_safety.analysis import budgets as pdbs, node_pressure, priority, qos, termination, topology
from kubectl_safety.analysis.explanations.common import NodeHealth, NodeReadiness
from kubectl_safety.analysis.explanations.node import (Allocation, ExplainedNode, NodeConditionStatus, NodeExplanation,
                                                       RankedPod, Taint)
from kubectl_safety.analysis.explanations.pod import (EvictionRank, ExplainedPod, Owner, PodExplanation,
                                                      PrioritySource, ResolvedPriority)
from kubectl_safety.analysis.explanations.priority import PriorityAudit, PriorityClassUse
from kubectl_safety.analysis.explanations.qos import QosClass
from kubectl_safety.analysis.explanations.spread import SpreadConstraint
from kubectl_safety.analysis.plans.common import Finding
from kubectl_safety.analysis.force_delete import assessment_for_explain
from kubectl_safety.analysis.node_health import node_health
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.model.quantity import format_amount
from kubectl_safety.model.selectors import LabelSelector

MANY_PRIORITY_LEVELS = 10
USAGE_ASSUMED = "usage unknown: each pod assumed to use its memory request; pods without one exceed it"


def owner_chain(pod, snapshot) -> tuple:
    return tuple(Owner(ref.get("kind"), ref.get("name"), owner is not None,
                       owner.replicas if owner is not None else None)
                 for ref, owner in snapshot.owner_chain(pod))


def health(node, now, lease=None) -> NodeHealth:
    """``node_health`` typed (``node`` None: gone; ``lease``: its Lease)."""
    h = node_health(node, now, lease)
    return NodeHealth(NodeReadiness(h["state"]), h["partitioned"], h["heartbeatAgeSeconds"], h.get("unschedulable"),
                      h["message"])


def priority_of(pod, snapshot) -> ResolvedPriority:
    """``priority.resolve`` typed (its dict also serves admission, check and preemption); a missing class: 0."""
    try:
        p = priority.resolve(pod, snapshot)
    except priority.UnknownPriorityClass:
        return ResolvedPriority(0, pod.priority_class_name, PrioritySource.UNKNOWN_CLASS,
                                pod.preemption_policy or "PreemptLowerPriority", True, False)
    return ResolvedPriority(p["value"], p["className"], PrioritySource(p["source"]), p["preemptionPolicy"],
                            p["classMissing"], p["systemCritical"])


def eviction_rank(pod, node, snapshot):
    """The pod's place in its node's memory-pressure eviction order (None: the pod is not on a node)."""
    if node is None:
        return None
    order = node_pressure.memory_pressure_order(snapshot.pods_on(node.name), snapshot)
    rank = None
    for row in order:
        if row["pod"].key == pod.key:
            known = row["usage"] is not None
            rank = EvictionRank(row["rank"], len(order), row["reason"], known, None if known else USAGE_ASSUMED)
    return rank


def pod_findings(pod, snapshot, q, prio, matched, spread, node) -> list:
    f = []
    if q.computed is QosClass.BEST_EFFORT:
        f.append(Finding("QOS_BEST_EFFORT", "warning", "no requests or limits: first to be evicted under node pressure "
                                                       "and first OOM-killed"))
    if not q.matches_status:
        f.append(Finding("QOS_STATUS_MISMATCH", "warning", f"status.qosClass is {q.status} but the spec computes "
                                                           f"{q.computed.value}"))
    for c in pod.containers:
        if "memory" not in c.limits:
            f.append(Finding("MEMORY_LIMIT_MISSING", "warning", f"container {c.name} has no memory limit: set a memory "
                                                                "request and limit"))
        elif "memory" not in c.requests:
            f.append(Finding("MEMORY_REQUEST_MISSING", "warning", f"container {c.name} has no memory request"))
        elif q.computed is QosClass.BURSTABLE and c.requests["memory"] * 10 < c.limits["memory"] * 8 \
                and not prio.system_critical:
            f.append(Finding("MEMORY_REQUEST_LOW", "info", f"container {c.name} requests "
                                                           f"{c.requests['memory'] * 100 // c.limits['memory']}% of "
                                                           "its memory limit; 80-90% is recommended for non-critical "
                                                           "pods"))
    if prio.system_critical and q.computed is not QosClass.GUARANTEED:
        f.append(Finding("CRITICAL_NOT_GUARANTEED", "warning", "critical-priority pod is not Guaranteed QoS"))
    if prio.class_missing:
        f.append(Finding("PRIORITY_CLASS_MISSING", "warning", f"PriorityClass {pod.priority_class_name} does not "
                                                              "exist: a new pod like this one would be rejected"))
    positive = [c for c in snapshot.priority_classes if c.value > 0]
    if prio.value == 0 and positive:
        f.append(Finding("PRIORITY_ZERO", "warning", f"priority 0 while {len(positive)} PriorityClass(es) have higher "
                                                     "values: any pod of those classes may preempt this one"))
    if prio.preemption_policy == "PreemptLowerPriority" and prio.value > 0 and not prio.system_critical:
        f.append(Finding("PREEMPTS_LOWER_PRIORITY", "info", "may preempt lower-priority pods; use preemptionPolicy: "
                                                            "Never unless it is critical"))
    for term in (pod.affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []:
        sel = LabelSelector.parse(term.get("labelSelector"))
        lower = [p for p in snapshot.pods_in(pod.namespace) if sel and sel.matches(p.labels)
                 and p.priority_value < prio.value and p.key != pod.key]
        if lower:
            f.append(Finding("AFFINITY_TO_LOWER_PRIORITY", "warning", f"required pod affinity to {len(lower)} "
                                                                      "lower-priority pod(s): preemption will not "
                                                                      "consider their nodes"))
    if not pod.controller_ref and not pod.is_mirror:
        f.append(Finding("UNREPLICATED", "warning", "no controller: an evicted or deleted pod is not recreated "
                                                    "(kubectl drain needs --force)"))
    if not matched and pod.controller_ref and pod.controller_ref.get("kind") != "DaemonSet":
        sev = "warning" if pod.namespace == "kube-system" else "info"
        f.append(Finding("NO_PDB", sev, "no PodDisruptionBudget covers this pod: drains may evict all its replicas at "
                                        "once"))
    if len(matched) > 1:
        f.append(Finding("MULTIPLE_PDBS", "error", f"{len(matched)} PDBs select this pod: the Eviction API refuses to "
                                                   "evict it (drain fails)"))
    for b in matched:
        why = pdbs.never_allows(b, snapshot)
        if why:
            f.append(Finding("PDB_NEVER_ALLOWS", "error", f"PDB {b.name}: {why}"))
        if b.unhealthy_pod_eviction_policy != "AlwaysAllow":
            f.append(Finding("PDB_UNHEALTHY_POLICY", "info", f"PDB {b.name} uses IfHealthyBudget: unready pods can "
                                                             "block a drain; consider unhealthyPodEvictionPolicy: "
                                                             "AlwaysAllow"))
    for c in spread:
        if c.violated:
            f.append(Finding("TOPOLOGY_SKEW_VIOLATED", "warning", f"spread on {c.topology_key} has skew {c.skew} > "
                                                                  f"maxSkew {c.max_skew}: `kubectl safety rebalance` "
                                                                  "can restore it"))
        if not c.selects_own_pod:
            f.append(Finding("TOPOLOGY_SELECTOR_MISMATCH", "warning", f"spread constraint on {c.topology_key}: "
                                                                      "labelSelector does not match the pod's own "
                                                                      "labels"))
        if not c.domains:
            f.append(Finding("TOPOLOGY_NO_DOMAINS", "warning", f"no eligible node has label {c.topology_key}: mistyped "
                                                               "key or no nodes in any domain"))
        elif node is not None and c.topology_key not in node.labels:
            f.append(Finding("TOPOLOGY_KEY_MISSING_ON_NODE", "warning", f"the pod's node lacks label {c.topology_key}: "
                                                                        "its pods are not counted"))
        if c.min_domains > len(c.domains):
            f.append(Finding("TOPOLOGY_FEW_DOMAINS", "info", f"{len(c.domains)} domain(s) for {c.topology_key}, fewer "
                                                             f"than minDomains {c.min_domains}: the global minimum "
                                                             "counts as 0"))
    for c in pod.containers:
        sleep = (c.pre_stop or {}).get("sleep") if c.pre_stop else None
        if sleep and int(sleep.get("seconds") or 0) >= pod.termination_grace_period:
            f.append(Finding("PRESTOP_EXCEEDS_GRACE", "warning", f"container {c.name}: preStop sleep uses the whole "
                                                                 "grace period; SIGTERM gets only 2 s"))
    if pod.node_name and (node is None or node.ready_status != "True"):
        unknown = node is not None and node.ready_status not in ("True", "False")
        f.append(Finding("NODE_UNREACHABLE" if unknown else "NODE_NOT_READY", "error",
                         f"node {pod.node_name} is {'gone' if node is None else 'not Ready'}: the pod may be "
                         "partitioned"))
    return f


def explain_pod(pod, snapshot, now, eviction_max_pod_grace=None) -> PodExplanation:
    """A pod's ``PodExplanation``."""
    node = snapshot.node(pod.node_name) if pod.node_name else None
    q, prio = qos.explain_qos(pod), priority_of(pod, snapshot)
    matched = snapshot.pdbs_for(pod)
    spread = spread_constraints(pod, snapshot)
    return PodExplanation(
        pod=ExplainedPod(pod.namespace, pod.name, pod.node_name or None, pod.phase, pod.is_ready, pod.is_terminating),
        qos=q,
        priority=prio,
        termination=termination.timeline(pod, eviction_max_pod_grace=eviction_max_pod_grace),
        oom=node_pressure.oom_scores(pod, node),
        eviction_rank=eviction_rank(pod, node, snapshot),
        requests={r: format_amount(r, v) for r, v in sorted(pod_requests(pod).items())},
        pdbs=tuple(pdbs.summary(b, snapshot) for b in matched),
        owners=owner_chain(pod, snapshot),
        topology_spread=spread,
        node_state=health(node, now, snapshot.node_lease(pod.node_name)) if pod.node_name else None,
        force_delete=assessment_for_explain(pod, snapshot, now),
        findings=tuple(pod_findings(pod, snapshot, q, prio, matched, spread, node)),
    )


def explain_node(node, snapshot, now) -> NodeExplanation:
    """A node's ``NodeExplanation``: conditions, pods in eviction order, allocation."""
    pods = snapshot.pods_on(node.name)
    active = [p for p in pods if not p.is_terminal]
    requested = {}
    for p in active:
        for r, v in pod_requests(p).items():
            requested[r] = requested.get(r, 0) + v
    requested["pods"] = len(active)
    allocation = []
    for r in sorted(set(node.allocatable) | set(requested)):
        alloc, req = node.allocatable.get(r, 0), requested.get(r, 0)
        allocation.append(Allocation(r, format_amount(r, alloc), format_amount(r, req),
                                     (req * 100 // alloc) if alloc else None))
    rows = []
    for row in node_pressure.memory_pressure_order(active, snapshot):
        p = row["pod"]
        rows.append(RankedPod(row["rank"], p.namespace, p.name, qos.qos_class(p), row["priority"],
                              node_pressure.oom_scores(p, node).max,
                              ",".join(b.name for b in snapshot.pdbs_for(p)) or None, row["reason"]))
    state = health(node, now, snapshot.node_lease(node.name))
    findings = []
    if state.partitioned:
        code = "NODE_UNREACHABLE" if state.state is NodeReadiness.UNKNOWN else "NODE_NOT_READY"
        findings.append(Finding(code, "error", f"node is {state.message}: it may be partitioned; its pods cannot be "
                                               "confirmed stopped"))
    if node.unschedulable:
        findings.append(Finding("NODE_CORDONED", "info", "node is cordoned (spec.unschedulable)"))
    conditions = node.status.get("conditions") or []
    for c in conditions:
        if c.get("type") in ("MemoryPressure", "DiskPressure", "PIDPressure") and c.get("status") == "True":
            findings.append(Finding(c["type"].upper(), "warning", f"{c['type']}: the kubelet may be evicting pods"))
    for a in allocation:
        if a.percent is not None and a.percent > 100:
            findings.append(Finding("OVERCOMMITTED", "warning", f"{a.resource} requests exceed allocatable "
                                                                f"({a.percent}%)"))
    return NodeExplanation(
        node=ExplainedNode(node.name, node.unschedulable, node.labels,
                           tuple(Taint(t.get("key"), t.get("value"), t.get("effect")) for t in node.taints)),
        state=state,
        conditions=tuple(NodeConditionStatus(c.get("type"), c.get("status"), c.get("reason"),
                                             c.get("lastHeartbeatTime")) for c in conditions),
        allocation=tuple(allocation),
        pods=tuple(rows),
        eviction_order_assumption=USAGE_ASSUMED,
        findings=tuple(findings),
    )


def explain_priorities(snapshot) -> PriorityAudit:
    """The cluster's ``PriorityAudit``: classes, the global default, levels and rollout risks."""
    usage = {}
    at_zero, direct, missing = [], [], []
    default = priority.global_default(snapshot)
    for p in snapshot.pods:
        if p.is_terminal:
            continue
        name = p.priority_class_name
        usage[name] = usage.get(name, 0) + 1
        if p.priority_value == 0 and not name:
            at_zero.append(p)
        if name and snapshot.priority_class(name) is None and name not in priority.SYSTEM_CLASSES:
            missing.append(p)
        if not name and p.priority not in (None, 0) and (default is None or default.value != p.priority):
            direct.append(p)
    classes = tuple(PriorityClassUse(c.name, c.value, c.global_default, c.preemption_policy, usage.get(c.name, 0))
                    for c in sorted(snapshot.priority_classes, key=lambda c: -c.value))
    defaults = [c for c in snapshot.priority_classes if c.global_default]
    levels = sorted({c.value for c in snapshot.priority_classes if not c.name.startswith("system-")})
    findings = []
    if len(defaults) > 1:
        findings.append(Finding("MULTIPLE_GLOBAL_DEFAULTS", "error", f"{len(defaults)} classes are globalDefault: "
                                f"admission uses the lowest, {default.name} ({default.value})"))
    positive = [c for c in snapshot.priority_classes if c.value > 0 and not c.name.startswith("system-")]
    if at_zero and positive:
        findings.append(Finding("BOTTOM_UP_ROLLOUT_RISK", "error", f"{len(at_zero)} pod(s) run at priority 0 while "
                                                                   f"{len(positive)} class(es) are higher: pods of any "
                                                                   "of those classes can preempt them (roll "
                                                                   "priorities out top-down)"))
    if len(levels) > MANY_PRIORITY_LEVELS:
        findings.append(Finding("MANY_PRIORITY_LEVELS", "warning", f"{len(levels)} distinct user priority levels: keep "
                                                                   "few, well-separated levels"))
    for c in snapshot.priority_classes:
        if c.value > priority.USER_MAX and not c.name.startswith("system-"):
            findings.append(Finding("USER_CLASS_TOO_HIGH", "warning", f"class {c.name} value {c.value} exceeds the "
                                                                      "user maximum 1000000000"))
        if c.preemption_policy == "PreemptLowerPriority" and 0 < c.value < max(levels or [0]) \
                and not c.name.startswith("system-"):
            findings.append(Finding("PREEMPTING_NON_CRITICAL_CLASS", "info", f"class {c.name} ({c.value}) preempts "
                                                                             "lower-priority pods; consider "
                                                                             "preemptionPolicy: Never for "
                                                                             "non-critical workloads"))
    if missing:
        findings.append(Finding("PRIORITY_CLASS_MISSING", "warning", f"{len(missing)} pod(s) name a PriorityClass that "
                                                                     "no longer exists"))
    if direct:
        findings.append(Finding("PRIORITY_WITHOUT_CLASS", "warning", f"{len(direct)} pod(s) have a priority but no "
                                                                     "priorityClassName"))
    return PriorityAudit(
        classes=classes,
        global_defaults=tuple(d.name for d in defaults),
        levels=tuple(levels),
        pods_without_class=usage.get("", 0),
        pods_at_zero=tuple(p.ref for p in at_zero[:50]),
        pods_at_zero_count=len(at_zero),
        findings=tuple(findings),
    )


def spread_constraints(pod, snapshot) -> tuple:
    """Each of the pod's constraints (``SpreadConstraint``) with its domains, current skew and the pod's domain."""
    out = []
    constraints = pod.topology_spread_constraints
    node = snapshot.node(pod.node_name) if pod.node_name else None
    for raw in constraints:
        c = topology.normalized(raw)
        # The scheduler requires the keys of the constraints of the same kind only (Filter: DoNotSchedule).
        same = [x for x in constraints if topology.normalized(x)["whenUnsatisfiable"] == c["whenUnsatisfiable"]]
        counts = topology.domain_counts(pod, raw, snapshot, same)
        s = topology.skew(counts, c["minDomains"])
        selector = topology.constraint_selector(pod, raw)
        out.append(SpreadConstraint(
            c["topologyKey"], c["maxSkew"], c["whenUnsatisfiable"], c["minDomains"], c["nodeAffinityPolicy"],
            c["nodeTaintsPolicy"], str(selector) if selector is not None else None,
            bool(selector and selector.matches(pod.labels)), dict(sorted(counts.items())),
            node.labels.get(c["topologyKey"]) if node else None, s, s > c["maxSkew"]))
    return tuple(out)
