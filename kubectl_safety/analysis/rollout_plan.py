"""Rollout planner: a node pool's maintenance in batches, each with its drain plan (pure, no I/O).

``plan_rollout(snapshot, nodes, options, now)`` returns a ``RolloutPlan`` (``plans/rollout.py``):

1. order: nodes grouped by zone (``topology.kubernetes.io/zone``); within a zone, nodes whose pods
   are least constrained first (fewest pods under a PodDisruptionBudget or a hard topology spread
   constraint), so the constraints stay satisfiable as long as possible and a blocked node stops
   the rollout as late as possible; without ``by_zone`` the zones take turns (a batch spans zones
   rather than emptying one), with ``by_zone`` one zone at a time (a batch never spans two);
2. batches of ``max_unavailable`` nodes (``N`` or ``N%`` of the pool, at least 1);
3. per batch, the drain plan (``plan_drain``: same filters, PDB waves, capacity, risks) on the
   state the batch will meet: earlier batches back and schedulable, later ones cordoned when the
   pool is pre-cordoned; pods where they are now;
4. the capacity left while the batch is out, and the estimated duration of the batch and in total;
   with ``--surge`` the batch's surges, and their peak: batches run one after another and each restores its
   counts, so the rollout's peak is the largest of any batch;
5. safe only when every batch is; the first batch that is not is where the rollout would stop;
6. blocked nodes last: the nodes of the batches that are not safe are moved behind the others and
   the plan made again, so what can be maintained comes first; ``leftNodes`` names the nodes the
   rollout would leave (from the batch it stops at on, or with ``skip_blocked`` the blocked ones);
7. ``causes``: why the rollout stops, when the plan can tell: pre-cordoning the pool, when the
   stopping batch planned without it loses its unplaceable replacements; each risk names the
   ``workload`` of its first pod, so repeated risks group by workload.
"""

from dataclasses import field, replace

from kubectl_safety.analysis.drain import DrainOptions, needs_replacement, plan_drain
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.analysis.plans.common import RiskCode
from kubectl_safety.analysis.topology import is_hard
from kubectl_safety.analysis.plans.rollout import Batch, BatchRisk, CapacityLeft, Cause, CauseCode, RolloutPlan
from kubectl_safety.analysis.scheduling.replacement import cordoned, uncordoned
from kubectl_safety.model.constants import ZONE
from kubectl_safety.model.quantity import amount, format_amount, max_into
from kubectl_safety.record import record

MAINTENANCE_SECONDS = 60  # assumed time for --exec and the node's return to Ready (not knowable beforehand)
GATE_SECONDS = 10  # assumed time for the health gate after a batch


@record(slots=False)
class RolloutOptions:
    """What shapes the plan: the drain's options and the rollout's own flags."""

    drain: DrainOptions = field(default_factory=DrainOptions)
    max_unavailable: str = "1"
    by_zone: bool = False
    precordon: bool = True
    maintenance: bool = False  # a maintenance action (--exec) runs on every node
    done: frozenset = frozenset()  # nodes an earlier run of this rollout finished (resume)
    skip_blocked: bool = False  # maintain the batches that are safe, leave the blocked ones


class BadMaxUnavailable(ValueError):
    """A --max-unavailable value that is neither N nor N%."""


