"""What an engine's drain does, node by node: a ``DrainProfile`` run over ``analysis.drain.plan_drain``.

``simulate(profile, snapshot, node_names, now)`` batches the nodes as the engine does, plans each batch
with the drain planner (kubectl drain's filters and the Eviction API with the flags the engine's drain
amounts to; the pods the engine's own rules decide are left out of that plan and judged here), then
applies the engine's order groups, timeout and what it does at the timeout. Each node gets one outcome:

- ``COMPLETES``: every pod leaves within the engine's limits, no PDB bypassed;
- ``STALLS``: the engine waits with no end (a pod that cannot leave and no timeout);
- ``FAILS``: the engine gives up (kubectl's filters refuse the node, or the timeout with no force): what it
  leaves behind is said;
- ``FORCES``: the engine goes past a PDB or a grace period: the pods it deletes or kills, and the Ready
  pods each workload falls to.

Times are seconds from the start of that node's drain, from the plan's wave estimates. A batch starts
when the previous one is done; each batch is planned on the snapshot (the previous batch's replacements
are taken to be Ready again).
"""

from dataclasses import replace
from enum import Enum
from typing import Optional, Tuple

from kubectl_safety.analysis.drain import SharedPlanning, plan_drain
from kubectl_safety.analysis.eviction import FILTER_CODES, local_volumes
from kubectl_safety.analysis.plans.common import Action, Severity
from kubectl_safety.analysis.profiles.base import AtTimeout, Decision, GraceRule, Order
from kubectl_safety.analysis.room import Room, proved_plan
from kubectl_safety.analysis.termination import api_grace_period, last_kill
from kubectl_safety.record import record


class Outcome(str, Enum):
    """A node's outcome, from best to worst (an engine's verdict is its nodes' worst)."""

    COMPLETES = "COMPLETES"
    STALLS = "STALLS"
    FAILS = "FAILS"
    FORCES = "FORCES"


WORST = {o: i for i, o in enumerate(Outcome)}
POD_ACTIONS = ("evict", "delete", "skip", "wait", "blocked", "refused", "forced")  # EnginePod.action's values


@record
class EnginePod:
    """One pod of a node: what the engine does to it and when (seconds from the node's drain start).

    ``action``: evict | delete | skip (left in place) | wait (the engine waits for it) | blocked (cannot
    leave) | refused (the drain refuses the node for it) | forced (deleted or killed past its PDB or grace).
    """

    namespace: str
    name: str
    action: str
    at_seconds: Optional[int]
    code: str
    reason: str
    group: Optional[str] = None

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@record
class Availability:
    """A workload whose pods the engine forces out: its Ready pods now and what they fall to."""

    workload: str
    ready: int
    falls_to: int


@record
class NodeOutcome:
    name: str
    batch: int
    outcome: Outcome
    at_seconds: Optional[int]
    reason: str
    setting: str  # the setting that decides the outcome ('' : none)
    pods: Tuple[EnginePod, ...]
    left_in_place: Tuple[str, ...]
    local_data_lost: Tuple[str, ...]
    leaves: str  # FAILS: what the engine leaves behind
    availability: Tuple[Availability, ...]
    surged: Tuple[str, ...] = ()  # a surge ahead (drain.surge): the workloads it replaces first
    not_surged: Tuple[Tuple[str, str], ...] = ()  # and (pod or risk code, why) of what it cannot
    surge_refused: bool = False  # a surge risk refuses ``drain --surge`` of the node: nothing is surged


@record
class Batch:
    number: int
    nodes: Tuple[str, ...]
    seconds: Optional[int]  # until its last node is done (None: it never is)


@record(slots=False)
class EngineOutcome:
    profile: object  # the DrainProfile
    verdict: Outcome
    nodes: Tuple[NodeOutcome, ...]
    batches: Tuple[Batch, ...]
    halts_after: Optional[int]  # the batch after which the engine stops (a node FAILS and the engine halts)
    seconds: Optional[int]  # the whole upgrade (None: it never ends)
    surge: Optional[tuple] = None  # --surge: each node's ``ahead.SurgeAhead`` (None: not asked)

    @property
    def settings(self) -> tuple:
        return self.profile.settings

    @property
    def order(self) -> Order:
        return self.profile.order

    @property
    def completes(self) -> bool:
        return self.verdict is Outcome.COMPLETES


