"""Preview kube-scheduler's DefaultPreemption for one pod (upstream-algorithms.md §1).

``preview(pod, snapshot, now, replicas=1) -> PreemptionPreview``. Pure: the
snapshot is never modified; ``now`` stands in for a missing ``status.startTime``.

1. Fit without preemption: every node through ``fit.filter_node`` (with pods nominated to the
   node at priority >= the preemptor's added, and without them: both must pass, §1.9).
2. Eligibility (§1.2): a pod being deleted or finished is never scheduled; preemptionPolicy
   Never; a nominated node that already has lower-priority pods terminating by preemption
   (DisruptionTarget/PreemptionByScheduler; terminal pods are not in the scheduler's cache).
3. Candidates (§1.3, §1.5): potential nodes (whose first failing plugin is resolvable: the
   status the scheduler keeps) that have lower-priority pods and fit once all of them are
   removed; every other node is in ``excluded`` with a reason.
4. Victims (§1.5, §1.6): reprieve PDB-violating pods first, then the others, most important
   first (priority, then earlier start); the scheduler's PDB rules (empty selector matches
   nothing, every matching PDB decremented, status.disruptedPods not counted twice).
5. Pick (§1.7): fewest PDB violations, lowest highest-victim priority, lowest sum of
   (priority + 2^31), fewest victims, latest earliest-start among the highest-priority victims.
   All candidates are ranked; exact ties and candidate sampling (§1.4) are reported, since the
   real scheduler may then choose another node.

``replicas`` > 1 places copies one after another; each placement consumes what it took
(victims gone, the copy on its node). A copy that fits without preemption goes to the feasible
node with the most free cpu+memory (an approximation of scoring, which is not modelled).
"""

from dataclasses import replace
from datetime import datetime, timezone

from kubectl_safety.analysis.manifest import stateful_pod
from kubectl_safety.analysis.plans.common import Finding
from kubectl_safety.analysis.risks import incomplete
from kubectl_safety.analysis.plans.preemption import ExcludedNode, Placement, PreemptionCandidate, PreemptionPreview, Preemptor, Sampling, Victim
from kubectl_safety.analysis.scheduling.filters import filter_node, node_decides_alone
from kubectl_safety.analysis.scheduling.kubelet import kubelet_rejects
from kubectl_safety.analysis.scheduling.node_state import NodeState, requests_of
from kubectl_safety.analysis.scheduling.plugins import fit_failures, scheduling_gated
from kubectl_safety.analysis.scheduling.pod_terms import required_terms
from kubectl_safety.analysis.priority import resolve
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.analysis.scheduling.score import score_nodes
from kubectl_safety.analysis.termination import api_grace_period
from kubectl_safety.model.pods import Pod
from kubectl_safety.record import record

MIN_CANDIDATES_PERCENT = 10
MIN_CANDIDATES_ABSOLUTE = 100
MIN_FEASIBLE_SCORED = 100  # below this many nodes the scheduler scores every feasible node
PRIORITY_OFFSET = 2 ** 31
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def preview(pod, snapshot, now, replicas=1, statefulset=None) -> PreemptionPreview:
    """The PreemptionPreview. Raises priority.UnknownPriorityClass like admission. ``statefulset``:
    the manifest ``pod`` is the template of, when it has volumeClaimTemplates: each copy is then
    its ordinal's pod with its claims (``manifest.stateful_pod``)."""
    priority = resolve(pod, snapshot)
    pod = _admitted(pod, priority)
    now = now or snapshot.taken_at or datetime.max.replace(tzinfo=timezone.utc)
    original, notes = snapshot, []
    scheduler = pod.spec.get("schedulerName") or "default-scheduler"
    if scheduler != "default-scheduler":
        notes.append(f"the pod names schedulerName {scheduler}; this preview models kube-scheduler's default profile")
    if snapshot.has_pod(*pod.key):
        if pod.node_name:
            notes.append(f"the pod is already bound to {pod.node_name}; previewed as if it were pending")
            pod = _with_spec(pod, nodeName=None)
        snapshot = snapshot.without_pods([pod.key])
    placements = []
    for i in range(max(1, replicas)):
        if statefulset is not None:
            copy, snapshot = stateful_pod(pod, statefulset, i, snapshot)
        else:
            copy = pod if replicas <= 1 else _renamed(pod, i + 1)
        result = _place(copy, snapshot, now)
        placements.append(result)
        if result["node"] is None or i + 1 >= replicas:
            break
        snapshot = _apply(snapshot, copy, result)  # for the next copy: the last one's is not read
    return _report(pod, priority, placements, replicas, original, notes)


