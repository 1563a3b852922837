"""A cluster's maintenance readiness in one pass over one snapshot (``kubectl safety check``, pure).

``check(snapshot, options, now) -> ClusterCheck`` (``plans/check.py``):

- ``nodes[]``: every selected node planned alone, exactly as ``drain NODE --dry-run`` with
  ``options.drain`` plans it (``plan_drain`` with one ``SharedPlanning``: the per-cluster work is
  done once, not per node); ``drainable`` is the plan's SAFE verdict, ``risks`` its risks;
  ``removable``: every pod a controller recreates fits on the other nodes; a NotReady or
  Unknown node lists the pods stuck there with ``delete``'s force-delete assessment;
- ``blockers[]``: what blocks a rolling upgrade of all nodes: each object named by an unaccepted
  risk, with the nodes it blocks, most nodes first;
- ``findings[]``: PodDisruptionBudgets, workloads and priorities (``code``, ``severity``
  error|warning|info, ``message``, ``objects``) that gate: with a node selector (scope ``pool``),
  only those naming what the selected nodes touch (the nodes, their pods, the PDBs and workloads of
  those pods); none of the codes in ``options.ignore``;
- ``otherFindings[]``: the rest, reported apart with ``reason`` outside|ignored, never gating;
- ``summary``, with ``ready``: every node drainable and no gating finding at ``options.fail_on`` or
  above (``none``: findings never gate).
"""

from dataclasses import field, replace

from kubectl_safety.analysis.budgets import never_evicts, skips_pdb_check
from kubectl_safety.analysis.drain import DrainOptions, SharedPlanning, needs_replacement, plan_drain
from kubectl_safety.analysis.explain import explain_priorities
from kubectl_safety.analysis.force_delete import assess
from kubectl_safety.analysis.node_health import node_health
from kubectl_safety.analysis.plans.check import Blocker, CheckSummary, CheckedNode, ClusterCheck, StuckPod
from kubectl_safety.analysis.plans.common import SEVERITIES, Action, Finding, ObjectRef, Severity, obj, pod_obj
from kubectl_safety.analysis.risks import incomplete
from kubectl_safety.analysis.room import Room, proved_plan, recreated_pods
from kubectl_safety.analysis.topology import (ZONE, constraint_selector, count_in_domains, eligible_domains, is_hard,
                                             normalized, skew)
from kubectl_safety.model.constants import NO_SCALE_KINDS
from kubectl_safety.record import record

SAMPLE = 20  # objects listed per finding (the message gives the count)
PREVIEWS = 1  # pending preempting pods previewed (the highest first; each weighs every node)


def runbook_drain_options() -> DrainOptions:
    """What check assumes a maintenance runbook runs: ``kubectl drain --ignore-daemonsets
    --delete-emptydir-data`` (DaemonSet pods stay, emptyDir data may go), nothing else."""
    return DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True)


@record(slots=False)
class CheckOptions:
    node_selector: object = None  # LabelSelector of the nodes to check (None: all)
    drain: DrainOptions = field(default_factory=runbook_drain_options)
    fail_on: str = "error"  # lowest finding severity that makes the cluster not ready (none: no finding)
    scope: str = "pool"  # with a node selector: pool gates on what its nodes touch, cluster on every finding
    ignore: frozenset = frozenset()  # finding codes that never gate


