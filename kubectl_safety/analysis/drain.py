"""Drain planner: what draining nodes will do to every pod, wave by wave (pure, no I/O).

``plan_drain(snapshot, node_names, options, now)`` returns a ``DrainPlan`` report:

1. per pod, kubectl drain's filters and the Eviction API's rules (``drain_filters``);
2. cumulative PodDisruptionBudget accounting across pods and nodes (like cluster-autoscaler's
   RemainingPdbTracker): a budget allowing k disruptions evicts k pods per wave; a wave starts
   when the previous wave's replacements are Ready again, so a pod whose replacement cannot
   be placed (or that has no controller) uses its budget for good;
3. capacity: will each replacement fit on a node that stays (``Capacity``);
4. estimated duration of every wave (grace periods, replacement readiness).
"""

from dataclasses import dataclass

from kubectl_safety.analysis import pdb as pdb_math
from kubectl_safety.analysis.drain_filters import PodVerdict, eviction_rules, kubectl_filters
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.analysis.termination import api_grace_period
from kubectl_safety.analysis.topology import constraint_selector, domain_counts, normalized
from kubectl_safety.model.selectors import (LabelSelector, pod_matches_node_selector_and_affinity,
                                            toleration_tolerates, untolerated_taint)

API_VERSION = "safety.kubectl.io/v1"
RETRY_SECONDS = 5  # kubectl's (and our) eviction retry delay: a wave starts up to this late
STARTUP_SECONDS = 10  # assumed time for a replacement to be scheduled and started
FEASIBLE_NODES = 16  # like the scheduler: score a bounded sample of feasible nodes
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


@dataclass(frozen=True)
class DrainOptions:
    """kubectl drain's flags (same defaults), as far as planning is concerned."""

    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    force: bool = False
    grace_period: int = -1
    disable_eviction: bool = False
    skip_wait_for_delete_timeout: int = 0
    pod_selector: object = None  # LabelSelector or None
    daemonsets_known: bool = None  # the snapshot holds every DaemonSet (None: if it holds any)


def plan_drain(snapshot, node_names, options=None, now=None) -> dict:
    """The DrainPlan report for draining ``node_names`` (in that order)."""
    options = options or DrainOptions()
    now = now or snapshot.taken_at
    targets = [n for n in dict.fromkeys(node_names)]
    ds_known = options.daemonsets_known
    if ds_known is None:
        ds_known = any(w.kind == "DaemonSet" for w in snapshot.workloads)
    verdicts = []
    for name in targets:
        for pod in sorted(snapshot.pods_on(name), key=lambda p: p.key):
            if options.pod_selector is not None and not options.pod_selector.matches(pod.labels):
                continue
            v = PodVerdict(pod)
            kubectl_filters(v, options, now, ds_known, snapshot)
            if v.decision != "skip":
                eviction_rules(v, options, snapshot)
            verdicts.append(v)
    leaving = [v for v in verdicts if v.decision != "skip"]
    index = PodIndex(snapshot)
    trackers = {}
    for v in leaving:
        ref = v.pdb and f"{v.pdb.namespace}/{v.pdb.name}"
        if ref and ref not in trackers:
            trackers[ref] = BudgetTracker(v.pdb, index.view(v.pdb))
    going = [v for v in leaving if v.decision != "blocked"
             and not (v.eviction == "budget" and trackers[_ref(v.pdb)].never)]
    capacity = Capacity(snapshot, set(targets), {v.pod.key for v in going})
    placements = {}
    for v in sorted(going, key=_placement_order):
        if needs_replacement(v.pod):
            placements[v.pod.key] = capacity.place(v.pod)
    entries = {v.pod.key: _entry(v) for v in verdicts}
    _assign_waves(leaving, placements, entries, trackers)
    for v in leaving:
        _finish_entry(entries[v.pod.key], v, placements.get(v.pod.key))
    waves = _waves(verdicts, entries, options)
    return _report(snapshot, targets, verdicts, entries, trackers, placements, waves, capacity, options, index)


