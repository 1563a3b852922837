"""Drain planner: what draining nodes will do to every pod, wave by wave (pure, no I/O).

``plan_drain(snapshot, node_names, options, now)`` returns a typed ``plans.drain.DrainPlan``:

1. per pod, kubectl drain's filters and the Eviction API's rules (``eviction``);
2. cumulative PodDisruptionBudget accounting across pods and nodes (like cluster-autoscaler's
   RemainingPdbTracker): a budget allowing k disruptions evicts k pods per wave; a wave starts
   when the previous wave's replacements are Ready again, so a pod whose replacement cannot
   be placed (or that has no controller) uses its budget for good;
3. capacity: will each replacement fit on a node that stays (``capacity.Capacity``), unless
   ``check_capacity`` is off (then replacements are assumed to start somewhere, as kubectl does);
4. estimated duration of every wave (grace periods, replacement readiness);
5. the SAFE contract (``risks``): ``safe`` only when every targeted pod can go within the timeout,
   every replacement can be scheduled, no PDB is bypassed and the nodes can confirm deletions;
   each exception is a risk with a stable code (``risks.RISKS``) unless accepted by name.
"""

from dataclasses import replace

from kubectl_safety.analysis.budgets import BudgetTracker, summary as pdb_summary
from kubectl_safety.analysis.drain_risks import losses, plan_risks, plan_warnings
from kubectl_safety.analysis.eviction import FILTER_CODES, PodVerdict, blocker, eviction_rules, kubectl_filters
from kubectl_safety.analysis.labelled import labelled
from kubectl_safety.analysis.plans.common import Action, BudgetSummary, Reason, Severity
from kubectl_safety.analysis.plans.drain import (BudgetUse, CapacityCheck, DrainPlan, DrainedNode, PodAction,
                                                 Unplaceable, WaitFor, Wave)
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.analysis.termination import api_grace_period, last_kill
from kubectl_safety.record import record

RETRY_SECONDS = 5  # kubectl's (and our) eviction retry delay: a wave starts up to this late
STARTUP_SECONDS = 10  # assumed time for a replacement to be scheduled and started
NOT_CHECKED = ""  # placement of a replacement when capacity is not checked: assumed to start
TIED_LISTED = 4  # tied nodes named in a REPLACEMENT_NODE_TIED reason


@record(slots=False)
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
    check_capacity: bool = True  # place every replacement on a remaining node
    timeout: float = 0  # --timeout in seconds (0: none)
    accept_risks: frozenset = frozenset()  # risk codes accepted by --accept-risk
    surge: bool = False  # make before break: surge a workload before its pods go (analysis/surge.py)
    surge_limit: object = None  # extra pods per workload at most: int, "N%" of its replicas, or None
    wait_completed: bool = False  # Job pods: wait for them to complete instead of evicting them
    exclude: frozenset = frozenset()  # pod keys left out of the plan: an engine's own rules decide them

    @property
    def grace_seconds(self):
        """--grace-period as the API takes it: None for -1 (each pod's own), else the seconds."""
        return self.grace_period if self.grace_period >= 0 else None


