"""Rebalance topology spread: the fewest evictions that bring every constraint within maxSkew.

Skew is counted exactly as kube-scheduler's PodTopologySpread filter does (``topology.py``).
The plan simulates each eviction followed by the controller re-creating the pod and the
scheduler placing it: the replacement may only go to a node where every Filter plugin passes
(``scheduling.filters``, the same code as drain and preemption, on the simulated cluster); among
several feasible nodes the plan assumes the least-loaded domain wins (true for ScheduleAnyway
scoring, an assumption otherwise). Pending pods go without a PDB check (as the Eviction API
does); system-critical pods are never moved. Pure: no I/O, no clock.
"""

import difflib
import json

from kubectl_safety.analysis.budgets import Budgets
from kubectl_safety.analysis import topology
from kubectl_safety.analysis.deletion import pod_gc_force_deletes
from kubectl_safety.analysis.eviction import refusals
from kubectl_safety.analysis.plans.common import Finding
from kubectl_safety.analysis.node_health import node_health
from kubectl_safety.analysis.plans.common import RiskList, obj
from kubectl_safety.analysis.plans.rebalance import RebalancePlan, RebalanceSummary, RebalancedWorkload, Relocation, SpreadBlock, SpreadState
from kubectl_safety.analysis.risks import NODE_WAY_OUT, incomplete
from kubectl_safety.analysis.scheduling.filters import filter_node
from kubectl_safety.analysis.scheduling.node_state import reuse_node_states
from kubectl_safety.analysis.scheduling.replacement import unscheduled_copy
from kubectl_safety.analysis.scheduling.score import score_nodes
from kubectl_safety.model.pods import Pod
from kubectl_safety.model.selectors import pod_matches_node_selector_and_affinity
from kubectl_safety.record import record

REBALANCED_KINDS = ("Deployment", "StatefulSet", "ReplicaSet")
CLUSTER_DEFAULTS = ((topology.HOSTNAME, 3), (topology.ZONE, 5))
ASSUMPTIONS = [
    "an evicted pod is re-created by its controller with the same labels and spec",
    "the scheduler places each replacement on a node where every DoNotSchedule constraint passes "
    "and the pod fits; among several such nodes it is assumed to pick the least-loaded domain "
    "(ScheduleAnyway scoring does; with only DoNotSchedule constraints other scores decide, so "
    "execution measures again after each round)",
    "evicted pods keep their resources until gone, so they are not freed on their node",
    "a round evicts at most what each PDB allows now; later rounds start once the replacements are "
    "ready and the budget has recovered",
]


@record(slots=False)
class RebalanceOptions:
    include_soft: bool = False         # also rebalance ScheduleAnyway constraints
    cluster_defaults: bool = False     # judge pods without constraints by the built-in defaults
    evict_local_storage: bool = False  # allow evicting pods with emptyDir/hostPath volumes
    max_evictions: int = None          # cap on planned evictions (None: no cap)
    accept_risks: frozenset = frozenset()  # risk codes accepted by --accept-risk


class Spread:
    """One constraint as seen from one group of identical pods, with mutable simulated counts."""

    def __init__(self, rep, raw, group_constraints, snapshot, source="pod"):
        self.c = topology.normalized(raw)
        self.source = source
        self.hard = topology.is_hard(raw) and source == "pod"
        self.selector = topology.constraint_selector(rep, raw)
        self.namespace = rep.namespace
        self.self_match = bool(self.selector and self.selector.matches(rep.labels))
        same = [x for x in group_constraints
                if topology.normalized(x)["whenUnsatisfiable"] == self.c["whenUnsatisfiable"]]
        keys = [x.get("topologyKey") for x in same]
        self.domain_of = topology.eligible_domains(rep, raw, keys, snapshot)  # shared: read only
        self.counts = topology.count_in_domains(self.domain_of, self.selector, snapshot.pods_in(rep.namespace))

    @property
    def key(self):
        return self.c["topologyKey"]

    def counts_pod(self, pod) -> bool:
        """Whether the constraint counts ``pod`` (an empty selector counts none, as the scheduler)."""
        return (self.selector is not None and not self.selector.is_empty and pod.namespace == self.namespace
                and self.selector.matches(pod.labels))

    def skew(self, counts=None) -> int:
        return topology.skew(self.counts if counts is None else counts, self.c["minDomains"])

    def min_match(self) -> int:
        return topology.global_min(self.counts, self.c["minDomains"])

    def violated(self, counts=None) -> bool:
        return self.skew(counts) > self.c["maxSkew"]

    def moved(self, pod, src, dst) -> dict:
        """Counts after ``pod`` leaves node ``src`` and its replacement lands on ``dst``."""
        counts = dict(self.counts)
        if self.counts_pod(pod):
            if src in self.domain_of:
                counts[self.domain_of[src]] -= 1
            if dst in self.domain_of:
                counts[self.domain_of[dst]] += 1
        return counts