def batch_size(text, pool_size) -> int:
    """``N`` nodes or ``N%`` of the pool (rounded down, at least 1), as Deployments read maxUnavailable."""
    text = str(text).strip()
    try:
        if text.endswith("%"):
            percent = int(text[:-1])
            if not 0 < percent <= 100:
                raise ValueError
            return max(1, pool_size * percent // 100)
        n = int(text)
        if n < 1:
            raise ValueError
        return n
    except ValueError:
        raise BadMaxUnavailable(f"--max-unavailable={text}: use a number of nodes (1) or a percentage (25%)") from None


def constrained_pods(snapshot, node_name) -> int:
    """Pods on the node that a PDB or a hard topology spread constraint holds."""
    count = 0
    for pod in snapshot.pods_on(node_name):
        spread = any(is_hard(c) for c in pod.spec.get("topologySpreadConstraints") or [])
        if spread or snapshot.pdbs_for(pod):
            count += 1
    return count


def order_batches(snapshot, nodes, size, by_zone) -> list:
    """The pool's nodes in batches (lists of names), in the order they are maintained."""
    zones = {}
    for name in nodes:
        node = snapshot.node(name)
        zone = (node.labels.get(ZONE) if node is not None else None) or ""
        zones.setdefault(zone, []).append(name)
    for zone in zones:
        zones[zone].sort(key=lambda n: (constrained_pods(snapshot, n), len(snapshot.pods_on(n)), n))
    if by_zone:
        return [names[i:i + size] for zone in sorted(zones) for names in [zones[zone]]
                for i in range(0, len(names), size)]
    turns, queues = [], [list(zones[z]) for z in sorted(zones)]
    while any(queues):
        for q in queues:
            if q:
                turns.append(q.pop(0))
    return [turns[i:i + size] for i in range(0, len(turns), size)]


def _state_for(snapshot, pool, batches, index, precordon):
    """The snapshot as batch ``index`` meets it: earlier batches schedulable again, later ones cordoned."""
    earlier = {n for b in batches[:index] for n in b}
    later = {n for b in batches[index + 1:] for n in b}
    nodes = []
    for node in snapshot.nodes:
        want = None
        if node.name in earlier:
            want = False
        elif node.name in later and precordon:
            want = True
        if want is None or node.unschedulable == want:
            nodes.append(node)
        else:
            nodes.append(cordoned(node) if want else uncordoned(node))
    return snapshot.replace(nodes=nodes)


def capacity_left(snapshot, batch, drain) -> CapacityLeft:
    """Schedulable nodes while the batch is out, their free requests, and what the replacements of the
    pods the batch's ``drain`` moves need (not the pods that stay: DaemonSet, mirror, finished)."""
    free_cpu = free_mem = 0
    schedulable = 0
    for node in snapshot.nodes:
        if node.unschedulable or node.name in batch or node.ready_status != "True":
            continue
        schedulable += 1
        used = [pod_requests(p) for p in snapshot.pods_on(node.name) if not p.is_terminal]
        free_cpu += node.allocatable.get("cpu", 0) - sum(u.get("cpu", 0) for u in used)
        free_mem += node.allocatable.get("memory", 0) - sum(u.get("memory", 0) for u in used)
    moved = {(p.namespace, p.name) for p in drain.pods if p.action.moves}
    needed = [pod_requests(p) for n in batch for p in snapshot.pods_on(n)
              if (p.namespace, p.name) in moved and needs_replacement(p)]
    return CapacityLeft(schedulable, _num(free_cpu), _num(free_mem), _num(sum(u.get("cpu", 0) for u in needed)),
                        _num(sum(u.get("memory", 0) for u in needed)))


def _num(x):
    return int(x) if float(x).is_integer() else round(float(x), 3)


def plan_rollout(snapshot, nodes, options=None, now=None) -> RolloutPlan:
    """The plan for maintaining ``nodes``."""
    options = options or RolloutOptions()
    now = now or snapshot.taken_at
    pool = list(dict.fromkeys(nodes))
    todo = [n for n in pool if n not in options.done]
    size = batch_size(options.max_unavailable, len(pool))
    batches = order_batches(snapshot, todo, size, options.by_zone)
    out, risks, stops_at = _plan_batches(snapshot, pool, batches, options, now)
    blocked = {n for b in out if not b.safe for n in b.blocked_nodes}
    if stops_at and any(b.safe for b in out[stops_at:]):  # a batch that could go waits behind a blocked one
        batches = (order_batches(snapshot, [n for n in todo if n not in blocked], size, options.by_zone)
                   + order_batches(snapshot, [n for n in todo if n in blocked], size, options.by_zone))
        again = _plan_batches(snapshot, pool, batches, options, now)
        if (again[2] or len(batches) + 1) > stops_at:  # kept when it stops later (a batch blocked by the
            out, risks, stops_at = again               # state it meets, not by its nodes, stays first)
    risks = [replace(r, workload=_workload(snapshot, r.risk)) for r in risks]
    causes = _causes(snapshot, pool, [b.nodes for b in out], out, options, now, stops_at)
    left = ([n for b in out if not b.safe for n in b.nodes] if options.skip_blocked else
            [n for b in out[stops_at - 1:] for n in b.nodes] if stops_at else [])
    missing = tuple(n for n in pool if snapshot.node(n) is None)
    return RolloutPlan(
        safe=all(r.risk.accepted for r in risks) and not missing and all(b.safe for b in out),
        nodes=tuple(pool), done=tuple(sorted(set(pool) & set(options.done))), missing=missing,
        options=options, batch_size=size, risks=tuple(risks), causes=tuple(causes), stops_at_batch=stops_at,
        left_nodes=tuple(left), batches=tuple(out), estimated_seconds=sum(b.estimated_seconds for b in out),
        taken_at=drain_time(snapshot), surge_peak=surge_peak(out) if options.drain.surge else None)


def surge_peak(batches) -> dict:
    """The largest extra pods and requests of any batch's surges, per resource."""
    peak = {"pods": 0}
    for b in batches:
        if b.surge is not None:
            max_into(peak, {k: v if k == "pods" else amount(k, v) for k, v in b.surge.peak.items()})
    return {k: v if k == "pods" else format_amount(k, v) for k, v in peak.items()}


def _workload(snapshot, risk):
    """``Kind namespace/name`` of the controller at the top of the risk's first pod's owner chain
    (the pod itself when it has none; None when the risk names no pod)."""
    pod = next((o for o in risk.objects if o.kind == "Pod"), None)
    found = snapshot.pod(pod.namespace, pod.name) if pod else None
    if found is None:
        return f"Pod {pod.namespace}/{pod.name}" if pod else None
    chain = snapshot.owner_chain(found)
    if not chain:
        return f"Pod {found.namespace}/{found.name}"
    return f"{chain[-1][0].get('kind')} {found.namespace}/{chain[-1][0].get('name')}"


def _causes(snapshot, pool, batches, out, options, now, stops_at) -> list:
    """What makes the rollout stop, when the plan can show it: the batch it stops at planned again
    on the state without the pool pre-cordoned; if its unplaceable replacements then fit, the
    pre-cordon is the cause."""
    if not stops_at or not options.precordon:
        return []
    stop = out[stops_at - 1]
    codes = {r.code for r in stop.drain.unaccepted()}
    if RiskCode.REPLACEMENT_UNPLACEABLE not in codes:
        return []
    state = _state_for(snapshot, pool, batches, stops_at - 1, False)
    relaxed = plan_drain(state, list(stop.nodes), options.drain, now)
    left = {r.code for r in relaxed.unaccepted()}
    if RiskCode.REPLACEMENT_UNPLACEABLE in left:
        return []
    cordoned = len([n for b in batches[stops_at:] for n in b])
    return [Cause(CauseCode.PRECORDON, stops_at, not left,
                  f"pre-cordoning the pool causes REPLACEMENT_UNPLACEABLE at batch {stops_at}: with the "
                  f"{cordoned} later node(s) of the pool cordoned, its replacements fit nowhere; without "
                  "pre-cordon they fit" + (" and the batch is SAFE" if not left else ""),
                  "pre-cordoning keeps moved pods off nodes maintained later, so each pod moves once",
                  ("--no-precordon (only each batch is cordoned; a moved pod may move again later)",
                   "a smaller pool per run (part of the pool, or one zone with -l "
                   "topology.kubernetes.io/zone=ZONE): fewer nodes cordoned at once",
                   "--accept-risk=REPLACEMENT_UNPLACEABLE only if Pending replacements are acceptable"))]


def _plan_batches(snapshot, pool, batches, options, now) -> tuple:
    """(each batch's entry, the risks with their batch, the first batch that is not safe or None)."""
    out, risks, stops_at = [], [], None
    for i, names in enumerate(batches):
        state = _state_for(snapshot, pool, batches, i, options.precordon)
        drain = plan_drain(state, names, options.drain, now)
        seconds = drain.estimated_seconds + (MAINTENANCE_SECONDS if options.maintenance else 0) + GATE_SECONDS
        blocked = _blocked_nodes(drain) if not drain.safe else []
        if not drain.safe and stops_at is None:
            stops_at = i + 1
        risks += [BatchRisk(i + 1, risk) for risk in drain.risks]
        out.append(Batch(i + 1, tuple(names),
                         tuple(sorted({(state.node(n).labels.get(ZONE) or "") for n in names if state.node(n)})),
                         drain.safe, tuple(blocked), capacity_left(state, set(names), drain), seconds, drain, drain.surge))
    return out, risks, stops_at


def drain_time(snapshot):
    return snapshot.taken_at.strftime("%Y-%m-%dT%H:%M:%SZ") if snapshot.taken_at else None


def _blocked_nodes(drain) -> list:
    """The batch's nodes that hold what a risk not accepted concerns (all of them if none is named)."""
    pod_nodes = {(p.namespace, p.name): p.node for p in drain.pods}
    names = set(drain.node_names)
    found = set()
    for risk in drain.unaccepted():
        for o in risk.objects:
            if o.kind == "Pod" and (o.namespace, o.name) in pod_nodes:
                found.add(pod_nodes[(o.namespace, o.name)])
            elif o.kind == "Node" and o.name in names:
                found.add(o.name)
        found |= set(risk.nodes or {}) & names
    return sorted(found or names)