def simulate(profile, snapshot, node_names, now=None) -> EngineOutcome:
    """The engine's drain of ``node_names``: per node its outcome, the batches, the whole duration."""
    now = now or snapshot.taken_at
    names = list(dict.fromkeys(node_names))
    if profile.order is Order.DETERMINISTIC and profile.node_order is not None:
        names = list(profile.node_order(snapshot, names))
    size = (profile.parallel_of(len(names)) if profile.parallel_of else profile.parallel) or len(names)
    size = max(size, 1)
    groups = [names[i:i + size] for i in range(0, len(names), size)]
    nodes, batches, halts_after = [], [], None
    shared = room = None
    if len(groups) > 1:  # the work the batches' plans share; one-node batches proved without placing
        shared = SharedPlanning(snapshot)
        room = Room(snapshot, shared.index) if size == 1 and profile.drain.check_capacity \
            and not profile.new_capacity and not profile.drain.surge else None
    for number, batch in enumerate(groups, 1):
        done = _batch(profile, snapshot, batch, now, number, shared, room)
        nodes.extend(done)
        stalled = any(n.outcome is Outcome.STALLS for n in done)
        seconds = None if stalled else max((n.at_seconds or 0 for n in done), default=0) + profile.after_drain_seconds
        batches.append(Batch(number, tuple(batch), seconds))
        if halts_after is None and profile.halts and any(n.outcome is Outcome.FAILS for n in done):
            halts_after = number
    reached = batches[:halts_after] if halts_after else batches
    total = None if any(b.seconds is None for b in reached) else sum(b.seconds for b in reached) + (
        0 if halts_after else profile.after_all_seconds)
    verdict = max((n.outcome for n in nodes), key=WORST.get, default=Outcome.COMPLETES)
    return EngineOutcome(profile, verdict, tuple(nodes), tuple(batches), halts_after, total)


def _batch(profile, snapshot, batch, now, number, shared, room) -> list:
    rules = {}
    for name in batch:
        for pod in snapshot.pods_on(name):
            decided = next((r for r in (rule(pod, snapshot) for rule in profile.rules) if r is not None), None)
            if decided is not None:
                rules[pod.key] = decided
    held = frozenset(k for k, r in rules.items() if r.decision in (Decision.SKIP, Decision.WAIT))
    # a surge ahead runs before the engine brings new nodes: its pods must fit on the nodes that stay
    options = replace(profile.drain, exclude=held, check_capacity=profile.drain.check_capacity and (
        profile.drain.surge or not profile.new_capacity))
    node = snapshot.node(batch[0]) if room is not None else None
    plan = node is not None and proved_plan(snapshot, node, replace(options, check_capacity=False), now, shared, room)
    plan = plan or plan_drain(snapshot, batch, options, now, shared=shared)
    ends, t = {}, 0
    for w in plan.waves:
        t += w.estimated_seconds
        ends[w.number] = t
    bypassed = {(o.namespace, o.name) for r in plan.risks if r.code == "PDB_BYPASSED"
                for o in r.objects if o.kind == "Pod"}
    return [_node(profile, snapshot, name, plan, rules, ends, bypassed, number) for name in batch]


class _Pod:
    """A pod while its node's outcome is worked out."""

    __slots__ = ("pod", "action", "code", "reason", "seconds", "rank", "group", "stuck")

    def __init__(self, pod, action, code, reason, seconds, stuck):
        self.pod, self.action, self.code, self.reason = pod, action, code, reason
        self.seconds, self.stuck = seconds, stuck
        self.rank, self.group = 0, None