def plan_drain(snapshot, node_names, options=None, now=None, shared=None) -> DrainPlan:
    """The plan for draining ``node_names`` (in that order). ``shared``: a ``SharedPlanning`` of this
    snapshot, when many plans are made of it (same plan, less work)."""
    options = options or DrainOptions()
    now = now or snapshot.taken_at
    targets = [n for n in dict.fromkeys(node_names)]
    ds_known = options.daemonsets_known
    if ds_known is None:
        ds_known = shared.daemonsets_known if shared else any(w.kind == "DaemonSet" for w in snapshot.workloads)
    verdicts = []
    for name in targets:
        for pod in sorted(snapshot.pods_on(name), key=lambda p: p.key):
            if options.pod_selector is not None and not options.pod_selector.matches(pod.labels):
                continue
            if pod.key in options.exclude:
                continue
            v = PodVerdict(pod)
            kubectl_filters(v, options, now, ds_known, snapshot)
            if v.decision != "skip":
                eviction_rules(v, options, snapshot)
            verdicts.append(v)
    leaving = [v for v in verdicts if v.decision != "skip"]
    index = shared.index if shared else PodIndex(snapshot)
    trackers = {}
    for v in leaving:
        ref = v.pdb and f"{v.pdb.namespace}/{v.pdb.name}"
        if ref and ref not in trackers:
            trackers[ref] = (BudgetTracker(v.pdb, None, shared.summary(v.pdb)) if shared
                             else BudgetTracker(v.pdb, index.view(v.pdb)))
    going = [v for v in leaving if v.decision != "blocked"
             and not (v.eviction == "budget" and trackers[_ref(v.pdb)].never)]
    capacity, placements = None, {}
    if options.check_capacity:
        from kubectl_safety.analysis.capacity import Capacity  # the node-scoped plan never needs it

        capacity = Capacity(snapshot, set(targets), {v.pod.key for v in going},
                            shared=shared.capacity_base if shared else None)
        if shared:
            shared.last_capacity = capacity
        placements = capacity.place_all([v.pod for v in sorted(going, key=_placement_order)
                                         if needs_replacement(v.pod)])
    else:
        placements = {v.pod.key: (NOT_CHECKED, None) for v in going if needs_replacement(v.pod)}
    entries = {v.pod.key: _Entry(v) for v in verdicts}
    for key, node in sorted((capacity.returns_to if capacity else {}).items()):
        entries[key].add("REPLACEMENT_RETURNS_TO_NODE", "warning", f"it {capacity.returns_why(key, node)}")
        entries[key].returns = True
    for key in sorted(capacity.from_pod if capacity else ()):
        entries[key].add("REPLACEMENT_FROM_POD", "info", "its controller is not in the snapshot: the replacement "
                         "is judged as a copy of this pod, not of the controller's template")
    _assign_waves(leaving, placements, entries, trackers)
    if options.wait_completed:
        _wait_for_jobs(leaving, entries)
    from kubectl_safety.analysis.surge import plan_surges, surge_wait

    surge, surge_risks, surgeable = plan_surges(snapshot, targets, verdicts, entries, trackers, capacity,
                                                placements, options,
                                                lambda pod: STARTUP_SECONDS + _readiness_delay(pod), now)
    if surge is not None and surge.surges:
        _waves_after_surge(leaving, placements, entries, trackers, surge, options.wait_completed)
    tied = capacity.tied if capacity else {}
    for v in leaving:
        _finish_entry(entries[v.pod.key], v, placements.get(v.pod.key), tied.get(v.pod.key))
    waves = surge_wait(_waves(verdicts, entries, options), surge)
    surged = {key for s in (surge.surges if surge is not None else ()) for key in s.keys}
    pods = tuple(entries[v.pod.key].frozen(v.pod.key in surged) for v in verdicts)
    checked = _capacity(verdicts, placements, capacity)
    risks = plan_risks(snapshot, targets, verdicts, pods, trackers, checked, capacity, options,
                   sum(w.estimated_seconds for w in waves), now)
    for code, message, objects in surge_risks:
        risks.add(code, message, objects)
    risks = risks.judged(options.accept_risks)
    safe = all(r.accepted for r in risks)
    return DrainPlan(
        safe=safe, nodes=_nodes(snapshot, targets, pods), options=options, pods=pods,
        pdbs=tuple(_budget_use(t) for _, t in sorted(trackers.items())), capacity=checked, waves=waves,
        warnings=plan_warnings(snapshot, verdicts, targets, index),
        taken_at=snapshot.taken_at.isoformat() if snapshot.taken_at else None,
        risks=risks, losses=losses(pods), surge=surge, surgeable=surgeable,
        safe_with_surge=None if safe or not surgeable else _safe_with_surge(snapshot, targets, options, now, shared))


def _safe_with_surge(snapshot, targets, options, now, shared) -> bool:
    """Whether the same drain is safe with --surge (what a plan without it says of it). A check's
    ``shared.last_capacity`` stays the plan's own."""
    kept = shared.last_capacity if shared else None
    try:
        return plan_drain(snapshot, targets, replace(options, surge=True), now, shared=shared).safe
    finally:
        if shared:
            shared.last_capacity = kept


def needs_replacement(pod) -> bool:
    """A controller will recreate the pod somewhere (terminal and unmanaged pods are not)."""
    ref = pod.controller_ref
    return bool(ref) and ref.get("kind") != "DaemonSet" and not pod.is_terminal


def _placement_order(v):
    return (-v.pod.priority_value, -pod_requests(v.pod).get("cpu", 0), v.pod.key)