def _squares(counts) -> int:
    return sum(v * v for v in counts.values())


# -- workloads and their pods ---------------------------------------------------------------

def top_owner(snapshot, pod):
    """The pod's outermost resolved controller (ReplicaSet -> its Deployment), or None."""
    found = None
    for _, owner in snapshot.owner_chain(pod):
        if owner is None:
            break
        found = owner
    return found


def workload_pods(snapshot, workload) -> list:
    """Scheduled, non-terminal pods whose controller chain leads to ``workload``."""
    out = []
    for pod in snapshot.pods_in(workload.namespace):
        if pod.is_terminal or not pod.node_name:
            continue
        owner = top_owner(snapshot, pod)
        if owner is not None and (owner.kind, owner.name) == (workload.kind, workload.name):
            out.append(pod)
    return out


def find_workloads(snapshot, namespace=None, selector=None) -> list:
    """Deployments, StatefulSets and ReplicaSets owning pods in scope (pods matching ``selector``)."""
    found = {}
    pods = snapshot.pods_in(namespace) if namespace else snapshot.pods
    for pod in pods:
        if selector is not None and not selector.matches(pod.labels):
            continue
        owner = top_owner(snapshot, pod)
        if owner is not None and owner.kind in REBALANCED_KINDS:
            found[(owner.namespace, owner.kind, owner.name)] = owner
    return [found[k] for k in sorted(found)]


# -- evictability and fit -------------------------------------------------------------------

def not_evictable(pod, snapshot, options) -> str:
    """Why the pod may not be evicted by rebalance (the evictor's first refusal), or ''."""
    found = refusals(pod, snapshot, options.evict_local_storage)
    return found[0].message if found else ""


def replacement(pod):
    """The pod its controller would create, unscheduled, without its spread constraints (what a
    domain's nodes can take at all, spread aside)."""
    return unscheduled_copy(pod, keep_spread=False)


def terminating(pod, when) -> Pod:
    """``pod`` once evicted: terminating (spread no longer counts it; it still holds its resources)."""
    stamp = when.isoformat().replace("+00:00", "Z") if when else "1970-01-01T00:00:00Z"
    return Pod({**pod.raw, "metadata": {**pod.meta, "deletionTimestamp": stamp}})


def placement_failure(pod, node, snapshot, state=None) -> str:
    """Why the scheduler would not put the unscheduled ``pod`` on ``node``, or '' (the first failing
    filter's code; a NotReady node is tainted by the node controller, which a dump may not show yet)."""
    if node.ready_status != "True":
        return "not-ready"
    failures = filter_node(pod, node, snapshot, state)
    return failures[0].code if failures else ""


# -- PDB budgets over rounds ----------------------------------------------------------------

# -- planning -------------------------------------------------------------------------------

def eviction_order(pod):
    """Lowest priority first, then not-ready, then newest (creation, then start time)."""
    created = pod.creation_timestamp.timestamp() if pod.creation_timestamp else 0
    started = pod.start_time.timestamp() if pod.start_time else 0
    return (pod.priority_value, pod.is_ready, -created, -started, pod.name)


