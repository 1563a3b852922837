"""A drain plan's risks, plan-wide warnings and losses: the SAFE contract's exceptions, each with its stable code
(``risks.RISKS``), and what leaving the nodes loses."""

from kubectl_safety.analysis.deletion import holding_finalizers, pod_gc_force_deletes
from kubectl_safety.analysis.node_health import node_health
from kubectl_safety.analysis.plans.common import MOVING, Action, Reason, RiskList, Severity, obj, pod_obj
from kubectl_safety.analysis.plans.drain import Losses
from kubectl_safety.analysis.risks import NODE_WAY_OUT, incomplete
from kubectl_safety.analysis.scheduling.volume_limits import counts_volumes
from kubectl_safety.analysis.scheduling.volumes import claim_names


def plan_warnings(snapshot, verdicts, targets, index) -> tuple:
    """Plan-wide findings: PDBs selecting nothing in the affected namespaces, missing nodes, and
    volumes not judged because storage could not be read."""
    out = []
    unread = snapshot.storage_unread
    claims = [(v.pod, claim_names(v.pod)) for v in verdicts] if unread else []
    claims = [f"{pod.namespace}/{pod.name} ({', '.join(names)})" for pod, names in claims if names]
    if claims:
        kinds = ", ".join(f"{resource} ({why})" for resource, why in sorted(unread.items()))
        out.append(Reason("STORAGE_NOT_JUDGED", Severity.WARNING,
                          f"volumes not checked, {kinds} could not be read: whether these pods' claims "
                          f"can follow them is not judged: {'; '.join(claims)}"))
    out.extend(_not_judged(snapshot, verdicts))
    for name in targets:
        if snapshot.node(name) is None:
            out.append(Reason("NODE_NOT_FOUND", Severity.ERROR, f'node "{name}" not found'))
    for ns in sorted({v.pod.namespace for v in verdicts if snapshot.pods_complete_in(v.pod.namespace)}):
        for b in index.selecting_nothing(ns):
            out.append(Reason("PDB_SELECTS_NOTHING", Severity.WARNING,
                              f"PDB {ns}/{b.name} selects no pod (selector {b.selector}): "
                              "it protects nothing; check its labels"))
    return tuple(out)


def _not_judged(snapshot, verdicts) -> list:
    """Devices and attach limits the filters could not judge: the kinds a live read could not read."""
    out = []
    unread = snapshot.dra_unread
    claims = [f"{v.pod.namespace}/{v.pod.name} ({', '.join(c.get('name') or '?' for c in v.pod.resource_claims)})"
              for v in verdicts if v.pod.resource_claims] if unread else []
    if claims:
        kinds = ", ".join(f"{resource} ({why})" for resource, why in sorted(unread.items()))
        out.append(Reason("DEVICES_NOT_JUDGED", Severity.WARNING,
                          f"devices not checked, {kinds} could not be read: whether these pods' resource "
                          f"claims can be allocated elsewhere is not judged: {'; '.join(claims)}"))
    unread = snapshot.volume_limits_unread
    volumes = [f"{v.pod.namespace}/{v.pod.name}" for v in verdicts if counts_volumes(v.pod)] if unread else []
    if volumes:
        kinds = ", ".join(f"{resource} ({why})" for resource, why in sorted(unread.items()))
        out.append(Reason("VOLUME_LIMITS_NOT_JUDGED", Severity.WARNING,
                          f"volume attach limits not checked, {kinds} could not be read: whether these pods' "
                          f"volumes fit the CSI drivers' limits elsewhere is not judged: {'; '.join(volumes)}"))
    return out


# -- the SAFE contract -----------------------------------------------------------------------
def plan_risks(snapshot, targets, verdicts, pods, trackers, checked, capacity, options, seconds, now) -> RiskList:
    risks = RiskList()
    unheld = incomplete(snapshot, "drain")
    if unheld:
        risks.add(*unheld, [])
    by_key = {v.pod.key: v for v in verdicts}
    for name in targets:
        if snapshot.node(name) is None:
            risks.add("NODE_NOT_FOUND", f'node "{name}" not found', [obj("Node", "", name)])
    _node_risks(snapshot, targets, pods, risks, now)
    _finalizer_risks(snapshot, pods, risks)
    for p in pods:
        if p.action is not Action.BLOCKED:
            continue
        blocking = [r for r in p.reasons if r.severity is Severity.ERROR]
        pdb = [obj("PodDisruptionBudget", *p.pdb.split("/"))] if p.pdb else []
        budget = ([r for r in blocking if r.code == "PDB_NEVER_ALLOWS"]
                  or [r for r in blocking if r.code == "PDB_EXHAUSTED"])
        if budget:
            risks.add(budget[0].code, budget[0].message, pdb + [pod_obj(p)])
        else:
            risks.add("POD_NOT_EVICTABLE", "; ".join(r.message for r in blocking), [pod_obj(p)])
    for u in checked.unplaceable:
        risks.add("REPLACEMENT_UNPLACEABLE", f"the replacement of {u.namespace}/{u.name} fits on no node: "
                  f"{u.reason}", [pod_obj(u)], nodes=u.nodes, nodes_not_listed=u.not_listed)
    for key, node in sorted((capacity.returns_to if capacity else {}).items()):
        v = by_key[key]
        risks.add("REPLACEMENT_RETURNS_TO_NODE", f"{v.pod.namespace}/{v.pod.name} "
                  f"{capacity.returns_why(key, node)}, so the node is not emptied",
                  [pod_obj(v.pod), obj("Node", "", node)])
    _bypass_risks(snapshot, verdicts, pods, trackers, risks)
    if options.timeout and seconds > options.timeout:
        risks.add("DRAIN_TIMEOUT", f"the plan needs about {seconds}s, more than --timeout "
                  f"{options.timeout:g}s: the drain stops part way (the nodes stay cordoned)",
                  [obj("Node", "", n) for n in targets])
    return risks