def check(snapshot, options=None, now=None) -> ClusterCheck:
    """The cluster's maintenance readiness."""
    options = options or CheckOptions()
    now = now or snapshot.taken_at
    shared = SharedPlanning(snapshot)
    drain_options = options.drain
    if drain_options.daemonsets_known is None:
        drain_options = _with(drain_options, daemonsets_known=shared.daemonsets_known)
    selected = sorted((n for n in snapshot.nodes
                       if options.node_selector is None or options.node_selector.matches(n.labels)),
                      key=lambda n: n.name)
    nodes, unplaceable = [], {}
    room = Room(snapshot, shared.index) if drain_options.check_capacity else None
    quick = _with(drain_options, check_capacity=False)  # the plan without placements
    for node in selected:  # each plan is dropped once read: 5,000 of them would hold 150,000 pod entries
        plan, removal = _plan(snapshot, node, (drain_options, quick), now, shared, room)
        unplaceable[node.name] = plan.capacity.unplaceable
        nodes.append(_node_entry(snapshot, node, plan, removal, now))
        if plan.surge is not None:  # --surge: whether the node was drainable without it
            nodes[-1] = replace(nodes[-1], drainable_without_surge=plan.safe and (not plan.surge.surges or plan_drain(
                snapshot, [node.name], _with(drain_options, surge=False, surge_limit=None), now, shared=shared).safe))
    findings = (_incomplete(snapshot, drain_options, selected) + node_findings(nodes) + pdb_findings(snapshot, shared)
                + workload_findings(snapshot, shared, unplaceable)
                + priority_findings(snapshot, now, shared))
    findings.sort(key=lambda f: -SEVERITIES.index(f.severity.value))
    whole = options.scope == "cluster" or options.node_selector is None
    touched = None if whole else _touched(snapshot, selected)
    gating, other = [], []
    for f in findings:
        reason = ("ignored" if f.code in options.ignore else
                  None if touched is None or any(_key(o) in touched for o in f.objects) else "outside")
        (other if reason else gating).append(replace(f, objects=f.objects[:SAMPLE], reason=reason))
    findings = gating
    blockers = _blockers(nodes)
    return ClusterCheck(
        source=snapshot.source or None,
        taken_at=snapshot.taken_at.isoformat() if snapshot.taken_at else None,
        assumes=drain_options,
        summary=_summary(nodes, findings, blockers, options.fail_on, "cluster" if whole else "pool", other),
        blockers=tuple(blockers), nodes=tuple(nodes), findings=tuple(findings), other_findings=tuple(other))


def _key(o) -> tuple:
    return o.kind, o.namespace or "", o.name


def _touched(snapshot, nodes) -> set:
    """What the nodes touch: themselves, their pods, the PDBs of those pods and every workload up
    their owner chains, as (kind, namespace, name)."""
    out = set()
    for node in nodes:
        out.add(("Node", "", node.name))
        for pod in snapshot.pods_on(node.name):
            out.add(("Pod", pod.namespace, pod.name))
            out.update(("PodDisruptionBudget", b.namespace, b.name) for b in snapshot.pdbs_for(pod))
            out.update((ref.get("kind"), pod.namespace, ref.get("name")) for ref, _ in snapshot.owner_chain(pod))
    return out


def _with(options, **changes):
    return replace(options, **changes)


# -- nodes -----------------------------------------------------------------------------------------
def _plan(snapshot, node, options, now, shared, room) -> tuple:
    """(the node's drain plan, its removal), as ``drain NODE --dry-run``: planned without placing
    the replacements when ``room`` proves they all fit (same verdict and risks), else in full.
    ``options``: the drain's, and the same without the capacity check."""
    options, without_capacity = options
    quick = proved_plan(snapshot, node, without_capacity, now, shared, room)
    if quick is not None:
        return quick, (True, (), _lost(snapshot, node))
    plan = plan_drain(snapshot, [node.name], options, now, shared=shared)
    return plan, _removal(snapshot, node, plan, recreated_pods(snapshot, node, needs_replacement), shared)


def _node_entry(snapshot, node, plan, removal, now) -> CheckedNode:
    state = node_health(node, now, snapshot.node_lease(node.name))
    removable, unplaceable, not_recreated = removal
    partitioned = state["partitioned"]
    return CheckedNode(node.name, state["state"], node.unschedulable, plan.safe, removable, len(plan.pods),
                       plan.risks, plan.estimated_seconds, unplaceable, not_recreated,
                       state["message"] if partitioned else None,
                       tuple(_stuck(p, snapshot, now) for p in sorted(snapshot.pods_on(node.name), key=lambda p: p.key)
                             if not p.is_terminal) if partitioned else None,
                       tuple(s.ref for s in plan.surge.surges) if plan.surge is not None else None,
                       lifted_by=_lifted_by(plan),
                       surgeable=plan.surgeable if plan.safe_with_surge is not None else (),
                       drainable_with_surge=plan.safe_with_surge)