# -- one placement --------------------------------------------------------------------------

def _place(pod, snapshot, now) -> dict:
    if pod.node_name:
        return _bound(pod, snapshot)
    prio = pod.priority_value
    gates = scheduling_gated(pod)
    if gates:  # PreEnqueue: never scheduled, so it never preempts either
        return {"pod": pod, "feasible": [], "victims": [], "candidates": [], "excluded": [], "potential": 0,
                "eligible": False, "eligibility": f"not scheduled while it has scheduling gates ({', '.join(gates)})",
                "outcome": "gated", "node": None}
    skipped = _never_scheduled(pod)
    if skipped:
        return {"pod": pod, "feasible": [], "victims": [], "candidates": [], "excluded": [], "potential": 0,
                "eligible": False, "eligibility": skipped, "outcome": "not-scheduled", "node": None}
    nominated = _nominated(snapshot, pod, prio)
    failures = {n.name: _filter(pod, n, snapshot, None, nominated) for n in snapshot.nodes}
    feasible = [n for n, f in failures.items() if not f]
    base = {"pod": pod, "feasible": feasible, "victims": [], "candidates": [], "excluded": [],
            "eligible": None, "eligibility": "", "outcome": "", "node": None, "potential": 0}
    if feasible:
        nominated_fits = pod.nominated_node_name in feasible  # the scheduler tries it first
        best = [pod.nominated_node_name] if nominated_fits else \
            score_nodes(pod, [snapshot.node(n) for n in feasible], snapshot).best
        base.update(outcome="fits", node=best[0], tied=best)
        base["excluded"] = [_excluded(n, f) for n, f in failures.items() if f]
        return base
    eligible, why, waiting = _eligibility(pod, prio, snapshot, failures)
    base.update(eligible=eligible, eligibility=why)
    if not eligible:
        base.update(outcome="waiting" if waiting else "not-eligible", node=waiting,
                    excluded=[_excluded(n, f) for n, f in failures.items()])
        return base
    candidates, excluded, potential = [], [], 0
    for node in snapshot.nodes:
        node_failures = failures[node.name]
        if not node_failures[0].resolvable:  # the status is the first failing plugin's (as upstream)
            excluded.append(_excluded(node.name, node_failures))
            continue
        potential += 1
        found = _select_victims(pod, prio, node, snapshot, nominated, now)
        (excluded if isinstance(found, ExcludedNode) else candidates).append(found)
    candidates.sort(key=lambda c: c["sortKey"])
    base.update(candidates=candidates, excluded=excluded, potential=potential,
                outcome="preempt" if candidates else "unschedulable")
    if candidates:
        best = candidates[0]
        base.update(node=best["node"], victims=list(best["candidate"].victims))
    return base


def _bound(pod, snapshot) -> dict:
    """A pod created with ``spec.nodeName``: the scheduler never sees it (its queue takes only
    unassigned pods) and never preempts for it; the kubelet of that node admits or rejects it."""
    name = pod.node_name
    node = snapshot.node(name)
    result = {"pod": pod, "feasible": [], "victims": [], "candidates": [], "excluded": [], "potential": 0,
              "eligible": False, "outcome": "rejected", "node": None}
    bypass = f"spec.nodeName {name} bypasses the scheduler, so nothing is preempted"
    if node is None:
        return dict(result, eligibility=f"{bypass}; no node {name} exists: the pod garbage collector deletes the pod")
    failures = kubelet_rejects(pod, node, snapshot)
    if failures:
        return dict(result, excluded=[_excluded(name, failures)],
                    eligibility=f"{bypass}; the kubelet of {name} rejects it and the pod fails")
    return dict(result, feasible=[name], outcome="bound", node=name,
                eligibility=f"{bypass}; the kubelet of {name} admits it")


