"""Drain planner: what draining nodes will do to every pod, wave by wave (pure, no I/O).

``plan_drain(snapshot, node_names, options, now)`` returns a ``DrainPlan`` report:

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

from dataclasses import dataclass

from kubectl_safety.analysis.budgets import BudgetTracker, summary as pdb_summary
from kubectl_safety.analysis.deletion import holding_finalizers, pod_gc_force_deletes
from kubectl_safety.analysis.eviction import FILTER_CODES, PodVerdict, eviction_rules, kubectl_filters
from kubectl_safety.analysis.node_state import node_state
from kubectl_safety.analysis.risks import NODE_WAY_OUT, RiskList, is_safe, obj, pod_obj
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.analysis.scheduling.volumes import claim_names
from kubectl_safety.analysis.termination import api_grace_period, last_kill
from kubectl_safety.model.constants import API_VERSION

RETRY_SECONDS = 5  # kubectl's (and our) eviction retry delay: a wave starts up to this late
STARTUP_SECONDS = 10  # assumed time for a replacement to be scheduled and started
NOT_CHECKED = ""  # placement of a replacement when capacity is not checked: assumed to start


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
    check_capacity: bool = True  # place every replacement on a remaining node
    timeout: float = 0  # --timeout in seconds (0: none)
    accept_risks: frozenset = frozenset()  # risk codes accepted by --accept-risk


def plan_drain(snapshot, node_names, options=None, now=None, shared=None) -> dict:
    """The DrainPlan report for draining ``node_names`` (in that order). ``shared``: a
    ``SharedPlanning`` of this snapshot, when many plans are made of it (same report, less work)."""
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
    entries = {v.pod.key: _entry(v) for v in verdicts}
    for key, node in sorted((capacity.returns_to if capacity else {}).items()):
        _add(entries[key], "REPLACEMENT_RETURNS_TO_NODE", "warning", "it tolerates node.kubernetes.io/unschedulable: "
             f"its replacement can be scheduled back onto {node} (cordoned)")
    _assign_waves(leaving, placements, entries, trackers)
    for v in leaving:
        _finish_entry(entries[v.pod.key], v, placements.get(v.pod.key))
    waves = _waves(verdicts, entries, options)
    report = _report(snapshot, targets, verdicts, entries, trackers, placements, waves, capacity, options, index)
    risks = _risks(snapshot, targets, verdicts, entries, trackers, placements, capacity, options, report, now)
    report["risks"] = risks.judged(options.accept_risks)
    report["safe"] = is_safe(report["risks"])
    report["losses"] = _losses(verdicts, entries)
    return report


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
            "priority": pod.priority_value, "action": action, "reasons": [r.to_dict() for r in v.reasons],
            "pdb": _ref(v.pdb) if v.pdb is not None else None,
            "wave": None, "replacementNode": None, "gracePeriodSeconds": None}


def _add(entry, code, severity, message):
    entry["reasons"].append({"code": code, "severity": severity, "message": message})


# -- PodDisruptionBudget accounting ----------------------------------------------------------
class PodIndex:
    """Pods of a namespace by (label, value), built on first use: selector matches without full scans."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self._by_value = {}  # (namespace, label key) -> {value: pods}
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
        """A superset of the pods ``selector`` matches (the smallest exact-label bucket)."""
        if selector is None:
            return []
        exact = [(k, next(iter(v))) for k, op, v in selector.requirements if op == "In" and len(v) == 1]
        if not exact:
            return self.snapshot.pods_in(namespace)
        return min((self._values(namespace, k).get(v, []) for k, v in exact), key=len)

    def _values(self, namespace, key) -> dict:
        """{value: the namespace's pods with that value of label ``key``}, built on first use (a
        selector names few keys; a pod has many labels)."""
        index = self._by_value.get((namespace, key))
        if index is None:
            index = self._by_value[(namespace, key)] = {}
            for pod in self.snapshot.pods_in(namespace):
                value = pod.labels.get(key)
                if value is not None:
                    index.setdefault(value, []).append(pod)
        return index

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

    def summary(self, pdb) -> dict:
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
    if node == NOT_CHECKED:
        return
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
        # The pod is gone when the kubelet has stopped it: a preStop hook or sidecars can take 2 s more.
        w["gracePeriodSeconds"] = max(w["gracePeriodSeconds"], last_kill(v.pod, grace) if grace else 0)
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
    for c in pod.spec.get("containers") or ():  # raw: a check reads every pod's, and needs no Container
        probe = c.get("readinessProbe")
        if probe:
            delay = max(delay, int(probe.get("initialDelaySeconds") or 0) + int(probe.get("periodSeconds") or 10))
    return delay