# kubectl drain's defaults that refuse a pod, and the flag that lifts each
DEFAULT_REFUSALS = {"DAEMONSET": "--ignore-daemonsets", "LOCAL_STORAGE": "--delete-emptydir-data"}


def _lifted_by(plan) -> tuple:
    """The flags that lift every unaccepted risk of a plan blocked only by kubectl drain's defaults
    (DaemonSet-managed pods, emptyDir data); () when anything else blocks it, or nothing does."""
    if not plan.risks or any(r.code.value != "POD_NOT_EVICTABLE" for r in plan.risks if not r.accepted):
        return ()
    codes = {r.code for p in plan.pods if p.action is Action.BLOCKED for r in p.reasons
             if r.severity is Severity.ERROR}
    if not codes or not codes <= set(DEFAULT_REFUSALS):
        return ()
    return tuple(flag for code, flag in DEFAULT_REFUSALS.items() if code in codes)


def _removal(snapshot, node, plan, recreated, shared) -> tuple:
    """Could the node go for good: do the replacements of all its recreated pods fit elsewhere?
    The plan placed the pods it lets go; the others (blocked, waiting) are placed after them."""
    capacity = shared.last_capacity
    unplaceable = [f"{u.namespace}/{u.name}" for u in plan.capacity.unplaceable]
    placed = {(p.namespace, p.name) for p in plan.pods if p.replacement_node}
    for pod in recreated:
        if pod.key in placed or f"{pod.namespace}/{pod.name}" in unplaceable:
            continue
        if capacity is None or capacity.snapshot.node(node.name) is None:
            break
        where, _ = capacity.place(pod)
        if where is None or where == node.name:
            unplaceable.append(f"{pod.namespace}/{pod.name}")
    return not unplaceable, tuple(unplaceable), _lost(snapshot, node)


def _lost(snapshot, node) -> tuple:
    """Pods nothing recreates (no controller): removing the node loses them."""
    return tuple(f"{p.namespace}/{p.name}" for p in snapshot.pods_on(node.name)
                 if not p.controller_ref and not p.is_terminal and not p.is_mirror)


def _stuck(pod, snapshot, now) -> StuckPod:
    storage = [x.raw for x in snapshot.pvcs] + [x.raw for x in snapshot.pvs]
    a = assess(pod, snapshot, now, force=True, storage=storage)
    return StuckPod(pod.namespace, pod.name, a.owner, a.force_needed, a.verdict, tuple(r.code for r in a.risks))


def _incomplete(snapshot, drain_options, nodes) -> list:
    """The kinds the nodes' plans rest on that the snapshot does not hold (an error unless accepted)."""
    unheld = incomplete(snapshot, "drain")
    if unheld is None:
        return []
    code, message = unheld
    return [finding(code, "info" if code in drain_options.accept_risks else "error", message,
                    [obj("Node", "", n.name) for n in nodes])]


def node_findings(nodes) -> list:
    """NotReady and Unknown nodes: their pods cannot be confirmed stopped (force-delete candidates)."""
    out = []
    for n in nodes:
        if n.state == "Ready":
            continue
        stuck = n.stuck_pods or ()
        code = "NODE_UNREACHABLE" if n.state == "Unknown" else "NODE_NOT_READY"
        out.append(finding(code, "error", f"node {n.name} is {n.state_message}: {len(stuck)} pod(s) there cannot be "
                           "confirmed stopped (" + (", ".join(f"{p.namespace}/{p.name}" for p in stuck[:5]) or "none")
                           + "); see stuckPods for each one's force-delete assessment",
                           [obj("Node", "", n.name)] + [pod_obj(p) for p in stuck]))
    return out