def needs_replacement(pod) -> bool:
    """A controller will recreate the pod somewhere (terminal and unmanaged pods are not)."""
    ref = pod.controller_ref
    return bool(ref) and ref.get("kind") != "DaemonSet" and not pod.is_terminal


def _placement_order(v):
    return (-v.pod.priority_value, -pod_requests(v.pod).get("cpu", 0), v.pod.key)


def _entry(v) -> dict:
    pod = v.pod
    action = {"skip": "skip", "blocked": "blocked"}.get(v.decision,
                                                         "delete" if v.eviction == "delete" else "evict")
    return {"namespace": pod.namespace, "name": pod.name, "node": pod.node_name, "uid": pod.uid,
            "action": action, "reasons": [r.to_dict() for r in v.reasons],
            "pdb": _ref(v.pdb) if v.pdb is not None else None,
            "wave": None, "replacementNode": None, "gracePeriodSeconds": None}


def _add(entry, code, severity, message):
    entry["reasons"].append({"code": code, "severity": severity, "message": message})


# -- PodDisruptionBudget accounting ----------------------------------------------------------
class PodIndex:
    """Pods of a namespace by (label, value), built on first use: selector matches without full scans."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self._by_label = {}

    def matching(self, namespace, selector) -> list:
        return [p for p in self.candidates(namespace, selector) if selector.matches(p.labels)]

    def selects_any(self, namespace, selector) -> bool:
        return any(selector.matches(p.labels) for p in self.candidates(namespace, selector))

    def candidates(self, namespace, selector) -> list:
        """A superset of the pods ``selector`` matches (the smallest exact-label bucket)."""
        if selector is None:
            return []
        pods = self.snapshot.pods_in(namespace)
        exact = [(k, next(iter(v))) for k, op, v in selector.requirements if op == "In" and len(v) == 1]
        if exact:
            if namespace not in self._by_label:
                index = {}
                for pod in pods:
                    for item in pod.labels.items():
                        index.setdefault(item, []).append(pod)
                self._by_label[namespace] = index
            pods = min((self._by_label[namespace].get(item, []) for item in exact), key=len)
        return pods

    def view(self, pdb):
        """The snapshot restricted to the PDB's pods: pdb.py's scans then cost O(its pods)."""
        return self.snapshot.replace(pods=self.matching(pdb.namespace, pdb.selector))


class BudgetTracker:
    """One PDB's remaining disruptions across waves (status numbers, as the API server uses them)."""

    def __init__(self, pdb, snapshot):
        self.pdb = pdb
        self.summary = pdb_math.summary(pdb, snapshot)
        self.allowed = pdb.disruptions_allowed
        self.healthy = pdb.status_int("currentHealthy")
        self.desired = pdb.status_int("desiredHealthy")
        self.expected = pdb.status_int("expectedPods")
        self.never = self.summary["neverAllows"]
        # expectedPods is the owners' scale only for maxUnavailable and percentages; for an integer
        # minAvailable it is the pods that exist now, which dips while replacements start.
        scaled = pdb.max_unavailable is not None or isinstance(pdb.min_available, str)
        if self.never is None and scaled and self.allowed == 0 and self.desired is not None \
                and self.expected is not None and self.desired >= self.expected > 0:
            self.never = f"desiredHealthy {self.desired} >= expectedPods {self.expected}"
        self.lost = 0  # healthy pods evicted for good (no replacement, or it cannot be placed)
        self.waves = {}  # wave -> pods evicted in it

    def numbers(self) -> str:
        return (f"needs {self.desired if self.desired is not None else '?'} healthy, has "
                f"{self.healthy if self.healthy is not None else '?'}, disruptionsAllowed {self.allowed}")

    def per_wave(self) -> int:
        return self.allowed - self.lost

    def to_dict(self) -> dict:
        out = dict(self.summary, neverAllows=self.never)
        out["podsToEvict"] = sum(self.waves.values())
        out["waves"] = len(self.waves)
        out["lostForGood"] = self.lost
        return out