def _filter(pod, node, snapshot, state, nominated):
    """RunFilterPluginsWithNominatedPods: with higher/equal nominated pods added, then without."""
    extra = nominated.get(node.name)
    if extra:
        with_nominated = (state or NodeState.from_snapshot(node, snapshot)).copy()
        for p in extra:
            with_nominated.add(p)
        failures = filter_node(pod, node, snapshot, with_nominated)
        if failures:
            return failures
    return filter_node(pod, node, snapshot, state)


def _nominated(snapshot, pod, prio) -> dict:
    """node -> pending pods nominated there with priority >= the preemptor's (§1.9)."""
    out = {}
    for p in snapshot.pods:
        if (not p.node_name and p.nominated_node_name and p.key != pod.key and not p.is_terminal
                and p.priority_value >= prio):
            out.setdefault(p.nominated_node_name, []).append(_with_spec(p, nodeName=p.nominated_node_name))
    return out


def _eligibility(pod, prio, snapshot, failures):
    """PodEligibleToPreemptOthers: (eligible, reason, nominated node it waits for or None)."""
    if pod.preemption_policy == "Never":
        return False, "not eligible due to preemptionPolicy=Never", None
    nom = pod.nominated_node_name
    if nom and snapshot.node(nom) is not None:
        first = (failures.get(nom) or [None])[0]  # the scheduler stops at the first failing plugin
        if first is not None and not first.resolvable:
            return True, f"eligible: the nominated node {nom} cannot fit the pod at all, so it preempts again", None
        for p in snapshot.pods_on(nom):  # the scheduler's cache: terminal pods are not in it
            if not p.is_terminal and p.priority_value < prio and terminating_by_preemption(p):
                return False, (f"not eligible due to a terminating pod on the nominated node {nom} "
                               f"({p.namespace}/{p.name} is being preempted): the scheduler waits for it"), nom
    return True, "eligible (preemptionPolicy PreemptLowerPriority)", None


def _never_scheduled(pod) -> str:
    """Why the scheduler never takes ``pod`` ("" when it does): ``skipPodSchedule`` skips a pod
    being deleted, and its pod informer never lists a finished one (Succeeded, Failed)."""
    if pod.is_terminating:
        return "not scheduled: the pod is being deleted (deletionTimestamp set), so it never preempts either"
    if pod.is_terminal:
        return f"not scheduled: the pod has finished (phase {pod.phase}), so it never preempts either"
    return ""


def terminating_by_preemption(pod) -> bool:
    cond = pod.condition_obj("DisruptionTarget") or {}
    return (pod.is_terminating and cond.get("status") == "True"
            and cond.get("reason") == "PreemptionByScheduler")


# -- step 4: victims on one node ----------------------------------------------------------------

def _select_victims(pod, prio, node, snapshot, nominated, now):
    """SelectVictimsOnNode: a candidate dict, or the excluded entry for the node."""
    state = NodeState.from_snapshot(node, snapshot)
    lower = [p for p in state.pods.values() if p.priority_value < prio]
    if not lower:
        failures = _filter(pod, node, snapshot, None, nominated)
        return _excluded(node.name, failures, "no lower-priority pods to preempt",
                         _equal_hint(pod, prio, node, snapshot, nominated))
    for p in lower:
        state.remove(p)
    remaining = _filter(pod, node, snapshot, state, nominated)
    if remaining:
        return _excluded(node.name, remaining, _why_not_even_empty(remaining, len(lower)),
                         _equal_hint(pod, prio, node, snapshot, nominated))
    lower.sort(key=lambda p: (importance(p, now), p.namespace, p.name))  # ties: the cache's order (unknown)
    violating, others = _split_by_pdb(lower, snapshot)
    victims = []
    fails = _reprieve_test(pod, node, snapshot, nominated)
    for group, is_violating in ((violating, True), (others, False)):
        for p, pdbs in group:
            state.add(p)
            if fails(state):
                state.remove(p)
                victims.append((p, is_violating and pdbs))
    if violating and others:  # re-sorted like upstream: equally important victims keep their reprieve order
        victims.sort(key=lambda v: importance(v[0], now))
    return _candidate(node.name, victims, now)