def _blockers(nodes) -> list:
    """Objects named by unaccepted risks, with the nodes they block (most first)."""
    found = {}
    for n in nodes:
        for r in n.risks:
            if r.accepted:
                continue
            target = _blocking_object(r, n.name)
            nodes_of, codes = found.setdefault((target.kind, target.namespace, target.name), ([], []))
            if n.name not in nodes_of:
                nodes_of.append(n.name)
            if r.code.value not in codes:
                codes.append(r.code.value)
    out = sorted(found.items(), key=lambda b: (-len(b[1][0]), *b[0]))
    return [Blocker(ObjectRef(*key), tuple(nodes_of), tuple(codes)) for key, (nodes_of, codes) in out]


def _blocking_object(risk, node) -> ObjectRef:
    """The object to fix: the PDB when one is named, else the pod, else the node."""
    for kind in ("PodDisruptionBudget", "Pod", "Node"):
        hit = next((o for o in risk.objects if o.kind == kind), None)
        if hit is not None:
            return ObjectRef(hit.kind, hit.namespace or "", hit.name)
    return ObjectRef("Node", "", node)


def _counts(findings) -> dict:
    return {s: sum(1 for f in findings if f.severity.value == s) for s in reversed(SEVERITIES)}


def _summary(nodes, findings, blockers, fail_on, scope, other) -> CheckSummary:
    counts = _counts(findings)
    failing = [] if fail_on == "none" else [f for f in findings
                                            if SEVERITIES.index(f.severity.value) >= SEVERITIES.index(fail_on)]
    drainable = sum(1 for n in nodes if n.drainable)
    return CheckSummary(nodes=len(nodes), drainable=drainable, not_drainable=len(nodes) - drainable,
                        removable=sum(1 for n in nodes if n.removable),
                        unreachable=sum(1 for n in nodes if n.state != "Ready"),
                        blockers=len(blockers), findings=counts, fail_on=fail_on, failing=len(failing),
                        scope=scope, other_findings=_counts(other), ready=drainable == len(nodes) and not failing)


def finding(code, severity, message, objects) -> Finding:
    """A finding with every object it names (``check`` keeps the first ``SAMPLE`` once it has scoped it)."""
    return Finding(code, Severity(severity), message, tuple(objects))


def _pod_objs(pods) -> list:
    return [pod_obj(p) for p in sorted(pods, key=lambda p: p.key)]


def _pdb_obj(b) -> ObjectRef:
    return obj("PodDisruptionBudget", b.namespace, b.name)