def _assign_waves(leaving, placements, entries, trackers):
    """Give pods that need a budget their wave, cumulatively per PDB; mark waits and blocks."""
    by_pdb = {}
    for v in leaving:
        if v.pdb is not None and v.decision != "blocked" and v.eviction == "budget":
            by_pdb.setdefault(_ref(v.pdb), []).append(v)
    for ref, pods in by_pdb.items():
        tracker = trackers[ref]
        # Pods whose replacement lands somewhere go first: they give the budget back.
        pods.sort(key=lambda v: (not _recovers(v, placements), v.pod.key))
        wave, used = 1, 0
        for v in pods:
            entry = entries[v.pod.key]
            if tracker.never:
                entry["action"] = "blocked"
                _add(entry, "PDB_NEVER_ALLOWS", "critical", f"PDB {ref} never allows a disruption: "
                     f"{tracker.never} ({tracker.numbers()})")
                continue
            if tracker.per_wave() <= 0 and used == 0 and wave == 1:
                entry["action"] = "wait"
                _add(entry, "PDB_NOT_HEALTHY", "warning", f"PDB {ref} allows no disruption now ({tracker.numbers()}): "
                     "the eviction waits until enough of its pods are Ready")
                continue
            if used >= tracker.per_wave():
                wave, used = wave + 1, 0
                if tracker.per_wave() <= 0:
                    entry["action"] = "blocked"
                    _add(entry, "PDB_EXHAUSTED", "critical", f"PDB {ref} has no disruption left after earlier "
                         f"waves: {tracker.lost} evicted pod(s) will not be replaced ({tracker.numbers()})")
                    continue
            used += 1
            tracker.waves[wave] = tracker.waves.get(wave, 0) + 1
            entry["wave"] = wave
            if v.pod.is_ready and not _recovers(v, placements):
                tracker.lost += 1
            if wave > 1:
                entry["action"] = "wait"
                _add(entry, "PDB_WAIT", "info", f"PDB {ref} allows {tracker.allowed} disruption(s) at a time "
                     f"({tracker.numbers()}): wave {wave}, after the replacements of wave {wave - 1} are Ready")
            else:
                _add(entry, "PDB_ALLOWS", "info", f"PDB {ref} allows it ({tracker.numbers()})")


def _ref(obj) -> str:
    return f"{obj.namespace}/{obj.name}"


def _recovers(v, placements) -> bool:
    placed = placements.get(v.pod.key)
    return placed is not None and placed[0] is not None


def _finish_entry(entry, v, placement):
    if entry["wave"] is None and entry["action"] in ("evict", "delete"):
        entry["wave"] = 1
    if v.decision == "blocked" or entry["action"] == "blocked":
        return
    if placement is None:
        return  # not recreated: UNMANAGED / TERMINAL / DAEMONSET_ORPHANED say so
    node, why = placement
    entry["replacementNode"] = node
    if node is None:
        _add(entry, "REPLACEMENT_UNPLACEABLE", "warning", f"its replacement fits on no remaining node: {why}")


# -- waves and durations ---------------------------------------------------------------------
def _waves(verdicts, entries, options) -> list:
    requested = options.grace_period if options.grace_period >= 0 else None
    waves = {}
    for v in verdicts:
        entry = entries[v.pod.key]
        if entry["wave"] is None or entry["action"] == "blocked":
            continue
        grace = api_grace_period(v.pod, requested)["seconds"]
        entry["gracePeriodSeconds"] = grace
        w = waves.setdefault(entry["wave"], {"wave": entry["wave"], "pods": [], "pdbs": set(),
                                             "gracePeriodSeconds": 0, "readySeconds": 0})
        w["pods"].append(f"{v.pod.namespace}/{v.pod.name}")
        if entry["pdb"]:
            w["pdbs"].add(entry["pdb"])
        w["gracePeriodSeconds"] = max(w["gracePeriodSeconds"], grace)
        if entry["pdb"] and needs_replacement(v.pod):
            w["readySeconds"] = max(w["readySeconds"], STARTUP_SECONDS + _readiness_delay(v.pod))
    out, last = [], max(waves, default=0)
    for n in sorted(waves):
        w = waves[n]
        w["pdbs"] = sorted(w["pdbs"])
        if n == last:
            w["readySeconds"] = 0  # nothing waits for the last wave's replacements
        w["estimatedSeconds"] = w["gracePeriodSeconds"] + w["readySeconds"] + (RETRY_SECONDS if n > 1 else 0)
        out.append(w)
    return out