def _signature(pod) -> str:
    """Pods with equal signatures see every constraint identically."""
    keys = [k for c in pod.topology_spread_constraints for k in c.get("matchLabelKeys") or []]
    return json.dumps([pod.topology_spread_constraints, {k: pod.labels.get(k) for k in keys},
                       pod.node_selector, pod.required_node_affinity, pod.tolerations], sort_keys=True)


def _default_constraints(snapshot, pod):
    """The built-in default constraints, selecting the pod's controller's pods (Services aside)."""
    owner = snapshot.owner(pod)
    if owner is None or owner.kind not in ("ReplicaSet", "StatefulSet", "ReplicationController"):
        return []
    selector = owner.spec.get("selector")
    if owner.kind == "ReplicationController":
        selector = {"matchLabels": selector or {}}
    return [{"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": selector} for key, skew in CLUSTER_DEFAULTS]


class _Group:
    """Pods of one workload with identical spread semantics, and their constraints."""

    def __init__(self, workload, pods, snapshot, options):
        self.workload = workload
        self.pods = pods
        rep = pods[0]
        own = rep.topology_spread_constraints
        self.spreads = [Spread(rep, raw, own, snapshot) for raw in own]
        if not own and options.cluster_defaults:
            defaults = _default_constraints(snapshot, rep)
            # System defaults do not require nodes to carry every key (scoring's requireAllTopologies).
            self.spreads = [Spread(rep, raw, [raw], snapshot, "cluster-default") for raw in defaults]
        self.targets = [s for s in self.spreads
                        if s.hard or s.source == "cluster-default" or options.include_soft]