# -- PodDisruptionBudgets --------------------------------------------------------------------------
def pdb_findings(snapshot, shared) -> list:
    out, overlaps = [], {}
    for pod in snapshot.pods:
        if skips_pdb_check(pod):  # terminal, terminating or Pending: evicted without a PDB check
            continue
        budgets = snapshot.pdbs_for(pod)
        if len(budgets) > 1:
            overlaps.setdefault(tuple((b.namespace, b.name) for b in budgets), (budgets, []))[1].append(pod)
    for _, (budgets, pods) in sorted(overlaps.items()):
        names = ", ".join(f"{b.namespace}/{b.name}" for b in budgets)
        out.append(finding("PDB_OVERLAP", "error", f"{len(pods)} pod(s) are selected by {len(budgets)} PDBs ({names}): "
                           "the Eviction API refuses to evict them, so every drain of their nodes blocks",
                           [_pdb_obj(b) for b in budgets] + [pod_obj(p) for p in pods]))
    lenient = []
    for b in sorted(snapshot.pdbs, key=lambda b: (b.namespace, b.name)):
        ref = f"{b.namespace}/{b.name}"
        complete = snapshot.pods_complete_in(b.namespace)
        pods = shared.selected(b)
        if complete and not pods:
            out.append(finding("PDB_SELECTS_NOTHING", "warning", f"PDB {ref} selects no pod (selector "
                               f"{b.selector if b.selector is not None else 'nil'}): it protects nothing; check its labels",
                               [_pdb_obj(b)]))
            continue
        never = never_evicts(b, shared.summary(b))
        if never:
            out.append(finding("PDB_NEVER_ALLOWS", "error", f"PDB {ref} never allows a disruption ({never}): "
                               "no drain can evict its pods", [_pdb_obj(b)]))
        if not b.status_is_current:
            out.append(finding("PDB_STATUS_STALE", "warning", f"PDB {ref} status is older than its spec "
                               f"(observedGeneration {b.status.get('observedGeneration')} < generation {b.generation}): "
                               "the API server refuses evictions (429) until the disruption controller catches up",
                               [_pdb_obj(b)]))
        if b.max_unavailable is not None or isinstance(b.min_available, str):
            # getExpectedScale skips pods without a controller: they fail it only when no pod has one
            found = {_controller_kind(p, snapshot) for p in pods}
            kinds = sorted(found if found == {"none"} else found & set(NO_SCALE_KINDS))
            unmanaged = [p for p in pods if not p.controller_ref]
            rule = "maxUnavailable" if b.max_unavailable is not None else "a percentage minAvailable"
            if unmanaged and not kinds:
                out.append(finding("PDB_UNMANAGED_PODS", "warning", f"PDB {ref} uses {rule} and selects {len(unmanaged)} pod(s) without a controller "
                                   f"({', '.join(p.name for p in unmanaged)}): the disruption controller counts only the "
                                   "controllers' scale as expected pods, yet the unmanaged pods as healthy "
                                   "(its UnmanagedPods event); use an integer minAvailable to count them",
                                   [_pdb_obj(b)] + [pod_obj(p) for p in unmanaged]))
            if kinds:
                out.append(finding("PDB_CONTROLLER_NO_SCALE", "error", f"PDB {ref} uses {rule} "
                                   f"but selects pods of {', '.join(kinds)} (no scale subresource): the disruption "
                                   "controller cannot count the expected pods and allows no disruption; "
                                   "use an integer minAvailable", [_pdb_obj(b)]))
        if b.unhealthy_pod_eviction_policy != "AlwaysAllow":
            unready = [p for p in pods if not p.is_ready and not p.is_terminating]
            if unready:
                out.append(finding("PDB_UNHEALTHY_BLOCKS", "warning", f"PDB {ref} has {len(unready)} unready pod(s) "
                                   "and unhealthyPodEvictionPolicy IfHealthyBudget: while the budget is short they "
                                   "cannot be evicted and block drains; consider AlwaysAllow",
                                   [_pdb_obj(b)] + [pod_obj(p) for p in unready]))
            else:
                lenient.append(b)
    if lenient:
        out.append(finding("PDB_IF_HEALTHY_BUDGET", "info", f"{len(lenient)} PDB(s) use unhealthyPodEvictionPolicy "
                           "IfHealthyBudget (the default): a pod that turns unready while the budget is short blocks "
                           "drains; AlwaysAllow lets such pods go", [_pdb_obj(b) for b in lenient]))
    return out


def _controller_kind(pod, snapshot) -> str:
    """The kind whose scale the disruption controller would read for the pod ("none": no controller)."""
    chain = snapshot.owner_chain(pod)
    if not chain:
        return "none"
    kind = chain[-1][0].get("kind")
    return kind


# -- workloads -------------------------------------------------------------------------------------
def workload_findings(snapshot, shared, unplaceable) -> list:
    groups = {}
    for pod in snapshot.pods:
        if pod.is_terminal or not pod.controller_ref:
            continue
        chain = snapshot.owner_chain(pod)
        ref = chain[-1][0]
        if ref.get("kind") in NO_SCALE_KINDS:
            continue
        groups.setdefault((ref.get("kind"), pod.namespace, ref.get("name")), []).append(pod)
    zones = {n.labels.get(ZONE) for n in snapshot.nodes if n.labels.get(ZONE)}
    zone_of = {n.name: n.labels.get(ZONE) for n in snapshot.nodes}  # as snapshot.node finds them
    out = []
    for (kind, ns, name), pods in sorted(groups.items()):
        owner = snapshot.workload(kind, ns, name)
        wl = obj(kind, ns, name)
        replicas = owner.replicas if owner is not None and owner.replicas is not None else len(pods)
        running = [p for p in pods if p.node_name and not p.is_terminating]
        if replicas == 1 and not any(snapshot.pdbs_for(p) for p in pods):
            out.append(finding("SINGLE_REPLICA_NO_PDB", "warning", f"{kind} {ns}/{name} has one replica and no PDB: "
                               "every drain of its node is an outage", [wl]))
        nodes = {p.node_name for p in running}
        if len(running) >= 2 and len(nodes) == 1:
            out.append(finding("REPLICAS_ON_ONE_NODE", "warning", f"all {len(running)} pods of {kind} {ns}/{name} run on "
                               f"node {next(iter(nodes))}: one node failure or drain takes them all", [wl]))
        elif len(running) >= 2 and len(zones) >= 2:
            in_zones = {zone_of.get(p.node_name) for p in running}
            if len(in_zones) == 1 and None not in in_zones:
                out.append(finding("REPLICAS_IN_ONE_ZONE", "warning", f"all {len(running)} pods of {kind} {ns}/{name} "
                                   f"run in zone {next(iter(in_zones))} of {len(zones)}: a zone outage takes them all",
                                   [wl]))
        out += _spread_findings(pods[0], wl, snapshot, shared)
    return out + _no_room_findings(snapshot, unplaceable) + _surged_findings(snapshot)