def _node(profile, snapshot, name, plan, rules, ends, bypassed, number) -> NodeOutcome:
    requested = profile.drain.grace_seconds
    work, left, refused = [], [], []
    for p in (p for p in plan.pods if p.node == name):
        pod = snapshot.pod(p.namespace, p.name)
        first = _first_reason(p)
        rule = rules.get(pod.key)
        if p.action is Action.SKIP and rule is not None and rule.decision is Decision.EVICT:
            grace = api_grace_period(pod, requested)["seconds"]
            work.append(_Pod(pod, "evict", rule.code, rule.message, last_kill(pod, grace), False))
        elif p.action is Action.SKIP:
            left.append((pod, first.code if first else "SKIP", first.message if first else "skipped"))
        elif p.action is Action.BLOCKED and first and first.code in FILTER_CODES:
            refused.append(_Pod(pod, "refused", first.code, first.message, None, True))
        elif p.action is Action.BLOCKED or (p.action is Action.WAIT and p.wave is None):
            why = _blocking(p) or first
            work.append(_Pod(pod, "blocked", why.code, why.message, None, True))
        else:
            action = "delete" if p.action is Action.DELETE else "evict"
            work.append(_Pod(pod, action, first.code if first else "", first.message if first else "",
                             ends.get(p.wave, 0), False))
    for pod in snapshot.pods_on(name):
        rule = rules.get(pod.key)
        if rule is None or rule.decision is Decision.EVICT:
            continue
        if rule.decision is Decision.SKIP:
            left.append((pod, rule.code, rule.message))
        else:
            work.append(_Pod(pod, "wait", rule.code, rule.message, None, True))
    finish = _groups(profile, work)
    leaves, setting = "", ""
    if refused:
        outcome, at = Outcome.FAILS, 0
        reason = f"the drain refuses the node: {refused[0].pod.namespace}/{refused[0].pod.name}: {refused[0].reason}"
        leaves = profile.leaves
        for w in work:
            w.action, w.code, w.seconds, w.reason = "skip", "DRAIN_REFUSED", None, "not evicted: the drain refuses the node"
        left += [(w.pod, w.code, w.reason) for w in work]
        work = refused
    else:
        outcome, at, reason, leaves, setting = _judge(profile, work, finish, bypassed)
    for hold in profile.holds:
        if hold.before:  # the drain never starts: nothing the drain would do happens
            for w in work:
                w.action, w.code, w.seconds, w.reason = "wait", hold.code, None, f"not evicted: {hold.reason}"
            outcome, at, reason, leaves, setting = (Outcome.STALLS, 0, f"the drain never starts: {hold.reason}", "",
                                                    hold.setting)
            break
        if outcome is Outcome.COMPLETES:
            outcome, reason, setting = Outcome.STALLS, f"drained, then {hold.reason}", hold.setting
        elif outcome is Outcome.FORCES:  # the forced drain ends, the machine's deletion then waits: no end either
            outcome, reason, setting = Outcome.STALLS, f"{reason}; then {hold.reason}", hold.setting
    forced = [w for w in work if w.action == "forced"]
    surged, not_surged, surge_refused = _surge_ahead(plan, name) if profile.drain.surge else ((), (), False)
    return NodeOutcome(
        name, number, outcome, None if at is None else int(at), reason, setting,
        tuple(EnginePod(w.pod.namespace, w.pod.name, w.action, None if w.seconds is None else int(w.seconds),
                        w.code, w.reason, w.group) for w in sorted(work, key=lambda w: (w.rank, w.pod.key)))
        + tuple(EnginePod(pod.namespace, pod.name, "skip", None, code, message) for pod, code, message in left),
        tuple(f"{pod.namespace}/{pod.name}" for pod, _, _ in left),
        _data_lost(profile, snapshot, name, work), leaves, _availability(snapshot, forced),
        surged, not_surged, surge_refused)


def _surge_ahead(plan, name):
    """(workloads surged first, (pod or risk code, why) of what is not, refused) for the node's pods in a
    plan made with --surge (``analysis.surge.plan_surges``); an unaccepted surge risk refuses the drain."""
    on_node = {(p.namespace, p.name) for p in plan.pods if p.node == name}
    surged = tuple(s.ref for s in plan.surges if set(s.keys) & on_node)
    not_surged = [(f"{p.namespace}/{p.name}", r.message) for p in plan.pods if p.node == name
                  for r in p.reasons if r.code == "SURGE_NOT_POSSIBLE"]
    refusing = [(getattr(r.code, "value", r.code), r.message) for r in plan.risks
                if str(getattr(r.code, "value", r.code)).startswith("SURGE_") and not r.accepted]
    return surged, tuple(not_surged + refusing), bool(refusing)


PLACEMENT_NOTES = ("REPLACEMENT_NODE_TIED", "REPLACEMENT_FROM_POD")  # how a replacement is judged: not the engine's concern


def _first_reason(p):
    errors = [r for r in p.reasons if r.severity is Severity.ERROR]
    return (errors or [r for r in p.reasons if r.code not in PLACEMENT_NOTES] or [None])[0]


def _blocking(p):
    return next((r for r in p.reasons if r.code in ("PDB_NEVER_ALLOWS", "PDB_EXHAUSTED", "PDB_NOT_HEALTHY",
                                                     "MULTIPLE_PDBS")), None)