class Planner:
    """Simulates evictions and re-placements on one snapshot, across workloads."""

    def __init__(self, snapshot, options):
        self.snapshot = snapshot
        self.current = snapshot  # the simulated cluster: evicted pods terminating, replacements placed
        self.options = options
        self.node_of = {p.key: p.node_name for p in snapshot.pods}
        self.budgets = Budgets(snapshot)
        self.evictions = []
        self.blocked = []
        self.evicted = set()
        self.tied = []  # the nodes tied with the last move's expected node

    def place(self, pod, group, src, view):
        """The node the scheduler would choose for ``pod``'s replacement on ``view``, or (None, reasons).

        Feasibility is ``filter_node`` (every Filter plugin, the pod's own spread constraints
        included, counted on the simulated cluster); the choice is the scheduler's Score stage
        (``score_nodes``): of nodes tied for the highest score, the first by name, and the others
        in ``tied``.
        """
        reasons, feasible = {}, []
        new = unscheduled_copy(pod, name=f"{pod.name}-moved")
        for node in view.nodes:
            why = placement_failure(new, node, view)
            if why:
                reasons[why] = reasons.get(why, 0) + 1
                continue
            feasible.append(node)
        if not feasible:
            return None, new, reasons, []
        best = score_nodes(new, feasible, view).best
        return view.node(best[0]), new, reasons, best[1:]

    def try_move(self, pod, group, target):
        """Commit the eviction of ``pod`` if it reduces ``target``'s imbalance and worsens nothing."""
        src = self.node_of[pod.key]
        for s in group.spreads:  # the pod is gone (terminating) while its replacement schedules
            s.counts = s.moved(pod, src, None)
        view = self.current.replace(pods=[terminating(p, self.snapshot.taken_at) if p is pod else p
                                          for p in self.current.pods])  # an evicted pod is never moved again
        reuse_node_states(self.current, view, {src}, [pod])
        dst, new, reasons, tied = self.place(pod, group, src, view)
        after = {id(s): s.moved(pod, None, dst.name) if dst else s.counts for s in group.spreads}
        before = {id(s): s.moved(pod, None, src) for s in group.spreads}
        ok = dst is not None and _squares(after[id(target)]) < _squares(before[id(target)]) and all(
            s.skew(after[id(s)]) <= max(s.skew(before[id(s)]), s.c["maxSkew"]) for s in group.spreads)
        for s in group.spreads:
            s.counts = after[id(s)] if ok else before[id(s)]
        if not ok:
            reuse_node_states(view, self.current, {src}, [pod])  # keep what the try computed
            why = ("no node it fits on with the spread filter passing: "
                   + ", ".join(f"{n} node(s) {r}" for r, n in sorted(reasons.items()))) if dst is None else \
                "its replacement would not reduce the imbalance without worsening another constraint"
            return None, why
        placed = Pod({**new.raw, "spec": {**new.spec, "nodeName": dst.name}, "status": {"phase": "Running"}})
        self.current = view.replace(pods=list(view.pods) + [placed])
        reuse_node_states(view, self.current, {dst.name}, [placed])
        self.node_of[pod.key] = dst.name
        self.tied = tied
        return dst, ""

    def candidates(self, group, target):
        """Evictable pods of the group in ``target``'s fullest domains first, in eviction order."""
        counts = target.counts
        low = target.min_match()
        out = []
        for pod in group.pods:
            if pod.key in self.evicted or not target.counts_pod(pod):
                continue
            domain = target.domain_of.get(self.node_of[pod.key])
            if domain is None or counts.get(domain, 0) < low + 2 and counts.get(domain, 0) < max(counts.values()):
                continue
            out.append((-counts[domain], eviction_order(pod), pod, domain))
        return [(pod, domain) for _, _, pod, domain in sorted(out, key=lambda t: t[:2])]

    def step(self, group) -> bool:
        """Plan one eviction for the group's worst violated target; False when none helps."""
        cap = self.options.max_evictions
        for target in sorted((s for s in group.targets if s.violated()), key=lambda s: -s.skew()):
            if not target.self_match:
                continue
            waiting = False
            for pod, domain in self.candidates(group, target):
                why = not_evictable(pod, self.snapshot, self.options)
                budget = "" if why else self.budgets.check(pod)
                if budget == "wait":
                    waiting = True
                    continue
                if why or budget:
                    self._block(group, target, pod, domain, why or budget)
                    continue
                if cap is not None and len(self.evictions) >= cap:
                    self._block(group, target, None, None,
                                f"--max-evictions {cap} reached before the constraint was balanced")
                    return False
                src = self.node_of[pod.key]
                dst, why = self.try_move(pod, group, target)
                if dst is None:
                    self._block(group, target, pod, domain, why)
                    continue
                self.budgets.spend(pod)
                self.evicted.add(pod.key)
                self.evictions.append(Relocation(
                    pod.namespace, pod.name, src, domain, target.key, _wref(group.workload), self.budgets.round,
                    dst.name, target.domain_of.get(dst.name), tuple(self.tied)))
                return True
            if waiting:
                self.budgets.next_round()
                return True
        return False

    def _block(self, group, spread, pod, domain, reason):
        entry = SpreadBlock(_wref(group.workload), spread.key, reason)
        if pod is not None:
            entry = SpreadBlock(entry.workload, entry.topology_key, reason, pod.namespace, pod.name,
                                self.node_of[pod.key], domain)
        if entry not in self.blocked:
            self.blocked.append(entry)

    def plan(self, group):
        for _ in range(2 * len(group.pods) * max(1, len(group.spreads)) + 2):
            if not self.step(group):
                break


def _wref(workload) -> str:
    return f"{workload.kind}/{workload.namespace}/{workload.name}"


# -- findings -------------------------------------------------------------------------------

def _near_miss(key, labels) -> list:
    last = key.split("/")[-1].lower()
    out = []
    for other in labels:
        if other == key:
            continue
        o = other.lower()
        if (o.split("/")[-1] == last or last in o or o in key.lower()
                or difflib.SequenceMatcher(None, key.lower(), o).ratio() >= 0.8):
            out.append(other)
    return sorted(set(out))