class _Entry:
    """A pod's action while the plan is made; ``frozen()`` is its ``PodAction``."""

    __slots__ = ("pod", "action", "reasons", "pdb", "wave", "replacement_node", "grace", "surge_why", "waits_for",
                 "returns")

    def __init__(self, v):
        self.pod = v.pod
        self.action = self.first_action(v)
        self.reasons = v.reasons
        self.pdb = _ref(v.pdb) if v.pdb is not None else None
        self.wave = self.replacement_node = self.grace = None
        self.surge_why = ""
        self.waits_for, self.returns = WaitFor.GONE, False

    @staticmethod
    def first_action(v) -> Action:
        """The pod's action before any budget is spent."""
        return (Action.SKIP if v.decision == "skip" else Action.BLOCKED if v.decision == "blocked"
                else Action.DELETE if v.eviction == "delete" else Action.EVICT)

    def add(self, code, severity, message):
        self.reasons.append(Reason(code, Severity(severity), message))

    def frozen(self, surged=False) -> PodAction:
        """``surged``: its workload is surged first (its replacement cannot return: the nodes are tainted)."""
        pod = self.pod
        return PodAction(pod.namespace, pod.name, pod.node_name, pod.uid, pod.priority_value, self.action,
                         tuple(self.reasons), self.pdb, self.wave, self.replacement_node, self.grace,
                         waits_for=self.waits_for, blocked_by=blocker(self.action, self.reasons),
                         returns=self.returns and not surged, surged=surged)


# -- PodDisruptionBudget accounting ----------------------------------------------------------
class PodIndex:
    """A snapshot's pods as PDB selectors find them (``labelled``): selector matches without full scans."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self._selects = {}
        self._empty = {}

    def matching(self, namespace, selector) -> list:
        return [p for p in self.candidates(namespace, selector) if selector.matches(p.labels)]

    def selects_any(self, namespace, selector) -> bool:
        key = (namespace, id(selector))
        if key not in self._selects:  # the selector is kept: its id stays its own
            self._selects[key] = (selector, any(selector.matches(p.labels)
                                                for p in self.candidates(namespace, selector)))
        return self._selects[key][1]

    def selecting_nothing(self, namespace) -> list:
        """The namespace's PDBs whose selector selects none of its pods."""
        if namespace not in self._empty:
            self._empty[namespace] = [b for b in self.snapshot.pdbs_in(namespace)
                                      if not self.selects_any(namespace, b.selector)]
        return self._empty[namespace]

    def candidates(self, namespace, selector) -> list:
        """A superset of the pods ``selector`` matches (``labelled``)."""
        return labelled(self.snapshot, namespace, selector)

    def view(self, pdb):
        """The snapshot restricted to the PDB's pods: pdb.py's scans then cost O(its pods)."""
        return self.snapshot.replace(pods=self.matching(pdb.namespace, pdb.selector))