def _node_risks(snapshot, targets, pods, risks, now):
    """Pods evicted from a node that cannot confirm their deletion stay Terminating."""
    for name in targets:
        node = snapshot.node(name)
        if node is None:
            continue
        state = node_health(node, now, snapshot.node_lease(name))
        if state["state"] == "Ready":
            continue
        if pod_gc_force_deletes(node, state):
            continue  # no kubelet needed; finalizers are judged on their own
        going = [p for p in pods if p.node == name and p.action in MOVING]
        alive = [p for p in going if not (snapshot.pod(p.namespace, p.name) or _NONE).is_terminal]
        if not alive:
            continue
        code = "NODE_UNREACHABLE" if state["state"] == "Unknown" else "NODE_NOT_READY"
        risks.add(code, f"node {name} is {state['message']}: {len(alive)} evicted pod(s) stay Terminating until its "
                  f"kubelet confirms, so the drain does not finish. Way out: {NODE_WAY_OUT}",
                  [obj("Node", "", name)] + [pod_obj(p) for p in alive])


def _finalizer_risks(snapshot, pods, risks):
    """Pods asked to go that a finalizer keeps: kubectl waits for an object that stays."""
    for p in pods:
        if p.action not in MOVING:
            continue
        pod = snapshot.pod(p.namespace, p.name)
        held = holding_finalizers(pod) if pod is not None else []
        if held:
            risks.add("POD_HELD_BY_FINALIZER", f"{p.ref} has finalizer(s) {', '.join(held)}: "
                      "the pod object stays Terminating until they are removed, so the drain does not finish",
                      [pod_obj(p)])


class _NONE:
    is_terminal = False


def _bypass_risks(snapshot, verdicts, pods, trackers, risks):
    """--disable-eviction: deletions beyond what each PDB allows (or of pods several PDBs select)."""
    by_pdb = {}
    for v, p in zip(verdicts, pods):
        if v.eviction != "delete" or p.action is not Action.DELETE or v.pod.is_terminal:
            continue
        budgets = snapshot.pdbs_for(v.pod)
        if len(budgets) > 1:
            risks.add("PDB_BYPASSED", f"{v.pod.namespace}/{v.pod.name} is selected by {len(budgets)} PDBs: the "
                      "Eviction API would refuse it; --disable-eviction deletes it anyway",
                      [obj("PodDisruptionBudget", b.namespace, b.name) for b in budgets] + [pod_obj(v.pod)])
        elif budgets and v.pod.is_ready and not v.pod.is_terminating:
            by_pdb.setdefault(f"{budgets[0].namespace}/{budgets[0].name}", (budgets[0], []))[1].append(v)
    for ref, (pdb, bypassed) in sorted(by_pdb.items()):
        tracker = trackers.get(ref)
        allowed = tracker.allowed if tracker else pdb.disruptions_allowed
        never = tracker.never if tracker else None
        if len(bypassed) <= allowed and not never:
            continue
        why = f"it never allows a disruption ({never})" if never else f"it allows {allowed} disruption(s)"
        risks.add("PDB_BYPASSED", f"--disable-eviction deletes {len(bypassed)} healthy pod(s) of PDB {ref}, but {why}: "
                  "the budget is broken; drop --disable-eviction to drain within it",
                  [obj("PodDisruptionBudget", pdb.namespace, pdb.name)] + [pod_obj(v.pod) for v in bypassed])


def losses(pods) -> Losses:
    """What the flags kubectl requires accept: emptyDir data and unmanaged pods that go for good."""
    moving = [p for p in pods if p.action in MOVING]
    return Losses(tuple(p.ref for p in moving if p.has("LOCAL_STORAGE")),
                  tuple(p.ref for p in moving if p.has("UNMANAGED")))