def group_findings(group, snapshot) -> list:
    """Seed 004 pitfalls: selector not selecting the pods, missing/mistyped keys, empty domains."""
    rep, ref, out = group.pods[0], _wref(group.workload), []
    for s in (s for s in group.spreads if s.source == "pod"):  # not the scheduler's own defaults
        key = s.key
        if s.selector is None or not s.self_match:
            out.append(Finding("TOPOLOGY_SELECTOR_MISMATCH", "warning",
                               f"{ref}: the {key} constraint's labelSelector ({s.selector or 'none'}) does not select "
                               "the workload's own pods: placing them never changes the skew it measures"))
        usable = [n for n in snapshot.nodes if pod_matches_node_selector_and_affinity(rep, n)]
        lacking = [n for n in usable if key not in n.labels]
        if lacking and len(lacking) == len(usable):
            out.append(Finding("TOPOLOGY_NO_DOMAINS", "error",
                               f"{ref}: no node has label {key}: every node is skipped"
                               + (", new pods cannot schedule" if s.hard else "")))
        elif lacking:
            near = sorted({k for n in lacking for k in _near_miss(key, n.labels)})
            stranded = sum(1 for p in group.pods if p.node_name in {n.name for n in lacking})
            msg = (f"{ref}: {len(lacking)} node(s) lack label {key} ({', '.join(n.name for n in lacking[:5])}"
                   f"{', ...' if len(lacking) > 5 else ''}): they are skipped, their pods are not counted"
                   + (f" ({stranded} of this workload's)" if stranded else ""))
            if near:
                msg += f"; similar label(s) {', '.join(near)}: mistyped topology label?"
            out.append(Finding("TOPOLOGY_KEY_MISSING", "warning", msg))
        if s.counts and len(s.counts) < s.c["minDomains"]:
            out.append(Finding("TOPOLOGY_FEW_DOMAINS", "warning",
                               f"{ref}: {len(s.counts)} eligible {key} domain(s) < minDomains {s.c['minDomains']}: "
                               "the global minimum counts as 0, so skew equals the fullest domain"))
        for value in _affinity_values(rep, key):
            if not any(n.labels.get(key) == value for n in snapshot.nodes):
                out.append(Finding("TOPOLOGY_DOMAIN_WITHOUT_NODES", "warning",
                                   f"{ref}: the pods' node affinity allows {key}={value} but no node is in that "
                                   "domain (node group scaled to zero?): the scheduler does not know it exists"))
        new = replacement(rep)
        for domain in sorted(d for d, n in s.counts.items() if s.violated() and n == s.min_match()):
            nodes = [n for n in snapshot.nodes if s.domain_of.get(n.name) == domain]
            if nodes and all(placement_failure(new, n, snapshot) for n in nodes):
                out.append(Finding("TOPOLOGY_UNREACHABLE_DOMAIN", "warning",
                                   f"{ref}: {key}={domain} holds the global minimum but no node in it can "
                                   f"take the pods ({placement_failure(new, nodes[0], snapshot)} on {nodes[0].name}"
                                   + (", counted because nodeTaintsPolicy is Ignore" if s.c["nodeTaintsPolicy"] == "Ignore" else "")
                                   + ")"))
    return out


def _affinity_values(pod, key) -> list:
    values = []
    if key in pod.node_selector:
        values.append(pod.node_selector[key])
    for term in (pod.required_node_affinity or {}).get("nodeSelectorTerms") or []:
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == key and expr.get("operator") == "In":
                values.extend(expr.get("values") or [])
    return sorted(set(values))


# -- the report -----------------------------------------------------------------------------

def groups_of(snapshot, workload, options) -> list:
    by_signature = {}
    for pod in workload_pods(snapshot, workload):
        if not pod.is_terminating:
            by_signature.setdefault(_signature(pod), []).append(pod)
    return [_Group(workload, pods, snapshot, options) for _, pods in sorted(by_signature.items())]