def _reprieve_test(pod, node, snapshot, nominated):
    """``state -> failures`` of ``pod`` on ``node`` (a potential node: its node-static plugins
    passed). A pod only its node decides (``node_decides_alone``), with nothing nominated here,
    needs only NodePorts and NodeResourcesFit: the other plugins cannot change their answer as
    pods come back."""
    if nominated.get(node.name) or not node_decides_alone(pod, snapshot):
        return lambda state: _filter(pod, node, snapshot, state, nominated)
    wants = _Wants(requests_of(pod), pod.host_ports)
    return lambda state: fit_failures(pod, node, state, wants)


@record(slots=False)
class _Wants:
    """What ``fit_failures`` reads of the pod (its PreFilter state's requests and host ports)."""

    requests: dict
    ports: list


def _why_not_even_empty(failures, count) -> str:
    codes = {f.code for f in failures}
    if "pod-affinity" in codes:
        return "required pod affinity is satisfied only by lower-priority pods that preemption would remove"
    if codes & {"pod-anti-affinity", "existing-anti-affinity", "topology-spread"}:
        return (f"still fails after removing all {count} lower-priority pods: pods on other nodes or of "
                "higher priority cause it, and preemption never crosses nodes")
    return f"does not fit even after removing all {count} lower-priority pods"


def _equal_hint(pod, prio, node, snapshot, nominated) -> str:
    """Say so when pods of exactly the preemptor's priority are what blocks it."""
    state = NodeState.from_snapshot(node, snapshot)
    equal = [p for p in state.pods.values() if p.priority_value == prio]
    if not equal:
        return ""
    for p in list(state.pods.values()):
        if p.priority_value <= prio:
            state.remove(p)
    if _filter(pod, node, snapshot, state, nominated):
        return ""
    return (f"; it would fit without the {len(equal)} pod(s) of equal priority {prio}, "
            "but equal priority is never preempted")


def importance(pod, now):
    """``MoreImportantPod`` as a sort key, most important first: higher priority, then earlier
    start (nil = now)."""
    return (-pod.priority_value, pod.start_time or now)


def _split_by_pdb(pods, snapshot):
    """filterPodsWithPDBViolation: ([(pod, violated PDB names)], [(pod, [])]), order kept."""
    allowed = {}
    violating, others = [], []
    for p in pods:
        broken = []
        if p.labels:
            for pdb in snapshot.pdbs_for(p):  # an empty selector selects nothing here, unlike eviction's
                if pdb.selector.is_empty or p.name in pdb.disrupted_pods:
                    continue
                left = allowed.get((pdb.namespace, pdb.name), pdb.disruptions_allowed) - 1
                allowed[(pdb.namespace, pdb.name)] = left
                if left < 0:
                    broken.append(pdb.name)
        (violating if broken else others).append((p, broken))
    return violating, others


def _candidate(node, victims, now) -> dict:
    top = victims[0][0].priority_value
    violations = sum(1 for _, pdbs in victims if pdbs)
    earliest = min((p.start_time or now) for p, _ in victims if p.priority_value == top)
    total = sum(p.priority_value + PRIORITY_OFFSET for p, _ in victims)
    return {
        "node": node,
        "candidate": PreemptionCandidate(node, tuple(_victim(p, node, pdbs) for p, pdbs in victims), violations,
                                         top, total, _iso(earliest)),
        "sortKey": (violations, top, total, len(victims), -(earliest - EPOCH).total_seconds(), node),
    }


def _victim(p, node, pdbs) -> Victim:
    return Victim(p.namespace, p.name, node, p.priority_value, bool(pdbs), tuple(pdbs or ()), _iso(p.start_time),
                  p.is_terminating, api_grace_period(p)["seconds"])


# -- helpers ------------------------------------------------------------------------------------

def _admitted(pod, priority):
    """The pod as admission would store it: spec.priority and preemptionPolicy filled in."""
    if pod.priority is not None and pod.preemption_policy:
        return pod
    return _with_spec(pod, priority=priority["value"], preemptionPolicy=priority["preemptionPolicy"])