# -- report ----------------------------------------------------------------------------------
def _report(snapshot, targets, verdicts, entries, trackers, placements, waves, capacity, options, index) -> dict:
    pods = [entries[v.pod.key] for v in verdicts]
    counts = {}
    for e in pods:
        counts[e["action"]] = counts.get(e["action"], 0) + 1
    unplaceable = [{"namespace": v.pod.namespace, "name": v.pod.name, "node": v.pod.node_name,
                    "reason": placements[v.pod.key][1], "nodes": capacity.why_not.get(v.pod.key, {}),
                    "nodesNotListed": capacity.not_listed.get(v.pod.key, 0)}
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
        "safe": None,  # set from the risks
        "nodes": nodes,
        "options": {"ignoreDaemonsets": options.ignore_daemonsets, "deleteEmptydirData": options.delete_emptydir_data,
                    "force": options.force, "gracePeriod": options.grace_period,
                    "disableEviction": options.disable_eviction,
                    "skipWaitForDeleteTimeout": options.skip_wait_for_delete_timeout,
                    "podSelector": str(options.pod_selector) if options.pod_selector is not None else None},
        "summary": {"pods": len(pods), **{a: counts.get(a, 0) for a in ACTIONS}},
        "pods": pods,
        "pdbs": [t.to_dict() for _, t in sorted(trackers.items())],
        "capacity": ({**capacity.summary(), "checked": True, "ok": not unplaceable, "unplaceable": unplaceable}
                     if capacity else {"checked": False, "ok": None, "unplaceable": []}),
        "waves": waves,
        "estimatedSeconds": sum(w["estimatedSeconds"] for w in waves),
        "warnings": warnings,
        "takenAt": snapshot.taken_at.isoformat() if snapshot.taken_at else None,
    }


ACTIONS = ("evict", "delete", "wait", "skip", "blocked")


def _plan_warnings(snapshot, verdicts, targets, index) -> list:
    """Plan-wide findings: PDBs selecting nothing in the affected namespaces, missing nodes, and
    volumes not judged because storage could not be read."""
    out = []
    unread = snapshot.storage_unread
    claims = [(v.pod, claim_names(v.pod)) for v in verdicts] if unread else []
    claims = [f"{pod.namespace}/{pod.name} ({', '.join(names)})" for pod, names in claims if names]
    if claims:
        kinds = ", ".join(f"{resource} ({why})" for resource, why in sorted(unread.items()))
        out.append({"code": "STORAGE_NOT_JUDGED", "severity": "warning",
                    "message": f"volumes not checked, {kinds} could not be read: whether these pods' claims "
                               f"can follow them is not judged: {'; '.join(claims)}"})
    for name in targets:
        if snapshot.node(name) is None:
            out.append({"code": "NODE_NOT_FOUND", "severity": "critical", "message": f'node "{name}" not found'})
    for ns in sorted({v.pod.namespace for v in verdicts if snapshot.pods_complete_in(v.pod.namespace)}):
        for b in index.selecting_nothing(ns):
            out.append({"code": "PDB_SELECTS_NOTHING", "severity": "warning",
                        "message": f"PDB {ns}/{b.name} selects no pod (selector {b.selector}): "
                                   "it protects nothing; check its labels"})
    return out


# -- the SAFE contract -----------------------------------------------------------------------
def _risks(snapshot, targets, verdicts, entries, trackers, placements, capacity, options, report, now) -> RiskList:
    risks = RiskList()
    by_key = {v.pod.key: v for v in verdicts}
    for name in targets:
        if snapshot.node(name) is None:
            risks.add("NODE_NOT_FOUND", f'node "{name}" not found', [obj("Node", "", name)])
    _node_risks(snapshot, targets, entries, risks, now)
    _finalizer_risks(snapshot, entries, risks)
    for e in report["pods"]:
        if e["action"] != "blocked":
            continue
        codes = [r["code"] for r in e["reasons"] if r["severity"] == "critical"]
        pdb = [obj("PodDisruptionBudget", *e["pdb"].split("/"))] if e["pdb"] else []
        if "PDB_NEVER_ALLOWS" in codes or "PDB_EXHAUSTED" in codes:
            code = "PDB_NEVER_ALLOWS" if "PDB_NEVER_ALLOWS" in codes else "PDB_EXHAUSTED"
            message = next(r["message"] for r in e["reasons"] if r["code"] == code)
            risks.add(code, message, pdb + [pod_obj(e)])
        else:
            risks.add("POD_NOT_EVICTABLE", "; ".join(r["message"] for r in e["reasons"] if r["severity"] == "critical"),
                      [pod_obj(e)])
    for u in report["capacity"]["unplaceable"]:
        risks.add("REPLACEMENT_UNPLACEABLE", f"the replacement of {u['namespace']}/{u['name']} fits on no node: "
                  f"{u['reason']}", [pod_obj(u)], nodes=u["nodes"], nodesNotListed=u["nodesNotListed"])
    for key, node in sorted((capacity.returns_to if capacity else {}).items()):
        v = by_key[key]
        risks.add("REPLACEMENT_RETURNS_TO_NODE",
                  f"{v.pod.namespace}/{v.pod.name} tolerates node.kubernetes.io/unschedulable: its replacement can "
                  f"be scheduled back onto {node} (cordoned), so the node is not emptied",
                  [pod_obj(v.pod), obj("Node", "", node)])
    _bypass_risks(snapshot, verdicts, entries, trackers, risks)
    if options.timeout and report["estimatedSeconds"] > options.timeout:
        risks.add("DRAIN_TIMEOUT", f"the plan needs about {report['estimatedSeconds']}s, more than --timeout "
                  f"{options.timeout:g}s: the drain stops part way (the nodes stay cordoned)",
                  [obj("Node", "", n) for n in targets])
    return risks