def plan_rebalance(snapshot, workloads, options=RebalanceOptions(), now=None) -> RebalancePlan:
    """The RebalancePlan for ``workloads`` (Workload objects) on ``snapshot``."""
    planner = Planner(snapshot, options)
    groups = [g for w in workloads for g in groups_of(snapshot, w, options)]
    constraints = [_constraint_row(g, s) for g in groups for s in g.spreads]
    findings = []
    for g in groups:
        findings += group_findings(g, snapshot)
        planner.plan(g)
    expected = [_constraint_row(g, s) for g in groups for s in g.spreads]
    for g in groups:
        for s in g.targets:
            known = any(b.workload == _wref(g.workload) and b.topology_key == s.key for b in planner.blocked)
            reason = _unfixable_reason(s, known)
            if s.violated() and reason:
                planner._block(g, s, None, None, reason)
    unresolved = [r for r in expected if r.rebalanced and r.violated]
    blocked = [b for b in planner.blocked
               if any(r.workload == b.workload and r.topology_key == b.topology_key for r in unresolved)]
    violated = [r for r in constraints if r.rebalanced and r.violated]
    judged = plan_risks(snapshot, planner.evictions, now or snapshot.taken_at).judged(options.accept_risks)
    return RebalancePlan(
        source=snapshot.source, taken_at=_iso(now or snapshot.taken_at), options=options,
        workloads=tuple(RebalancedWorkload(w.kind, w.namespace, w.name, len(workload_pods(snapshot, w)))
                        for w in workloads),
        constraints=tuple(constraints), evictions=tuple(planner.evictions), expected=tuple(expected),
        blocked=tuple(blocked), findings=tuple(findings), assumptions=tuple(ASSUMPTIONS),
        risks=judged, safe=all(r.accepted for r in judged),
        summary=RebalanceSummary(len(violated), len(planner.evictions),
                                 max([e.round for e in planner.evictions], default=0), not unresolved))


def plan_risks(snapshot, evictions, now) -> RiskList:
    """Evictions from nodes that cannot confirm them: the pods stay Terminating (drain's codes)."""
    risks = RiskList()
    unheld = incomplete(snapshot, "rebalance")
    if unheld:
        risks.add(*unheld, [])
    by_node = {}
    for e in evictions:
        by_node.setdefault(e.node, []).append(e)
    for name, moved in sorted(by_node.items()):
        node = snapshot.node(name)
        state = node_health(node, now, snapshot.node_lease(name))
        if state["state"] in ("Unknown", "NotReady") and not pod_gc_force_deletes(node, state):
            code = "NODE_UNREACHABLE" if state["state"] == "Unknown" else "NODE_NOT_READY"
            risks.add(code, f"node {name} is {state['message']}: {len(moved)} evicted pod(s) stay Terminating until "
                      f"its kubelet confirms, and their replacements are not counted before. Way out: {NODE_WAY_OUT}",
                      [obj("Node", "", name)] + [obj("Pod", e.namespace, e.name) for e in moved])
    return risks


def _constraint_row(group, s) -> SpreadState:
    skew = s.skew()
    return SpreadState(_wref(group.workload), s.key, s.c["maxSkew"], s.c["whenUnsatisfiable"], s.c["minDomains"],
                       dict(sorted(s.counts.items())), skew, skew > s.c["maxSkew"],
                       str(s.selector) if s.selector is not None else None, s.c["nodeAffinityPolicy"],
                       s.c["nodeTaintsPolicy"], s.source, s in group.targets, len(group.pods))


def _unfixable_reason(s, known) -> str:
    """Why a target stays violated: structural causes always, the generic one if nothing else says."""
    if not s.self_match:
        return "the labelSelector does not select the workload's own pods: evicting them changes nothing"
    if s.counts and len(s.counts) < s.c["minDomains"]:
        return (f"only {len(s.counts)} domain(s) < minDomains {s.c['minDomains']}: the minimum stays 0 "
                "and the pods cannot spread thin enough")
    return "" if known else "no eviction reduces the imbalance (every candidate pod is blocked or has no better node)"


def _iso(when):
    return when.isoformat().replace("+00:00", "Z") if when is not None else None