class SharedPlanning:
    """The work plans of one snapshot share (``check`` plans every node alone): the DaemonSet
    census, the label index of pods, each PDB's summary and the capacity base (``SharedBase``).
    ``last_capacity`` is the ``Capacity`` of the latest plan (its placements can be continued)."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self.daemonsets_known = any(w.kind == "DaemonSet" for w in snapshot.workloads)
        self.index = PodIndex(snapshot)
        snapshot._workloads_by_uid  # built once here, not in every PDB's view  # noqa: B018
        self.summaries = {}
        self.last_capacity = None
        self._base = None
        self._selected = None

    def summary(self, pdb) -> BudgetSummary:
        ref = (pdb.namespace, pdb.name)
        if ref not in self.summaries:
            self.summaries[ref] = pdb_summary(pdb, self.snapshot, self.selected(pdb))
        return self.summaries[ref]

    def selected(self, pdb) -> list:
        """The pods ``pdb`` selects, in snapshot order (``PodIndex.matching``): found once for all
        PDBs from every pod's ``pdbs_for``, which the plans read anyway, instead of per PDB."""
        if self._selected is None:
            self._selected = {}
            for p in self.snapshot.pods:
                for b in self.snapshot.pdbs_for(p):
                    self._selected.setdefault(id(b), []).append(p)
        return self._selected.get(id(pdb), [])

    @property
    def capacity_base(self):
        if self._base is None:
            from kubectl_safety.analysis.capacity import SharedBase

            self._base = SharedBase(self.snapshot)
        return self._base


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
                entry.action = Action.BLOCKED
                entry.add("PDB_NEVER_ALLOWS", "error", f"PDB {ref} never allows a disruption: "
                          f"{tracker.never} ({tracker.numbers()})")
                continue
            if tracker.per_wave() <= 0 and used == 0 and wave == 1:
                entry.action = Action.WAIT
                entry.add("PDB_NOT_HEALTHY", "warning", f"PDB {ref} allows no disruption now ({tracker.numbers()}): "
                          "the eviction waits until enough of its pods are Ready")
                continue
            if used >= tracker.per_wave():
                wave, used = wave + 1, 0
                if tracker.per_wave() <= 0:
                    entry.action = Action.BLOCKED
                    entry.add("PDB_EXHAUSTED", "error", f"PDB {ref} has no disruption left after earlier "
                              f"waves: {tracker.lost} evicted pod(s) will not be replaced ({tracker.numbers()})")
                    continue
            used += 1
            tracker.waves[wave] = tracker.waves.get(wave, 0) + 1
            entry.wave = wave
            if v.pod.is_ready and not _recovers(v, placements):
                tracker.lost += 1
            if wave > 1:
                entry.action = Action.WAIT
                entry.add("PDB_WAIT", "info", f"PDB {ref} allows {tracker.allowed} disruption(s) at a time "
                          f"({tracker.numbers()}): wave {wave}, after the replacements of wave {wave - 1} are Ready")
            else:
                entry.add("PDB_ALLOWS", "info", f"PDB {ref} allows it ({tracker.numbers()})")


WAVE_CODES = ("PDB_NEVER_ALLOWS", "PDB_NOT_HEALTHY", "PDB_EXHAUSTED", "PDB_WAIT", "PDB_ALLOWS")


def _waves_after_surge(leaving, placements, entries, trackers, surge, wait_completed):
    """The waves of the budgets a surge shares with other pods, planned again with the surge done first:
    its surge pods are Ready before its old pods go, so the budget's healthy count is where it was and
    a surged pod takes no slot; the other pods spend the budget as if the surged ones were not there.
    The surge's evictions are counted in wave 1; a surged pod keeps none of its budget's wave reasons."""
    surged = {key for s in surge.surges for key in s.keys}
    for key in surged:
        entries[key].reasons = [r for r in entries[key].reasons if r.code not in WAVE_CODES]
    refs = {entries[key].pdb for key in surged if entries[key].pdb in trackers}
    for ref in refs:
        trackers[ref].waves, trackers[ref].lost = {}, 0
    rest = [v for v in leaving if v.pod.key not in surged and v.pdb is not None and _ref(v.pdb) in refs]
    for v in rest:
        entry = entries[v.pod.key]
        entry.action, entry.wave = _Entry.first_action(v), None
        entry.reasons = [r for r in entry.reasons if r.code not in WAVE_CODES + ("WAIT_COMPLETED",)]
        entry.waits_for = WaitFor.GONE
    _assign_waves(rest, placements, entries, trackers)
    if wait_completed:
        _wait_for_jobs(rest, entries)
    for key in sorted(surged):
        entry = entries[key]
        if entry.pdb in refs and entry.action is Action.EVICT:
            waves = trackers[entry.pdb].waves
            waves[1] = waves.get(1, 0) + 1


def _wait_for_jobs(leaving, entries):
    """--wait-completed: a Job's running pods are waited for until they complete, never evicted."""
    for v in leaving:
        entry = entries[v.pod.key]
        if (v.pod.controller_ref or {}).get("kind") == "Job" and not v.pod.is_terminal and entry.action.moves:
            entry.action, entry.wave, entry.waits_for = Action.WAIT, 1, WaitFor.COMPLETION
            entry.add("WAIT_COMPLETED", "info", "a Job's pod: the drain waits for it to complete (--wait-completed), "
                      "it is not evicted")


def _ref(obj) -> str:
    return f"{obj.namespace}/{obj.name}"


def _recovers(v, placements) -> bool:
    placed = placements.get(v.pod.key)
    return placed is not None and placed[0] is not None