def _surged_findings(snapshot) -> list:
    """Workloads a surge left raised, and nodes it left tainted (its run was stopped before it restored
    them): what to run to finish, or to lift the taint."""
    from kubectl_safety.analysis.surge import TAINT, recorded

    tainted = sorted(n.name for n in snapshot.nodes if any(t.get("key") == TAINT for t in n.taints))
    out = []
    for w in snapshot.workloads:
        found = recorded(w)
        if found:
            nodes = list(found.get("nodes") or ())
            kept = [n for n in nodes if n in tainted]
            out.append(finding("SURGE_LEFT", "error", f"{w.kind} {w.namespace}/{w.name} was surged from "
                               f"{found['replicas']} to {found.get('to')} replicas by a drain of "
                               f"{', '.join(nodes)} that did not finish: run it again "
                               "(the same command) to finish and restore the count"
                               + (f" and lift the taint {TAINT}:NoSchedule from {', '.join(kept)}" if kept else ""),
                               [obj(w.kind, w.namespace, w.name)] + [obj("Node", "", n) for n in kept]))
    for name in tainted:
        out.append(finding("SURGE_LEFT", "error", f"node {name} carries the taint {TAINT}:NoSchedule of a --surge "
                           "drain that did not finish (no pod starts there; `kubectl uncordon` does not lift it): "
                           "run the same drain again to finish the surge and lift it, or lift it with "
                           f"`kubectl taint node {name} {TAINT}:NoSchedule-`", [obj("Node", "", name)]))
    return out


def _spread_findings(pod, wl, snapshot, shared) -> list:
    """DoNotSchedule spread constraints whose skew exceeds maxSkew now (counted as the scheduler
    counts: eligible nodes' domains, matching pods that are not terminating)."""
    out = []
    constraints = [c for c in pod.topology_spread_constraints if is_hard(c)]
    for raw in constraints:
        c = normalized(raw)
        selector = constraint_selector(pod, raw)
        if selector is None or selector.is_empty:
            continue
        domains = eligible_domains(pod, raw, [x.get("topologyKey") for x in constraints], snapshot)
        counts = count_in_domains(domains, selector, shared.index.candidates(pod.namespace, selector))
        s = skew(counts, c["minDomains"])
        if s > c["maxSkew"]:
            out.append(finding("SPREAD_VIOLATED", "warning", f"{wl.kind} {wl.namespace}/{wl.name}: spread on "
                               f"{c['topologyKey']} has skew {s} > maxSkew {c['maxSkew']} "
                               f"({', '.join(f'{k}={v}' for k, v in sorted(counts.items()))}): new pods may not "
                               "schedule; `kubectl safety rebalance` can restore it", [wl]))
    return out