def _node_risks(snapshot, targets, entries, risks, now):
    """Pods evicted from a node that cannot confirm their deletion stay Terminating."""
    for name in targets:
        node = snapshot.node(name)
        if node is None:
            continue
        state = node_state(node, now)
        if state["state"] == "Ready":
            continue
        if pod_gc_force_deletes(node, state):
            continue  # no kubelet needed; finalizers are judged on their own
        going = [e for e in entries.values() if e["node"] == name and e["action"] in ("evict", "delete", "wait")]
        pod = {e["name"]: e for e in going}
        alive = [e for e in going if not (snapshot.pod(e["namespace"], e["name"]) or _NONE).is_terminal]
        if not alive:
            continue
        code = "NODE_UNREACHABLE" if state["state"] == "Unknown" else "NODE_NOT_READY"
        risks.add(code, f"node {name} is {state['message']}: {len(alive)} evicted pod(s) stay Terminating until its "
                  f"kubelet confirms, so the drain does not finish. Way out: {NODE_WAY_OUT}",
                  [obj("Node", "", name)] + [pod_obj(e) for e in alive if e["name"] in pod])


def _finalizer_risks(snapshot, entries, risks):
    """Pods asked to go that a finalizer keeps: kubectl waits for an object that stays."""
    for e in entries.values():
        if e["action"] not in ("evict", "delete", "wait"):
            continue
        pod = snapshot.pod(e["namespace"], e["name"])
        held = holding_finalizers(pod) if pod is not None else []
        if held:
            risks.add("POD_HELD_BY_FINALIZER", f"{e['namespace']}/{e['name']} has finalizer(s) {', '.join(held)}: "
                      "the pod object stays Terminating until they are removed, so the drain does not finish",
                      [pod_obj(e)])


class _NONE:
    is_terminal = False


def _bypass_risks(snapshot, verdicts, entries, trackers, risks):
    """--disable-eviction: deletions beyond what each PDB allows (or of pods several PDBs select)."""
    by_pdb = {}
    for v in verdicts:
        if v.eviction != "delete" or entries[v.pod.key]["action"] != "delete" or v.pod.is_terminal:
            continue
        budgets = snapshot.pdbs_for(v.pod)
        if len(budgets) > 1:
            risks.add("PDB_BYPASSED", f"{v.pod.namespace}/{v.pod.name} is selected by {len(budgets)} PDBs: the "
                      "Eviction API would refuse it; --disable-eviction deletes it anyway",
                      [obj("PodDisruptionBudget", b.namespace, b.name) for b in budgets] + [pod_obj(v.pod)])
        elif budgets and v.pod.is_ready and not v.pod.is_terminating:
            by_pdb.setdefault(_ref(budgets[0]), (budgets[0], []))[1].append(v)
    for ref, (pdb, pods) in sorted(by_pdb.items()):
        tracker = trackers.get(ref)
        allowed = tracker.allowed if tracker else pdb.disruptions_allowed
        never = tracker.never if tracker else None
        if len(pods) <= allowed and not never:
            continue
        why = f"it never allows a disruption ({never})" if never else f"it allows {allowed} disruption(s)"
        risks.add("PDB_BYPASSED", f"--disable-eviction deletes {len(pods)} healthy pod(s) of PDB {ref}, but {why}: "
                  "the budget is broken; drop --disable-eviction to drain within it",
                  [obj("PodDisruptionBudget", pdb.namespace, pdb.name)] + [pod_obj(v.pod) for v in pods])


def _losses(verdicts, entries) -> dict:
    """What the flags kubectl requires accept: emptyDir data and unmanaged pods that go for good."""
    out = {"emptyDirData": [], "unmanagedPods": []}
    for v in verdicts:
        e = entries[v.pod.key]
        if e["action"] not in ("evict", "delete", "wait"):
            continue
        codes = {r["code"] for r in e["reasons"]}
        ref = f"{v.pod.namespace}/{v.pod.name}"
        if "LOCAL_STORAGE" in codes:
            out["emptyDirData"].append(ref)
        if "UNMANAGED" in codes:
            out["unmanagedPods"].append(ref)
    return out