def _with_spec(pod, **changes):
    raw = dict(pod.raw)
    spec = dict(raw.get("spec") or {})
    for k, v in changes.items():
        if v is None:
            spec.pop(k, None)
        else:
            spec[k] = v
    raw["spec"] = spec
    return Pod(raw)


def _renamed(pod, index):
    raw = dict(pod.raw)
    meta = dict(raw.get("metadata") or {})
    meta["name"] = f"{meta.get('name') or meta.get('generateName', 'pod-').rstrip('-')}-{index}"
    meta["uid"] = f"preview-{meta['name']}"
    raw["metadata"] = meta
    return Pod(raw)


def _apply(snapshot, pod, result):
    """The snapshot after a placement: victims gone, the pod bound to its node."""
    gone = {(v.namespace, v.name) for v in result["victims"]}
    placed = _with_spec(pod, nodeName=result["node"])
    return snapshot.replace(pods=[p for p in snapshot.pods if p.key not in gone] + [placed])


def _excluded(node, failures, why=None, hint="") -> ExcludedNode:
    """An excluded node: ``reason`` (one line), the failing plugins and their messages."""
    detail = "; ".join(f.message for f in failures)
    reason = (f"{why} ({detail})" if why and detail else why or detail) + hint
    return ExcludedNode(node, reason, bool(hint), tuple(sorted({f.plugin for f in failures})), tuple(failures))


def _iso(value):
    return value.isoformat().replace("+00:00", "Z") if value else None


# -- report ------------------------------------------------------------------------------------

def _outcome(placements, replicas) -> str:
    placed = [p for p in placements if p["node"]]
    if replicas <= 1 or not placed:
        return placements[0]["outcome"]
    if len(placed) < replicas:
        return "partial"
    if all(p["outcome"] == "bound" for p in placed):
        return "bound"
    return "preempt" if any(p["outcome"] == "preempt" for p in placed) else "fits"


def _report(pod, priority, placements, replicas, snapshot, notes) -> PreemptionPreview:
    first = placements[0]
    candidates = tuple(replace(c["candidate"], rank=rank) for rank, c in enumerate(first["candidates"], 1))
    victims = tuple(v for p in placements for v in p["victims"])
    placed = [p for p in placements if p["node"]]
    if len(placements) < max(1, replicas):
        notes.append(f"stopped after copy {len(placements)}: it cannot be placed, so later copies are not previewed")
    report = PreemptionPreview(
        pod=Preemptor(pod.namespace, pod.name, priority["value"], priority["className"], priority["source"],
                      pod.preemption_policy, pod.nominated_node_name or None, pod_requests(pod)),
        replicas=max(1, replicas), placed=len(placed), outcome=_outcome(placements, replicas),
        fits_without_preemption=all(p["outcome"] in ("fits", "bound") for p in placements),
        feasible_nodes=tuple(first["feasible"]), eligible=first["eligible"], eligibility=first["eligibility"],
        node=first["node"], victims=victims, candidates=candidates, excluded=tuple(first["excluded"]),
        sampling=_sampling(first),
        placements=tuple(_placement(i, p) for i, p in enumerate(placements, 1)) if replicas > 1 else (),
        notes=tuple(notes))
    return replace(report, findings=tuple(_findings(pod, priority, placements, snapshot, report)))


def _placement(index, p) -> Placement:
    return Placement(index, p["pod"].name, p["outcome"], p["node"], tuple(p["victims"]), len(p["candidates"]))