def _groups(profile, work) -> int:
    """Order the pods into the engine's groups: a group starts when every lower one is gone; a pod
    behind a group that never empties waits too. Returns when the pods that do leave are gone."""
    if profile.order_group is not None:
        for w in work:
            w.rank, w.group = profile.order_group(w.pod)
    start, stuck_below = 0, None
    for rank in sorted({w.rank for w in work}):
        members = [w for w in work if w.rank == rank]
        if stuck_below is not None:
            for w in members:
                if not w.stuck:
                    w.action, w.code, w.seconds, w.stuck = "wait", "BEHIND_GROUP", None, True
                    w.reason = f"waits for group {stuck_below} to empty first, which it never does"
            continue
        going = [w for w in members if not w.stuck]
        for w in going:
            w.seconds = start + w.seconds
        start = max((w.seconds for w in going), default=start)
        if any(w.stuck for w in members):
            stuck_below = members[0].group or str(rank)
    return start


def _judge(profile, work, finish, bypassed):
    """(outcome, at seconds, reason, what it leaves, deciding setting) of a node the drain does not refuse."""
    stuck = [w for w in work if w.stuck]
    forced_past_pdb = [w for w in work if (w.pod.namespace, w.pod.name) in bypassed]
    timeout = profile.timeout_seconds
    late = [w for w in work if not w.stuck and timeout is not None and w.seconds > timeout]
    if not stuck and not late:
        if forced_past_pdb:
            for w in forced_past_pdb:
                w.action, w.code, w.reason = "forced", "PDB_BYPASSED", "deleted whatever its PDB says"
            return (Outcome.FORCES, 0, f"{len(forced_past_pdb)} pod(s) deleted past their PDB: "
                    + ", ".join(f"{w.pod.namespace}/{w.pod.name}" for w in forced_past_pdb), "", "")
        return Outcome.COMPLETES, finish, "every pod leaves within the engine's limits", "", ""
    held = stuck + late
    first = stuck[0] if stuck else late[0]
    what = f"{first.pod.namespace}/{first.pod.name}: {first.reason}"
    if timeout is None:
        return (Outcome.STALLS, finish, f"waits with no end for {len(stuck)} pod(s) ({what})",
                "", profile.timeout_setting)
    label = profile.timeout_label or profile.timeout_setting
    limit = f"{label} ({_human(timeout)})" if label else f"its {_human(timeout)} limit"
    if profile.at_timeout is AtTimeout.FORCE:
        at = timeout
        for w in held:
            w.action, w.code = "forced", "ENGINE_FORCES"
            w.seconds = _force_time(profile, w.pod, timeout)
            w.reason = f"still there at {limit}: deleted or killed with the machine ({w.reason})"
            at = min(at, w.seconds)
        return (Outcome.FORCES, at, f"{len(held)} pod(s) still there at {limit} are forced out ({what})",
                "", profile.timeout_setting)
    return (Outcome.FAILS, timeout, f"gives up at {limit} with {len(held)} pod(s) still there ({what})",
            profile.leaves, profile.timeout_setting)


def _force_time(profile, pod, deadline) -> int:
    if profile.grace.rule is GraceRule.DEADLINE:
        return max(int(deadline - api_grace_period(pod)["seconds"]), 0)
    return int(deadline)


def _human(seconds) -> str:
    from kubectl_safety.model.duration import human_duration

    return human_duration(seconds)


def _data_lost(profile, snapshot, name, work) -> tuple:
    """Node-local data that does not survive: every pod's emptyDir and hostPath volumes where the machine is
    replaced; else the emptyDir volumes of the pods deleted or evicted."""
    if profile.replaces_machine:
        pods = snapshot.pods_on(name)
        host_path = True
    else:
        pods = [w.pod for w in work if w.action in ("evict", "delete", "forced")]
        host_path = False
    out = []
    for pod in sorted(pods, key=lambda p: p.key):
        volumes = local_volumes(pod, host_path)
        if volumes:
            out.append(f"{pod.namespace}/{pod.name} ({', '.join(str(v) for v in volumes)})")
    return tuple(out)


def _availability(snapshot, forced) -> tuple:
    """Per workload of the forced pods: its Ready pods and what they fall to when those go at once."""
    counts = {}
    for w in forced:
        top = _top(snapshot, w.pod)
        if top is None:
            continue
        entry = counts.setdefault(top, [None, 0])
        if entry[0] is None:
            entry[0] = sum(1 for p in snapshot.pods_in(w.pod.namespace) if p.is_ready and _top(snapshot, p) == top)
        if w.pod.is_ready:
            entry[1] += 1
    return tuple(Availability(f"{kind} {ns}/{n}", ready, max(ready - gone, 0))
                 for (kind, ns, n), (ready, gone) in sorted(counts.items()))


def _top(snapshot, pod):
    chain = snapshot.owner_chain(pod)
    if not chain:
        return None
    ref = chain[-1][0]
    return (ref.get("kind") or "?", pod.namespace, ref.get("name") or "?")