def _readiness_delay(pod) -> int:
    """Seconds until a fresh copy of the pod can first report Ready (readiness probe delays)."""
    delay = 0
    for c in pod.containers:
        probe = c.probe("readinessProbe")
        if probe:
            delay = max(delay, int(probe.get("initialDelaySeconds") or 0) + int(probe.get("periodSeconds") or 10))
    return delay


# -- capacity --------------------------------------------------------------------------------
class Capacity:
    """Where replacements of leaving pods can go: the scheduler's main filters, incrementally.

    Per-node free resources are computed once, on first use, and updated as replacements are
    placed; static checks (node selector, required node affinity, taints) are cached per pod
    shape. Each placement scans nodes in name order and scores the first ``FEASIBLE_NODES``
    feasible ones, so the same few nodes are reused while they have room and the cost is
    O(pods x nodes) only when little fits.
    Covered: cordoned / NotReady nodes, resources (pod count, cpu, memory, ephemeral storage,
    extended), nodeSelector + required node affinity, NoSchedule/NoExecute taints, required
    pod anti-affinity of the incoming pod, DoNotSchedule topology spread. Not covered: existing
    pods' anti-affinity against the incoming pod, required pod affinity, host ports, volumes.
    """

    def __init__(self, snapshot, drained, leaving):
        self.snapshot = snapshot
        self.drained = drained
        self.leaving = leaving
        self.nodes = sorted(snapshot.nodes, key=lambda n: n.name)
        self._free = {}
        self._static = {}
        self._anti = {}
        self._spread = {}
        self.placed = {}  # node -> replacements placed there
        self._last_shape = (None, None)
        self._view = None

    def free(self, node) -> dict:
        if node.name not in self._free:
            free = dict(node.allocatable)
            used = 0
            for pod in self.snapshot.pods_on(node.name):
                if pod.is_terminal or pod.key in self.leaving:
                    continue
                used += 1
                for r, q in pod_requests(pod).items():
                    free[r] = free.get(r, 0) - q
            free["pods"] = free.get("pods", 0) - used
            self._free[node.name] = free
        return self._free[node.name]

    def _static_failure(self, pod, node):
        """Why the node can never take this pod shape (cached per shape), or None."""
        key = (self._shape(pod), node.name)
        if key not in self._static:
            self._static[key] = _static_check(pod, node, self.drained)
        return self._static[key]

    def _shape(self, pod) -> tuple:
        """What static node filters look at, hashable (computed once per pod)."""
        if self._last_shape[0] is not pod:
            self._last_shape = (pod, (repr(sorted(pod.node_selector.items())), repr(pod.required_node_affinity),
                                      repr(pod.tolerations)))
        return self._last_shape[1]

    def check(self, pod, node, requests):
        """Why ``node`` cannot take ``pod`` now, or None."""
        why = self._static_failure(pod, node)
        if why:
            return why
        free = self.free(node)
        if free.get("pods", 0) < 1:
            return "Too many pods"
        for r, q in requests.items():
            if q > 0 and r != "pods" and free.get(r, 0) < q:
                return f"Insufficient {r}"
        return self._anti_failure(pod, node) or self._spread_failure(pod, node)

    def place(self, pod):
        """(node name, None) for the chosen node, or (None, scheduler-style summary)."""
        requests = pod_requests(pod)
        n = len(self.nodes)
        feasible, failures = [], {}
        for node in self.nodes:
            why = self.check(pod, node, requests)
            if why:
                failures[why] = failures.get(why, 0) + 1
                continue
            feasible.append(node)
            if len(feasible) >= FEASIBLE_NODES:
                break
        if not feasible:
            parts = ", ".join(f"{c} {w}" for w, c in sorted(failures.items(), key=lambda x: (-x[1], x[0])))
            return None, f"0/{n} nodes are available: {parts or 'no nodes'}"
        best = max(feasible, key=lambda node: (_score(self.free(node), node), node.name))
        self._commit(pod, best, requests)
        return best.name, None

    def _commit(self, pod, node, requests):
        free = self.free(node)
        for r, q in requests.items():
            free[r] = free.get(r, 0) - q
        free["pods"] = free.get("pods", 0) - 1
        self.placed.setdefault(node.name, []).append(pod.key)
        for (namespaces, _, topo), (selector, domains) in self._anti.items():
            if pod.namespace in namespaces and selector.matches(pod.labels) and topo in node.labels:
                domains.add(node.labels[topo])
        for (namespace, _, topo, _), (selector, counts) in self._spread.items():
            if namespace == pod.namespace and selector.matches(pod.labels) and node.labels.get(topo) in counts:
                counts[node.labels[topo]] += 1

    def _anti_failure(self, pod, node):
        terms = ((pod.affinity.get("podAntiAffinity") or {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        for term in terms:
            topo = term.get("topologyKey")
            selector = LabelSelector.parse(term.get("labelSelector"))
            if selector is None or topo not in node.labels:
                continue
            namespaces = frozenset(term.get("namespaces") or [pod.namespace])
            key = (namespaces, str(selector), topo)
            if key not in self._anti:
                self._anti[key] = (selector, self._occupied_domains(namespaces, selector, topo))
            if node.labels[topo] in self._anti[key][1]:
                return "didn't match pod anti-affinity rules"
        return None

    def _occupied_domains(self, namespaces, selector, topo) -> set:
        domains = set()
        for ns in namespaces:
            for other in self.snapshot.pods_in(ns):
                if other.key in self.leaving or other.is_terminal or not selector.matches(other.labels):
                    continue
                node = self.snapshot.node(other.node_name)
                if node is not None and topo in node.labels:
                    domains.add(node.labels[topo])
        return domains

    def _spread_failure(self, pod, node):
        constraints = pod.topology_spread_constraints
        for constraint in constraints:
            c = normalized(constraint)
            if c["whenUnsatisfiable"] != "DoNotSchedule":
                continue
            selector = constraint_selector(pod, constraint)
            if selector is None:
                continue
            key = (pod.namespace, str(selector), c["topologyKey"], self._shape(pod))
            if key not in self._spread:
                counts = domain_counts(pod, constraint, self._remaining_view(), constraints, exclude=self.leaving)
                self._spread[key] = (selector, counts)
            counts = self._spread[key][1]
            domain = node.labels.get(c["topologyKey"])
            if domain not in counts:
                return "didn't match pod topology spread constraints (missing required label)"
            low = 0 if len(counts) < c["minDomains"] else min(counts.values())
            self_match = 1 if selector.matches(pod.labels) else 0
            if counts[domain] + self_match - low > c["maxSkew"]:
                return "didn't match pod topology spread constraints"
        return None

    def _remaining_view(self):
        """The snapshot without the drained nodes (their domains disappear if nothing else is there)."""
        if self._view is None:
            self._view = self.snapshot.replace(nodes=[n for n in self.snapshot.nodes if n.name not in self.drained])
        return self._view

    def summary(self) -> dict:
        return {"nodesConsidered": len(self.nodes) - len(self.drained),
                "replacementsPlaced": sum(len(v) for v in self.placed.values()),
                "placedOn": {k: len(v) for k, v in sorted(self.placed.items())}}


def _static_check(pod, node, drained):
    if node.name in drained:
        return "being drained"
    if node.unschedulable and not any(toleration_tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations):
        return "node(s) were unschedulable"
    if node.ready_status != "True":
        return "node(s) were not Ready"
    if not pod_matches_node_selector_and_affinity(pod, node):
        return "node(s) didn't match Pod's node affinity/selector"
    taint = untolerated_taint(pod, node)
    if taint is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    return None


def _score(free, node) -> float:
    """LeastAllocated-like: the mean free fraction of cpu and memory."""
    alloc = node.allocatable
    parts = [free.get(r, 0) / alloc[r] for r in ("cpu", "memory") if alloc.get(r)]
    return sum(parts) / len(parts) if parts else 0.0


# -- report ----------------------------------------------------------------------------------
def _report(snapshot, targets, verdicts, entries, trackers, placements, waves, capacity, options, index) -> dict:
    pods = [entries[v.pod.key] for v in verdicts]
    counts = {}
    for e in pods:
        counts[e["action"]] = counts.get(e["action"], 0) + 1
    blocked = [e for e in pods if e["action"] == "blocked"]
    unplaceable = [{"namespace": v.pod.namespace, "name": v.pod.name, "node": v.pod.node_name,
                    "reason": placements[v.pod.key][1]}
                   for v in verdicts if v.pod.key in placements and placements[v.pod.key][0] is None]
    nodes = []
    for name in targets:
        node = snapshot.node(name)
        mine = [e for e in pods if e["node"] == name]
        nodes.append({"name": name, "found": node is not None,
                      "unschedulable": bool(node and node.unschedulable),
                      "pods": len(mine),
                      "filterErrors": [f"{e['namespace']}/{e['name']}" for e in mine
                                       if any(r["severity"] == "critical" and r["code"] in FILTER_CODES
                                              for r in e["reasons"])]})
    warnings = _plan_warnings(snapshot, verdicts, targets, index)
    return {
        "kind": "DrainPlan", "apiVersion": API_VERSION,
        "safe": not blocked and all(n["found"] for n in nodes),
        "nodes": nodes,
        "options": {"ignoreDaemonsets": options.ignore_daemonsets, "deleteEmptydirData": options.delete_emptydir_data,
                    "force": options.force, "gracePeriod": options.grace_period,
                    "disableEviction": options.disable_eviction,
                    "skipWaitForDeleteTimeout": options.skip_wait_for_delete_timeout,
                    "podSelector": str(options.pod_selector) if options.pod_selector is not None else None},
        "summary": {"pods": len(pods), **{a: counts.get(a, 0) for a in ACTIONS}},
        "pods": pods,
        "pdbs": [t.to_dict() for _, t in sorted(trackers.items())],
        "capacity": {**capacity.summary(), "ok": not unplaceable, "unplaceable": unplaceable},
        "waves": waves,
        "estimatedSeconds": sum(w["estimatedSeconds"] for w in waves),
        "warnings": warnings,
        "takenAt": snapshot.taken_at.isoformat() if snapshot.taken_at else None,
    }


ACTIONS = ("evict", "delete", "wait", "skip", "blocked")
FILTER_CODES = ("DAEMONSET", "DAEMONSET_ORPHANED", "LOCAL_STORAGE", "UNMANAGED")


def _plan_warnings(snapshot, verdicts, targets, index) -> list:
    """Plan-wide findings: PDBs selecting nothing in the affected namespaces, missing nodes."""
    out = []
    for name in targets:
        if snapshot.node(name) is None:
            out.append({"code": "NODE_NOT_FOUND", "severity": "critical", "message": f'node "{name}" not found'})
    for ns in sorted({v.pod.namespace for v in verdicts}):
        for b in snapshot.pdbs_in(ns):
            if not index.selects_any(ns, b.selector):
                out.append({"code": "PDB_SELECTS_NOTHING", "severity": "warning",
                            "message": f"PDB {ns}/{b.name} selects no pod (selector {b.selector}): "
                                       "it protects nothing; check its labels"})
    return out