def _sampling(result) -> Sampling:
    """How the scheduler's candidate sampling and ties could change the pick (§1.4, §1.7)."""
    potential, cands = result["potential"], result["candidates"]
    if result["outcome"] in ("bound", "rejected"):
        return Sampling(0, 0, (), False, "spec.nodeName: no scheduling, so no sampling and no tie")
    if result["outcome"] == "fits":
        tied = result["tied"] if len(result["tied"]) > 1 else []
        sampled = len(result["feasible"]) > MIN_FEASIBLE_SCORED
        note = f"no preemption: the Score stage picks {result['node']} of {len(result['feasible'])} feasible node(s)"
        if tied:
            note += f"; it ties with {', '.join(n for n in tied if n != result['node'])} (the scheduler picks one)"
        if sampled:
            note += f"; with more than {MIN_FEASIBLE_SCORED} feasible nodes the scheduler scores a sample of them"
        return Sampling(0, 0, tuple(tied), bool(tied) or sampled, note)
    wanted = min(max(potential * MIN_CANDIDATES_PERCENT // 100, MIN_CANDIDATES_ABSOLUTE), potential)
    tied = [c["node"] for c in cands if c["sortKey"][:5] == cands[0]["sortKey"][:5]] if cands else []
    may_differ = len(tied) > 1 or (len(cands) > wanted)
    if len(tied) > 1:
        shown = ", ".join(tied[:5]) + (f" and {len(tied) - 5} more" if len(tied) > 5 else "")
        note = (f"{len(tied)} candidates tie on every criterion ({shown}): the scheduler picks one "
                "of them arbitrarily (map order); the first by name is shown")
    elif len(cands) > wanted:
        note = (f"the scheduler dry-runs at least {wanted} of {potential} potential nodes from a random offset "
                "and may stop before seeing the best candidate shown here")
    else:
        note = "deterministic: the scheduler examines every potential node and there is no tie"
    return Sampling(potential, wanted, tuple(tied), may_differ, note)


def _findings(pod, priority, placements, snapshot, report) -> list:
    unheld = incomplete(snapshot, "preemption")
    out = [Finding(unheld[0], "error", unheld[1])] if unheld else []
    prio = priority["value"]
    lower_targets = _affinity_targets(pod, snapshot, prio)
    if lower_targets:
        out.append(Finding("PREEMPTOR_AFFINITY_TO_LOWER_PRIORITY", "warning",
                           f"the pod's required pod affinity matches lower-priority pods ({', '.join(lower_targets[:5])}); "
                           "preemption may remove them, and nodes where only they satisfy the affinity are not "
                           "considered for preemption"))
    broken = {}
    for v in report.victims:
        for name in v.pdbs:
            broken.setdefault(f"{v.namespace}/{name}", []).append(v.name)
    for name, pods in sorted(broken.items()):
        out.append(Finding("PDB_VIOLATED_BY_PREEMPTION", "warning",
                           f"preemption will violate PodDisruptionBudget {name} (evicting {', '.join(pods)}): "
                           "the scheduler deletes victims directly, PDBs only influence the choice"))
    slow = [v for v in report.victims if not v.terminating]
    if slow:
        longest = max(slow, key=lambda v: v.grace_period_seconds)
        out.append(Finding("VICTIM_GRACE_PERIOD", "warning" if longest.grace_period_seconds > 60 else "info",
                           f"the preemptor waits for {len(slow)} victim(s) to terminate: up to "
                           f"{longest.grace_period_seconds} s ({longest.namespace}/{longest.name}); "
                           "meanwhile another node may free up and the pod may land elsewhere"))
    blocked = [e.node for e in report.excluded if e.equal_priority_blocks]
    if blocked and not report.candidates:
        out.append(Finding("EQUAL_PRIORITY_BLOCKS", "warning",
                           f"pods of the same priority ({prio}) are what keeps the pod off {len(blocked)} node(s) "
                           f"({', '.join(blocked[:5])}): equal priority is never preempted; a higher class or "
                           "more capacity is needed"))
    if report.eligible is False and pod.preemption_policy == "Never":
        out.append(Finding("NON_PREEMPTING", "info",
                           "preemptionPolicy Never: the pod waits in the queue ahead of lower priorities but never "
                           "preempts; it can itself still be preempted"))
    if report.sampling.may_differ:
        out.append(Finding("SCHEDULER_MAY_DIFFER", "info", report.sampling.note))
    if priority["source"].startswith("spec.priority (no class)"):
        out.append(Finding("PRIORITY_WITHOUT_CLASS", "info",
                           "spec.priority is set without a priorityClassName"))
    return out


def _affinity_targets(pod, snapshot, prio) -> list:
    terms = required_terms(pod, "podAffinity")
    if not terms:
        return []
    return sorted(f"{p.namespace}/{p.name}" for p in snapshot.pods
                  if p.node_name and not p.is_terminal and p.priority_value < prio
                  and all(t.matches(p) for t in terms))
