"""``explain pod|node|priorities``: reports built from the other analyses."""

from kubectl_safety.analysis import budgets as pdbs, node_pressure, priority, qos, termination, topology
from kubectl_safety.analysis.findings import Finding
from kubectl_safety.analysis.force_delete import assessment_for_explain
from kubectl_safety.analysis.node_health import node_health
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.quantity import format_amount
from kubectl_safety.model.selectors import LabelSelector

MANY_PRIORITY_LEVELS = 10


def owner_chain(pod, snapshot) -> list:
    return [{"kind": ref.get("kind"), "name": ref.get("name"), "found": owner is not None,
             **({"replicas": owner.replicas} if owner is not None and owner.replicas is not None else {})}
            for ref, owner in snapshot.owner_chain(pod)]


def pod_findings(pod, snapshot, q, prio, matched, spread, node) -> list:
    f = []
    if q["computed"] == "BestEffort":
        f.append(Finding("QOS_BEST_EFFORT", "warning", "no requests or limits: first to be evicted under node pressure and first OOM-killed"))
    if not q["matchesStatus"]:
        f.append(Finding("QOS_STATUS_MISMATCH", "warning", f"status.qosClass is {q['status']} but the spec computes {q['computed']}"))
    for c in pod.containers:
        if "memory" not in c.limits:
            f.append(Finding("MEMORY_LIMIT_MISSING", "warning", f"container {c.name} has no memory limit: set a memory request and limit"))
        elif "memory" not in c.requests:
            f.append(Finding("MEMORY_REQUEST_MISSING", "warning", f"container {c.name} has no memory request"))
        elif q["computed"] == "Burstable" and c.requests["memory"] * 10 < c.limits["memory"] * 8 and not prio["systemCritical"]:
            f.append(Finding("MEMORY_REQUEST_LOW", "info", f"container {c.name} requests {c.requests['memory'] * 100 // c.limits['memory']}% of its memory limit; 80-90% is recommended for non-critical pods"))
    if prio["systemCritical"] and q["computed"] != "Guaranteed":
        f.append(Finding("CRITICAL_NOT_GUARANTEED", "warning", "critical-priority pod is not Guaranteed QoS"))
    if prio["classMissing"]:
        f.append(Finding("PRIORITY_CLASS_MISSING", "warning", f"PriorityClass {pod.priority_class_name} does not exist: a new pod like this one would be rejected"))
    positive = [c for c in snapshot.priority_classes if c.value > 0]
    if prio["value"] == 0 and positive:
        f.append(Finding("PRIORITY_ZERO", "warning", f"priority 0 while {len(positive)} PriorityClass(es) have higher values: any pod of those classes may preempt this one"))
    if prio["preemptionPolicy"] == "PreemptLowerPriority" and prio["value"] > 0 and not prio["systemCritical"]:
        f.append(Finding("PREEMPTS_LOWER_PRIORITY", "info", "may preempt lower-priority pods; use preemptionPolicy: Never unless it is critical"))
    for term in (pod.affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []:
        sel = LabelSelector.parse(term.get("labelSelector"))
        lower = [p for p in snapshot.pods_in(pod.namespace) if sel and sel.matches(p.labels)
                 and p.priority_value < prio["value"] and p.key != pod.key]
        if lower:
            f.append(Finding("AFFINITY_TO_LOWER_PRIORITY", "warning", f"required pod affinity to {len(lower)} lower-priority pod(s): preemption will not consider their nodes"))
    if not pod.controller_ref and not pod.is_mirror:
        f.append(Finding("UNREPLICATED", "warning", "no controller: an evicted or deleted pod is not recreated (kubectl drain needs --force)"))
    if not matched and pod.controller_ref and pod.controller_ref.get("kind") != "DaemonSet":
        sev = "warning" if pod.namespace == "kube-system" else "info"
        f.append(Finding("NO_PDB", sev, "no PodDisruptionBudget covers this pod: drains may evict all its replicas at once"))
    if len(matched) > 1:
        f.append(Finding("MULTIPLE_PDBS", "error", f"{len(matched)} PDBs select this pod: the Eviction API refuses to evict it (drain fails)"))
    for b in matched:
        why = pdbs.never_allows(b, snapshot)
        if why:
            f.append(Finding("PDB_NEVER_ALLOWS", "error", f"PDB {b.name}: {why}"))
        if b.unhealthy_pod_eviction_policy != "AlwaysAllow":
            f.append(Finding("PDB_UNHEALTHY_POLICY", "info", f"PDB {b.name} uses IfHealthyBudget: unready pods can block a drain; consider unhealthyPodEvictionPolicy: AlwaysAllow"))
    for c in spread:
        if c["violated"]:
            f.append(Finding("TOPOLOGY_SKEW_VIOLATED", "warning", f"spread on {c['topologyKey']} has skew {c['skew']} > maxSkew {c['maxSkew']}: `kubectl safety rebalance` can restore it"))
        if not c["selectsOwnPod"]:
            f.append(Finding("TOPOLOGY_SELECTOR_MISMATCH", "warning", f"spread constraint on {c['topologyKey']}: labelSelector does not match the pod's own labels"))
        if not c["domains"]:
            f.append(Finding("TOPOLOGY_NO_DOMAINS", "warning", f"no eligible node has label {c['topologyKey']}: mistyped key or no nodes in any domain"))
        elif node is not None and c["topologyKey"] not in node.labels:
            f.append(Finding("TOPOLOGY_KEY_MISSING_ON_NODE", "warning", f"the pod's node lacks label {c['topologyKey']}: its pods are not counted"))
        if c["minDomains"] > len(c["domains"]):
            f.append(Finding("TOPOLOGY_FEW_DOMAINS", "info", f"{len(c['domains'])} domain(s) for {c['topologyKey']}, fewer than minDomains {c['minDomains']}: the global minimum counts as 0"))
    for c in pod.containers:
        sleep = (c.pre_stop or {}).get("sleep") if c.pre_stop else None
        if sleep and int(sleep.get("seconds") or 0) >= pod.termination_grace_period:
            f.append(Finding("PRESTOP_EXCEEDS_GRACE", "warning", f"container {c.name}: preStop sleep uses the whole grace period; SIGTERM gets only 2 s"))
    if pod.node_name and (node is None or node.ready_status != "True"):
        unknown = node is not None and node.ready_status not in ("True", "False")
        f.append(Finding("NODE_UNREACHABLE" if unknown else "NODE_NOT_READY", "error", f"node {pod.node_name} is {'gone' if node is None else 'not Ready'}: the pod may be partitioned"))
    return f


def explain_pod(pod, snapshot, now, eviction_max_pod_grace=None) -> dict:
    """The ``PodExplanation`` report."""
    node = snapshot.node(pod.node_name) if pod.node_name else None
    q = qos.explain_qos(pod)
    try:
        prio = priority.resolve(pod, snapshot)
    except priority.UnknownPriorityClass:
        prio = {"value": 0, "className": pod.priority_class_name, "source": "unknown class",
                "preemptionPolicy": pod.preemption_policy or "PreemptLowerPriority",
                "classMissing": True, "systemCritical": False}
    matched = snapshot.pdbs_for(pod)
    spread = topology.explain_constraints(pod, snapshot)
    oom = node_pressure.oom_scores(pod, node)
    rank = None
    if node is not None:
        order = node_pressure.memory_pressure_order(snapshot.pods_on(node.name), snapshot)
        for row in order:
            if row["pod"].key == pod.key:
                rank = {"rank": row["rank"], "of": len(order), "reason": row["reason"],
                        "usageKnown": row["usage"] is not None,
                        "assumption": None if row["usage"] is not None else
                        "usage unknown: each pod assumed to use its memory request; pods without one exceed it"}
    findings = pod_findings(pod, snapshot, q, prio, matched, spread, node)
    report = {
        "kind": "PodExplanation", "apiVersion": API_VERSION,
        "pod": {"namespace": pod.namespace, "name": pod.name, "node": pod.node_name or None,
                "phase": pod.phase, "ready": pod.is_ready, "terminating": pod.is_terminating},
        "qos": q,
        "priority": prio,
        "termination": termination.timeline(pod, eviction_max_pod_grace=eviction_max_pod_grace),
        "oomScoreAdj": oom["max"],
        "oom": oom,
        "evictionRank": rank,
        "requests": {r: format_amount(r, v) for r, v in sorted(pod_requests(pod).items())},
        "pdbs": [pdbs.summary(b, snapshot) for b in matched],
        "owners": owner_chain(pod, snapshot),
        "topologySpread": spread,
        "nodeState": node_health(node, now) if pod.node_name else None,
        "forceDelete": assessment_for_explain(pod, snapshot, now),
        "findings": [x.to_dict() for x in findings],
    }
    return report


def explain_node(node, snapshot, now) -> dict:
    """The ``NodeExplanation`` report: conditions, pods in eviction order, allocation."""
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
        allocation.append({"resource": r, "allocatable": format_amount(r, alloc),
                           "requested": format_amount(r, req),
                           "percent": (req * 100 // alloc) if alloc else None})
    order = node_pressure.memory_pressure_order(active, snapshot)
    rows = []
    for row in order:
        p = row["pod"]
        matched = snapshot.pdbs_for(p)
        rows.append({"rank": row["rank"], "namespace": p.namespace, "name": p.name,
                     "qos": qos.qos_class(p), "priority": row["priority"],
                     "oomScoreAdj": node_pressure.oom_scores(p, node)["max"],
                     "pdb": ",".join(b.name for b in matched) or None, "reason": row["reason"]})
    state = node_health(node, now)
    findings = []
    if state["partitioned"]:
        code = "NODE_UNREACHABLE" if state["state"] == "Unknown" else "NODE_NOT_READY"
        findings.append(Finding(code, "error", f"node is {state['message']}: it may be partitioned; its pods cannot be confirmed stopped"))
    if node.unschedulable:
        findings.append(Finding("NODE_CORDONED", "info", "node is cordoned (spec.unschedulable)"))
    for c in node.status.get("conditions") or []:
        if c.get("type") in ("MemoryPressure", "DiskPressure", "PIDPressure") and c.get("status") == "True":
            findings.append(Finding(c["type"].upper(), "warning", f"{c['type']}: the kubelet may be evicting pods"))
    for a in allocation:
        if a["percent"] is not None and a["percent"] > 100:
            findings.append(Finding("OVERCOMMITTED", "warning", f"{a['resource']} requests exceed allocatable ({a['percent']}%)"))
    return {
        "kind": "NodeExplanation", "apiVersion": API_VERSION,
        "node": {"name": node.name, "unschedulable": node.unschedulable, "labels": node.labels,
                 "taints": [{"key": t.get("key"), "value": t.get("value"), "effect": t.get("effect")}
                            for t in node.taints]},
        "state": state,
        "conditions": [{"type": c.get("type"), "status": c.get("status"), "reason": c.get("reason"),
                        "lastHeartbeatTime": c.get("lastHeartbeatTime")}
                       for c in node.status.get("conditions") or []],
        "allocation": allocation,
        "pods": rows,
        "evictionOrderAssumption": "usage unknown: each pod assumed to use its memory request; pods without one exceed it",
        "findings": [x.to_dict() for x in findings],
    }


def explain_priorities(snapshot) -> dict:
    """The ``PriorityAudit`` report: classes, the global default, levels and rollout risks."""
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
    classes = [{"name": c.name, "value": c.value, "globalDefault": c.global_default,
                "preemptionPolicy": c.preemption_policy, "pods": usage.get(c.name, 0)}
               for c in sorted(snapshot.priority_classes, key=lambda c: -c.value)]
    defaults = [c for c in snapshot.priority_classes if c.global_default]
    levels = sorted({c.value for c in snapshot.priority_classes if not c.name.startswith("system-")})
    findings = []
    if len(defaults) > 1:
        findings.append(Finding("MULTIPLE_GLOBAL_DEFAULTS", "error", f"{len(defaults)} classes are globalDefault: admission uses the lowest, "
                                f"{default.name} ({default.value})"))
    positive = [c for c in snapshot.priority_classes if c.value > 0 and not c.name.startswith("system-")]
    if at_zero and positive:
        findings.append(Finding("BOTTOM_UP_ROLLOUT_RISK", "error", f"{len(at_zero)} pod(s) run at priority 0 while {len(positive)} class(es) are higher: pods of any of those classes can preempt them (roll priorities out top-down)"))
    if len(levels) > MANY_PRIORITY_LEVELS:
        findings.append(Finding("MANY_PRIORITY_LEVELS", "warning", f"{len(levels)} distinct user priority levels: keep few, well-separated levels"))
    for c in snapshot.priority_classes:
        if c.value > priority.USER_MAX and not c.name.startswith("system-"):
            findings.append(Finding("USER_CLASS_TOO_HIGH", "warning", f"class {c.name} value {c.value} exceeds the user maximum 1000000000"))
        if c.preemption_policy == "PreemptLowerPriority" and c.value > 0 and not c.name.startswith("system-") and c.value < max(levels or [0]):
            findings.append(Finding("PREEMPTING_NON_CRITICAL_CLASS", "info", f"class {c.name} ({c.value}) preempts lower-priority pods; consider preemptionPolicy: Never for non-critical workloads"))
    if missing:
        findings.append(Finding("PRIORITY_CLASS_MISSING", "warning", f"{len(missing)} pod(s) name a PriorityClass that no longer exists"))
    if direct:
        findings.append(Finding("PRIORITY_WITHOUT_CLASS", "warning", f"{len(direct)} pod(s) have a priority but no priorityClassName"))
    return {
        "kind": "PriorityAudit", "apiVersion": API_VERSION,
        "classes": classes,
        "globalDefault": defaults[0].name if len(defaults) == 1 else ([d.name for d in defaults] or None),
        "levels": levels,
        "podsWithoutClass": usage.get("", 0),
        "podsAtZero": [p.ref for p in at_zero][:50],
        "podsAtZeroCount": len(at_zero),
        "findings": [x.to_dict() for x in findings],
    }