def _no_room_findings(snapshot, unplaceable) -> list:
    """Workloads whose replacement fits nowhere when one node is out, because of spread or
    required anti-affinity (``unplaceable``: node -> its plan's unplaceable replacements, exactly
    what the scheduler's filters say)."""
    found = {}
    for node, pods in sorted(unplaceable.items()):
        for u in pods:
            why = u.reason + " " + " ".join(u.nodes.values())
            code = ("SPREAD_UNSATISFIABLE_NODE_OUT" if "topology spread" in why else
                    "ANTI_AFFINITY_NO_ROOM" if "anti-affinity" in why else None)
            pod = snapshot.pod(u.namespace, u.name)
            if code is None or pod is None:
                continue
            ref = snapshot.owner_chain(pod)[-1][0] if pod.controller_ref else {"kind": "Pod", "name": pod.name}
            found.setdefault((code, ref.get("kind"), pod.namespace, ref.get("name")), []).append(node)
    out = []
    for (code, kind, ns, name), nodes in sorted(found.items()):
        what = "its topology spread constraints" if code.startswith("SPREAD") else "its required anti-affinity"
        out.append(finding(code, "warning", f"{kind} {ns}/{name}: with node(s) {', '.join(nodes[:5])}"
                           f"{' ...' if len(nodes) > 5 else ''} out, a replacement fits nowhere because of {what}",
                           [obj(kind, ns, name)] + [obj("Node", "", n) for n in nodes]))
    return out


# -- priorities ------------------------------------------------------------------------------------
SEVERITY_OF = {"error": "error", "warning": "warning", "info": "info"}


def priority_findings(snapshot, now, shared=None) -> list:
    audit = explain_priorities(snapshot)
    out = []
    for f in audit.findings:
        objects = [obj("Pod", *ref.split("/", 1)) for ref in audit.pods_at_zero] \
            if f.code == "BOTTOM_UP_ROLLOUT_RISK" else []
        out.append(finding(f.code, SEVERITY_OF.get(f.severity, "warning"), f.message, objects))
    default = snapshot.global_default_class
    if default is not None:
        bare = [p for p in snapshot.pods if not p.is_terminal and not p.priority_class_name]
        if bare:
            out.append(finding("NO_CLASS_WITH_DEFAULT", "warning", f"{len(bare)} pod(s) have no PriorityClass although "
                               f"{default.name} ({default.value}) is the global default: they predate it and run at "
                               "their old priority, below every new pod of the default class",
                               _pod_objs(bare)))
    out += _preemption_findings(snapshot, now, default, shared)
    return out


def _preemption_findings(snapshot, now, default, shared) -> list:
    """High-priority pods that preempt (above the default class, or 0): pending ones previewed (on
    the shared base's view of the cluster without them: no copy of the snapshot)."""
    from kubectl_safety.analysis.preemption import preview
    from kubectl_safety.analysis.priority import UnknownPriorityClass, resolve

    floor = default.value if default is not None else 0
    running, pending = {}, []
    for p in snapshot.pods:
        if p.is_terminal or p.is_terminating or p.priority_value <= floor:
            continue
        try:
            prio = resolve(p, snapshot)
        except UnknownPriorityClass:
            continue
        if prio["preemptionPolicy"] != "PreemptLowerPriority" or prio["systemCritical"]:
            continue
        if p.node_name:
            running.setdefault((prio["className"] or "", prio["value"]), []).append(p)
        else:
            pending.append(p)
    out = []
    for (cls, value), pods in sorted(running.items(), key=lambda x: -x[0][1]):
        out.append(finding("PREEMPTING_PODS", "info", f"{len(pods)} running pod(s) of class {cls or '(none)'} "
                           f"({value}) preempt lower-priority pods whenever they are rescheduled (a drain, a "
                           "rollout); preemptionPolicy: Never avoids it for non-critical workloads",
                           _pod_objs(pods)))
    for p in sorted(pending, key=lambda p: (-p.priority_value, p.key))[:PREVIEWS]:
        without = shared.capacity_base.view(set(), {p.key})[0] if shared else snapshot
        result = preview(p, without, now)
        victims = result.victims
        if not victims:
            continue
        out.append(finding("PREEMPTION_PENDING", "warning", f"pending {p.namespace}/{p.name} (priority "
                           f"{p.priority_value}) would preempt {len(victims)} pod(s) on {result.node} now",
                           [pod_obj(p)] + [obj("Pod", v.namespace, v.name) for v in victims]))
    return out