def _finish_entry(entry, v, placement, tied):
    if entry.wave is None and entry.action in (Action.EVICT, Action.DELETE):
        entry.wave = 1
    if v.decision == "blocked" or entry.action is Action.BLOCKED:
        return
    if placement is None:
        return  # not recreated: UNMANAGED / TERMINAL / DAEMONSET_ORPHANED say so
    node, why = placement
    if node == NOT_CHECKED:
        return
    entry.replacement_node = node
    if node is None:
        entry.add("REPLACEMENT_UNPLACEABLE", "warning", f"its replacement fits on no remaining node: {why}")
    elif tied:
        names = [node, *tied]
        shown = (", ".join(names[:-1]) + f" and {names[-1]}" if len(names) <= TIED_LISTED
                 else ", ".join(names[:TIED_LISTED]) + f" and {len(names) - TIED_LISTED} more")
        entry.add("REPLACEMENT_NODE_TIED", "info", f"the scheduler scores {shown} equally and picks one of them at "
                  f"random: the plan counts the replacement on {node}")


# -- waves and durations ---------------------------------------------------------------------
def _waves(verdicts, entries, options) -> tuple:
    requested = options.grace_seconds
    waves = {}
    for v in verdicts:
        entry = entries[v.pod.key]
        if entry.wave is None or entry.action is Action.BLOCKED:
            continue
        grace = api_grace_period(v.pod, requested)["seconds"]
        entry.grace = grace
        w = waves.setdefault(entry.wave, {"pods": [], "pdbs": set(), "grace": 0, "ready": 0})
        w["pods"].append(f"{v.pod.namespace}/{v.pod.name}")
        if entry.pdb:
            w["pdbs"].add(entry.pdb)
        # The pod is gone when the kubelet has stopped it: a preStop hook or sidecars can take 2 s more.
        w["grace"] = max(w["grace"], last_kill(v.pod, grace) if grace else 0)
        if entry.pdb and needs_replacement(v.pod):
            w["ready"] = max(w["ready"], STARTUP_SECONDS + _readiness_delay(v.pod))
    out, last = [], max(waves, default=0)
    for n in sorted(waves):
        w = waves[n]
        ready = 0 if n == last else w["ready"]  # nothing waits for the last wave's replacements
        out.append(Wave(n, tuple(w["pods"]), tuple(sorted(w["pdbs"])), w["grace"], ready,
                        w["grace"] + ready + (RETRY_SECONDS if n > 1 else 0)))
    return tuple(out)


def _readiness_delay(pod) -> int:
    """Seconds until a fresh copy of the pod can first report Ready (readiness probe delays)."""
    delay = 0
    for c in pod.spec.get("containers") or ():  # raw: a check reads every pod's, and needs no Container
        probe = c.get("readinessProbe")
        if probe:
            delay = max(delay, int(probe.get("initialDelaySeconds") or 0) + int(probe.get("periodSeconds") or 10))
    return delay


# -- the plan's parts ------------------------------------------------------------------------
def _nodes(snapshot, targets, pods) -> tuple:
    out = []
    for name in targets:
        node = snapshot.node(name)
        mine = [p for p in pods if p.node == name]
        out.append(DrainedNode(name, node is not None, bool(node and node.unschedulable), len(mine),
                               tuple(p.ref for p in mine if any(r.severity is Severity.ERROR
                                                                and r.code in FILTER_CODES for r in p.reasons))))
    return tuple(out)


def _capacity(verdicts, placements, capacity) -> CapacityCheck:
    if capacity is None:
        return CapacityCheck(checked=False, ok=None)
    unplaceable = tuple(Unplaceable(v.pod.namespace, v.pod.name, v.pod.node_name, placements[v.pod.key][1],
                                    capacity.why_not.get(v.pod.key, {}), capacity.not_listed.get(v.pod.key, 0))
                        for v in verdicts if v.pod.key in placements and placements[v.pod.key][0] is None)
    placed_on = capacity.placed_on()
    return CapacityCheck(checked=True, ok=not unplaceable, unplaceable=unplaceable,
                         nodes_considered=len(capacity.nodes) - len(capacity.drained),
                         replacements_placed=sum(placed_on.values()), placed_on=placed_on)


def _budget_use(tracker) -> BudgetUse:
    return BudgetUse(tracker.summary, tracker.never, sum(tracker.waves.values()), len(tracker.waves), tracker.lost)
