"""Make before break (``--surge``): which leaving pods are replaced before they go, and how (pure).

A pod is surgeable when a PodDisruptionBudget refuses its eviction now or for good, or when its
workload would have no Ready pod while it moves (every Ready replica is on the drained nodes).
Its workload (a Deployment, scaled through the Deployment, never the ReplicaSet it owns; or a bare
ReplicaSet) is raised by the number of its pods leaving, through ``spec.replicas`` or, when a
HorizontalPodAutoscaler owns the count, its ``minReplicas``; once the new pods are Ready on nodes
that stay, the old ones go by eviction where the budget then allows it, else they are marked with
the lowest pod-deletion-cost and the count is scaled back, so the controller removes exactly them.
StatefulSets (stable identity and claims) and Deployments in the middle of a rollout are never
surged: said on the pod; nor is a workload whose surge pod the filters let onto a drained node while it
starts (cordoned and tainted ``TAINT``: its pods tolerate both), as it would never be Ready elsewhere. The
surge pods are placed by the same filters as replacements.
"""

import json

from kubectl_safety.analysis.budgets import desired_healthy, scaled
from kubectl_safety.analysis.plans.common import Action, Reason, Severity, obj, pod_obj
from kubectl_safety.analysis.plans.drain import Removal, Surge, SurgeMechanism, SurgePlan
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.analysis.scale_down import DELETION_COST, ahead_of, is_active
from kubectl_safety.model.selectors import selector_query

ANNOTATION = "safety.kubectl.io/surge"  # the original count, recorded on the object before it changes
LOWEST_COST = "-2147483648"  # the ReplicaSet controller removes the lowest cost first
TAINT = "safety.kubectl.io/surge"  # NoSchedule on the drained nodes while surge pods start
BUDGET_CODES = ("PDB_NEVER_ALLOWS", "PDB_EXHAUSTED", "PDB_NOT_HEALTHY")
HPA_SCALE_DOWN_SECONDS = 300  # the autoscaler's default scale-down stabilization window
HPA_SCALE_DOWN_POLICY = {"type": "Percent", "value": 100, "periodSeconds": 15}  # upstream's default scale-down rule
# label -> the values that say so (None: any); app.kubernetes.io/instance: Argo CD's label tracking (its default
# before v3)
GITOPS_LABELS = {"app.kubernetes.io/managed-by": ("Helm",), "kustomize.toolkit.fluxcd.io/name": None,
                 "helm.toolkit.fluxcd.io/name": None, "argocd.argoproj.io/instance": None,
                 "app.kubernetes.io/instance": None}
GITOPS_ANNOTATIONS = ("argocd.argoproj.io/tracking-id", "meta.helm.sh/release-name")
GITOPS_MANAGERS = ("argocd", "kustomize-controller", "helm-controller", "helm")


def recorded(workload):
    """The surge recorded on ``workload`` by a run that has not restored it yet (dict), or None. A
    Deployment's ReplicaSet holds none: the Deployment controller copies the Deployment's annotations
    onto it and never removes them."""
    if workload.kind == "ReplicaSet" and (workload.controller_ref or {}).get("kind") == "Deployment":
        return None
    text = workload.annotations.get(ANNOTATION)
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("replicas"), int) else None


def workload_of(snapshot, pod):
    """(the object whose count a surge changes, or None; why not, or '')."""
    chain = snapshot.owner_chain(pod)
    if not chain:
        return None, ""
    ref, owner = chain[0]
    kind = ref.get("kind")
    if kind == "StatefulSet":
        return None, (f"StatefulSet {pod.namespace}/{ref.get('name')} is never surged (stable identity and "
                      "claims): it is unavailable while the pod moves")
    if kind != "ReplicaSet":
        return None, ""
    if owner is None:
        return None, f"ReplicaSet {pod.namespace}/{ref.get('name')} is not known: not surged"
    top = owner
    if owner.controller_ref:
        if owner.controller_ref.get("kind") != "Deployment" or len(chain) < 2 or chain[1][1] is None:
            return None, f"the owner of ReplicaSet {owner.namespace}/{owner.name} is not known: not surged"
        top = chain[1][1]
        if recorded(top) is None and _rolling(top):
            return None, (f"Deployment {top.namespace}/{top.name} is in the middle of a rollout: not surged "
                          "(run again once it is complete)")
    return (None, why) if (why := _one_copy_at_a_time(snapshot, pod, top)) else (top, "")


def _one_copy_at_a_time(snapshot, pod, workload) -> str:
    """Why the workload cannot run a second copy of the pod beside it ('' : it can)."""
    ref = f"{workload.kind} {workload.namespace}/{workload.name}"
    if workload.kind == "Deployment" and (workload.spec.get("strategy") or {}).get("type") == "Recreate":
        return f"{ref} has the Recreate strategy (never two copies at once): it is unavailable while the pod moves"
    for volume in pod.volumes:
        name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        claim = snapshot.pvc(pod.namespace, name) if name else None
        modes = set(claim.access_modes) if claim is not None else set()
        if "ReadWriteOncePod" in modes or modes and not modes & {"ReadWriteMany", "ReadOnlyMany"}:
            return (f"{ref} is never surged: its pods share claim {name} ({', '.join(sorted(modes))}), which a "
                    "second copy on another node cannot use; it is unavailable while the pod moves")
    return ""


def _rolling(deployment) -> bool:
    """A rollout of its template is under way: the new ReplicaSet has fewer pods than asked, or an old one
    still has pods (a scale alone, as the restore of a surge, is not a rollout)."""
    status = deployment.status
    if status.get("updatedReplicas") is None and status.get("replicas") is None:
        return False  # no status read (a manifest): nothing says a rollout is under way
    updated, replicas = int(status.get("updatedReplicas") or 0), int(status.get("replicas") or 0)
    return updated < min(deployment.replicas, replicas) or replicas > max(updated, deployment.replicas)


def _ready_replicas(snapshot, workload):
    """Its Ready pods: counted from the pods when all of its namespace's were read, else its status (None)."""
    if snapshot.pods_complete_in(workload.namespace):
        return sum(1 for p in snapshot.pods_in(workload.namespace) if p.is_ready and _top(snapshot, p) is workload)
    value = workload.status.get("readyReplicas")
    return int(value) if value is not None else None


def plan_surges(snapshot, targets, verdicts, entries, trackers, capacity, placements, options, ready_seconds,
                now=None):
    """The surges of a drain plan, changing the surged pods' entries in place: (SurgePlan, risks as
    (code, message, objects), ()); ``ready_seconds(pod)``: until a new copy of the pod is Ready.
    Without ``options.surge``: (None, [], the workloads it would surge: the plan's ``surgeable``)."""
    by_workload, not_surged = _candidates(snapshot, verdicts, entries, trackers, targets if capacity else ())
    if not options.surge:  # a surge an earlier run left on these nodes is finished all the same
        surgeable = tuple(sorted(f"{w.kind} {w.namespace}/{w.name}" for w, _ in by_workload.values()))
        if not _left_on(snapshot, targets):
            return None, [], surgeable
        by_workload, not_surged = {}, {}
    for key, (workload, pods) in list(by_workload.items()):
        found = recorded(workload)
        if found and not set(found.get("nodes") or ()) & set(targets):  # another drain's surge, not finished
            del by_workload[key]
            for v in pods:
                not_surged[v.pod.key] = (f"{workload.kind} {workload.namespace}/{workload.name} is surged by a drain "
                                         f"of {', '.join(found.get('nodes') or ())} that has not finished: not "
                                         "surged again")
    for key, why in not_surged.items():
        entries[key].add("SURGE_NOT_POSSIBLE", "warning", why)
    for w in _left_on(snapshot, targets):  # a surge an earlier run left on these nodes: finished (or restored) now
        if (w.kind, w.namespace, w.name) not in by_workload:
            by_workload[(w.kind, w.namespace, w.name)] = (w, [
                v for v in verdicts if v.decision != "skip" and not v.pod.is_terminal
                and _top(snapshot, v.pod) is w and entries[v.pod.key].action is not Action.DELETE])
    limit = options.surge_limit
    surges, risks, peak = [], [], {"pods": 0}
    for (_, namespace, name), (workload, pods) in sorted(by_workload.items()):
        surge, extra = _surge(snapshot, workload, pods, trackers, options, ready_seconds, now)
        for v in pods:
            _surged_entry(entries[v.pod.key], surge)
        if pods and not surge.resumed:  # a resumed surge's pods run already
            _place(capacity, placements, entries, pods, surge)
        elif capacity is not None:  # and cannot return: the drained nodes are tainted again first
            for v in pods:
                capacity.returns_to.pop(v.pod.key, None)
        surges.append(surge)
        risks += _limits(snapshot, workload, pods, surge, limit)
        for v in pods[:surge.to_replicas - surge.from_replicas]:
            peak["pods"] += 1
            for resource, amount in pod_requests(v.pod).items():
                if resource in ("cpu", "memory"):
                    peak[resource] = peak.get(resource, 0) + amount
        risks += extra
    risks += _not_judged(snapshot, surges)
    unplaced = [(s, entries[key]) for s in surges for key in s.keys if entries[key].replacement_node is None
                and capacity is not None and not s.resumed]
    for s, e in unplaced:
        risks.append(("SURGE_UNPLACEABLE", f"the surge pod of {s.ref} for {e.pod.namespace}/{e.pod.name} fits on no "
                      f"node that stays: {getattr(e, 'surge_why', '') or 'no room'}; nothing is changed",
                      [obj(s.kind, s.namespace, s.name), pod_obj(e.pod)]))
    return SurgePlan(tuple(surges), _peak(peak)), risks, ()


def _left_on(snapshot, targets) -> list:
    """The workloads whose surge, recorded by a run that has not restored it, names one of ``targets``."""
    return [w for w in snapshot.annotated_workloads(ANNOTATION)
            if set((recorded(w) or {}).get("nodes") or ()) & set(targets)]


def _not_judged(snapshot, surges) -> list:
    """The surge's risk when the autoscalers or quotas could not be read: taken as absent, they are not judged."""
    unread = {r: why for r, why in snapshot.unread.items() if r in ("horizontalpodautoscalers", "resourcequotas")}
    planned = [s for s in surges if not s.resumed]
    if not unread or not planned:
        return []
    kinds = ", ".join(f"{resource} ({why})" for resource, why in sorted(unread.items()))
    return [("SURGE_NOT_JUDGED", f"{kinds} could not be read: whether an autoscaler owns the count of "
             f"{', '.join(s.ref for s in planned)} or a quota refuses its surge pods is not judged",
             [obj(s.kind, s.namespace, s.name) for s in planned])]


def _candidates(snapshot, verdicts, entries, trackers, drained):
    """{(kind, namespace, name): (workload, [verdicts of its leaving pods])} of surgeable workloads,
    and {pod key: why its workload is not surged}; ``drained``: the nodes its surge pods must not land
    on (none: placement not checked)."""
    leaving = [v for v in verdicts if v.decision != "skip" and not v.pod.is_terminal]
    wanted, reasons = {}, {}
    by_owner = {}
    for v in leaving:
        uid = (v.pod.controller_ref or {}).get("uid")
        if uid:
            by_owner.setdefault(uid, []).append(v)
    for v in leaving:
        entry = entries[v.pod.key]
        blocked_by_budget = any(r.code in BUDGET_CODES for r in entry.reasons)
        if not blocked_by_budget and not (entry.action.moves and _all_ready_leave(snapshot, v, by_owner)):
            continue
        workload, why = workload_of(snapshot, v.pod)
        if workload is None:
            if why:
                reasons[v.pod.key] = why
            continue
        wanted[(workload.kind, workload.namespace, workload.name)] = workload
    out = {}
    for key, workload in wanted.items():
        pods = [v for v in leaving if _top(snapshot, v.pod) is workload
                and entries[v.pod.key].action is not Action.DELETE]
        back = next(((v, nodes) for v in pods if (nodes := _lands_on(snapshot, v.pod, drained))), None)
        if back is not None and recorded(workload) is None:
            why = (f"{workload.kind} {workload.namespace}/{workload.name} is not surged: its pod {back[0].pod.ref} "
                   f"tolerates the cordon and the taint {TAINT}:NoSchedule, so the scheduler can put its surge pod "
                   f"on {', '.join(back[1])}, being drained, where it never counts as Ready elsewhere")
            reasons.update((v.pod.key, why) for v in pods)
            continue
        out[key] = (workload, pods)
    return out, reasons


def _lands_on(snapshot, pod, drained) -> list:
    """The drained nodes where a surge pod of ``pod`` passes every Filter plugin while it starts: each
    node cordoned and tainted ``TAINT:NoSchedule``, its pods (the old ones) still there."""
    from kubectl_safety.analysis.scheduling.filters import filter_node
    from kubectl_safety.analysis.scheduling.replacement import cordoned, unscheduled_copy

    new, out = unscheduled_copy(pod), []
    for name in sorted(drained):
        node = snapshot.node(name)
        if node is not None and not filter_node(new, _surge_tainted(cordoned(node)), snapshot, first=True):
            out.append(name)
    return out


def _surge_tainted(node):
    """``node`` with the taint that keeps surge pods off it while they start."""
    from kubectl_safety.model.nodes import Node

    spec = dict(node.raw.get("spec") or {})
    spec["taints"] = list(spec.get("taints") or []) + [{"key": TAINT, "effect": "NoSchedule"}]
    return Node({**node.raw, "spec": spec})


def _top(snapshot, pod):
    chain = snapshot.owner_chain(pod)
    owners = [owner for _, owner in chain[:2]]
    return owners[-1] if owners else None


def _all_ready_leave(snapshot, v, by_owner) -> bool:
    """Every Ready pod of the pod's controller is leaving: the workload has none Ready while they move."""
    ref = v.pod.controller_ref
    if not v.pod.is_ready or not ref or ref.get("kind") != "ReplicaSet":
        return False
    going = sum(1 for o in by_owner.get(ref.get("uid"), ()) if o.pod.is_ready)
    if snapshot.pods_complete_in(v.pod.namespace):
        ready = _ready_by_controller(snapshot, v.pod.namespace).get(ref.get("uid"), 0)
    else:
        owner = snapshot.owner(v.pod)
        ready = int((owner.status.get("readyReplicas") if owner is not None else 0) or 0)
    return ready <= going


_PLANNING = "surge"  # this module's entry in ``snapshot.planning``


def _ready_by_controller(snapshot, namespace) -> dict:
    """{controller uid (None: none): the namespace's Ready pods it controls}, counted once per
    snapshot and namespace (a plan asks for each leaving pod; check plans every node)."""
    cache = snapshot.planning.get(_PLANNING)
    if cache is None:
        cache = snapshot.planning.setdefault(_PLANNING, {})
    counts = cache.get(namespace)
    if counts is None:
        counts = cache[namespace] = {}
        for p in snapshot.pods_in(namespace):
            if p.is_ready:
                uid = (p.controller_ref or {}).get("uid")
                counts[uid] = counts.get(uid, 0) + 1
    return counts


def _surge(snapshot, workload, pods, trackers, options, ready_seconds, now):
    """The Surge of one workload, and its risks."""
    from kubectl_safety.analysis.scheduling.plugins import tolerates_cordon

    risks = []
    found = recorded(workload)
    current = workload.replicas
    k = len(pods)
    if found:
        original, to = found["replicas"], int(found.get("to") or current)
        ready = found.get("ready") if isinstance(found.get("ready"), int) else None
    else:
        original, to = current, current + k
        ready = _ready_replicas(snapshot, workload)
    hpa = snapshot.autoscaler_of(workload)
    mechanism = SurgeMechanism.HPA_MIN if hpa is not None else SurgeMechanism.SCALE
    hpa_from = hpa_to = None
    if hpa is not None:
        hpa_from = int(found["hpaMinReplicas"]) if found and found.get("hpaMinReplicas") is not None \
            else hpa.min_replicas
        hpa_to = max(hpa_from, to)
        if hpa_to > hpa.max_replicas:
            risks.append(("SURGE_LIMIT", f"HorizontalPodAutoscaler {hpa.namespace}/{hpa.name} allows at most "
                          f"{hpa.max_replicas} replicas; the surge of {workload.kind} {workload.namespace}/"
                          f"{workload.name} needs {hpa_to}", [obj("HorizontalPodAutoscaler", hpa.namespace, hpa.name)]))
    pdb = next((v.pdb for v in pods if v.pdb is not None), None)
    pdb_ref = f"{pdb.namespace}/{pdb.name}" if pdb is not None else None
    removal = _removal(pdb, trackers.get(pdb_ref), max(to - original, 0))
    wait = max((ready_seconds(v.pod) for v in pods), default=0)
    if hpa is not None:
        down = scale_down_seconds(hpa, hpa_to, max(to - original, 0))
        if down is None:
            risks.append(_never_scales_down(workload, hpa, hpa_from, hpa_to, removal))
        elif removal is Removal.DELETION_COST:
            wait += down
    surge = Surge(kind=workload.kind, namespace=workload.namespace, name=workload.name,
                  pods=tuple(v.pod.key[1] for v in pods), uids=tuple(v.pod.uid for v in pods),
                  from_replicas=original, to_replicas=to, mechanism=mechanism, removal=removal,
                  hpa=hpa.name if hpa is not None else None, hpa_min_from=hpa_from, hpa_min_to=hpa_to,
                  pdb=pdb_ref, selector=selector_query(workload.spec.get("selector")), expected_seconds=wait,
                  resumed=bool(found),
                  gitops=_gitops(workload), tolerates_cordon=any(tolerates_cordon(v.pod) for v in pods),
                  ready_before=ready)
    if removal is Removal.DELETION_COST:
        risks += _scale_back_misses(snapshot, workload, pods, surge, now)
    if surge.gitops and not found:
        risks.append(("SURGE_GITOPS", f"{surge.ref} is managed by {surge.gitops}: it may revert the surge's "
                      "replica count while the drain waits", [obj(workload.kind, workload.namespace, workload.name)]))
    return surge, risks


def _scale_back_misses(snapshot, workload, pods, surge, now) -> list:
    """The risk when the scale-back would not remove the marked pods: their ReplicaSet's controller ranks
    a sibling ahead of (or alike) them (``scale_down.ahead_of``: not Ready, Pending, unscheduled)."""
    if not pods or not snapshot.pods_complete_in(workload.namespace):
        return []
    marked = [_marked(v.pod) for v in pods]
    keys = {p.key for p in marked}
    owners = {(p.controller_ref or {}).get("uid") for p in marked}
    related = [p for p in snapshot.pods_in(workload.namespace) if is_active(p) and _top(snapshot, p) is workload]
    siblings = [p for p in related if p.key not in keys and (p.controller_ref or {}).get("uid") in owners]
    ahead = ahead_of(marked, siblings, related, now)
    if not ahead:
        return []
    named = ", ".join(f"{p.ref} ({why})" for p, why in ahead)
    return [("SURGE_SCALE_BACK", f"when {surge.ref} returns to {surge.from_replicas} replicas, its ReplicaSet's "
             f"controller removes {named} before the pods marked {DELETION_COST}={LOWEST_COST}: "
             f"{', '.join(v.pod.ref for v in pods)} would stay; run again once "
             f"{'it is' if len(ahead) == 1 else 'they are'} Ready",
             [obj(workload.kind, workload.namespace, workload.name)] + [pod_obj(p) for p, _ in ahead])]


def _marked(pod):
    """``pod`` as the scale-back finds it: marked with the lowest pod-deletion-cost."""
    meta = dict(pod.meta)
    meta["annotations"] = {**pod.annotations, DELETION_COST: LOWEST_COST}
    return type(pod)({**pod.raw, "metadata": meta})


def _removal(pdb, tracker, k):
    """How the old pods go once the surge pods are Ready: eviction when the budget then allows one."""
    if pdb is None:
        return Removal.EVICT
    if tracker is None or tracker.healthy is None:
        return Removal.DELETION_COST
    healthy, expected = tracker.healthy + k, (tracker.expected or 0) + k
    desired = desired_healthy(pdb, expected) or 0
    return Removal.EVICT if healthy - desired >= 1 else Removal.DELETION_COST


def scale_down_seconds(hpa, count, k):
    """Seconds until the autoscaler, at ``count`` replicas once its minReplicas is restored, has removed
    ``k`` of them, read from its ``behavior.scaleDown`` (defaults as upstream: a 300s stabilization window,
    100% per 15s): the window, then one policy period per further step its policies allow (the ``Max``
    change, or ``Min``); None when it never scales down (``selectPolicy: Disabled``). An upper bound:
    the window holds the count only while recent metric recommendations were higher."""
    rules = (hpa.spec.get("behavior") or {}).get("scaleDown") or {}
    if rules.get("selectPolicy") == "Disabled":
        return None
    window = rules.get("stabilizationWindowSeconds")
    seconds = HPA_SCALE_DOWN_SECONDS if window is None else int(window)
    policies = rules.get("policies") or [HPA_SCALE_DOWN_POLICY]
    pick = min if rules.get("selectPolicy") == "Min" else max
    current, target = count, count - k
    while current > target:
        drop, period = pick((_policy_drop(p, current), int(p.get("periodSeconds") or 0)) for p in policies)
        current -= max(drop, 1)
        if current > target:
            seconds += period
    return seconds


def _policy_drop(policy, current) -> int:
    """Pods one scale-down policy lets go in a period from ``current`` (upstream's
    calculateScaleDownLimitWithBehaviors)."""
    value = int(policy.get("value") or 0)
    if policy.get("type") == "Pods":
        return value
    return current - int(current * (1 - value / 100))


def _never_scales_down(workload, hpa, hpa_from, hpa_to, removal):
    """SURGE_HPA_NO_SCALE_DOWN: what the surge leaves when the autoscaler never scales down."""
    ref = f"{workload.kind} {workload.namespace}/{workload.name}"
    left = (f"the old pods, marked {DELETION_COST}, are never removed: the drain waits for them until --timeout"
            if removal is Removal.DELETION_COST else f"{hpa_to - hpa_from} more than before the surge")
    return ("SURGE_HPA_NO_SCALE_DOWN", f"HorizontalPodAutoscaler {hpa.namespace}/{hpa.name} never scales down "
            f"(behavior.scaleDown.selectPolicy Disabled): once its minReplicas returns to {hpa_from}, {ref} keeps "
            f"{hpa_to} replicas; {left}", [obj(workload.kind, workload.namespace, workload.name),
                                           obj("HorizontalPodAutoscaler", hpa.namespace, hpa.name)])


def _gitops(workload) -> str:
    for key, values in GITOPS_LABELS.items():
        value = workload.labels.get(key)
        if value is not None and (values is None or value in values):
            return f"{key}={value}"
    for key in GITOPS_ANNOTATIONS:
        if key in workload.annotations:
            return key
    for entry in workload.meta.get("managedFields") or ():
        manager = str(entry.get("manager") or "")
        if manager.startswith(GITOPS_MANAGERS):
            return f"field manager {manager}"
    return ""


def _surged_entry(entry, surge):
    """The pod's action once surged: evicted (wave 1) or removed by the scale-back. Its surge pod
    cannot return to the node: the drained nodes are tainted while surge pods start."""
    entry.reasons = [r for r in entry.reasons if r.code not in BUDGET_CODES + ("REPLACEMENT_RETURNS_TO_NODE",)]
    if surge.removal is Removal.EVICT:
        entry.action = Action.EVICT
        how = "then evicted"
    else:
        entry.action = Action.DELETE
        how = (f"then marked {DELETION_COST}={LOWEST_COST} and removed by its controller when the count "
               f"returns to {surge.from_replicas}")
        if surge.pdb:
            how += f" (PDB {surge.pdb} never allows an eviction, however many replicas run)"
    entry.wave = 1
    entry.reasons.append(Reason("SURGE", Severity.INFO, f"surged first: {surge.ref} {surge.from_replicas} -> "
                                f"{surge.to_replicas} ({surge.mechanism.value}); {how}"))


def _place(capacity, placements, entries, pods, surge):
    """Each surge pod on a node that stays (the drained nodes are tainted while they start)."""
    if capacity is None:
        return
    todo = [v.pod for v in pods if placements.get(v.pod.key) is None or placements[v.pod.key][0] is None]
    for v in pods:
        node = capacity.returns_to.pop(v.pod.key, None)
        placed = placements.get(v.pod.key)
        if node is not None and placed is not None and placed[0] == node:
            todo.append(v.pod)  # it would have gone back: placed again without the drained nodes
    if not todo:
        for v in pods:
            if placements.get(v.pod.key):
                entries[v.pod.key].replacement_node = placements[v.pod.key][0]
        return
    drained, capacity.drained_nodes = capacity.drained_nodes, []
    try:
        result = capacity.place_all(todo)
    finally:
        capacity.drained_nodes = drained
    for v in pods:
        node, why = result.get(v.pod.key) or placements.get(v.pod.key) or (None, "")
        entries[v.pod.key].replacement_node = node
        if node is None:
            entries[v.pod.key].surge_why = why
        else:
            capacity.why_not.pop(v.pod.key, None)
        placements.pop(v.pod.key, None)  # judged here, not as a replacement


def _limits(snapshot, workload, pods, surge, limit) -> list:
    out, k = [], surge.to_replicas - surge.from_replicas
    ref = obj(workload.kind, workload.namespace, workload.name)
    if limit is not None and not surge.resumed:
        bound = scaled(limit, surge.from_replicas) if isinstance(limit, str) else limit
        if k > bound:
            out.append(("SURGE_LIMIT", f"the surge of {surge.ref} needs {k} extra pod(s), more than --surge-limit "
                        f"{limit} ({bound})", [ref]))
    if pods and not surge.resumed:
        over = _quota_over(snapshot, pods[0].pod, k)
        if over:
            out.append(("SURGE_QUOTA", f"ResourceQuota {over} would refuse the {k} surge pod(s) of {surge.ref}",
                        [ref, obj("ResourceQuota", workload.namespace, over.split(":")[0])]))
    return out


def _quota_over(snapshot, pod, k) -> str:
    """'name: resources' of the first quota of the pod's namespace that k more such pods exceed: the
    quotas whose scopes match the pod (its stored priorityClassName is the one admission gave it)."""
    from kubectl_safety.analysis.admission import charging_quotas, exceeded, quota_usage

    for quota, hard, used in charging_quotas(pod, snapshot, pod.spec.get("priorityClassName")):
        over = exceeded(hard, used, quota_usage(pod), k)
        if over:
            return f"{quota.name}: {', '.join(over)}"
    return ""


def _peak(peak) -> dict:
    from kubectl_safety.model.quantity import format_amount

    return {k: v if k == "pods" else format_amount(k, v) for k, v in peak.items()}


def surge_wait(waves, surge):
    """The waves with the surge's wait (new pods Ready) added to the first."""
    from dataclasses import replace

    if surge is None or not surge.surges or not waves:
        return waves
    wait = max(s.expected_seconds for s in surge.surges)
    first = waves[0]
    return (replace(first, ready_seconds=first.ready_seconds + wait,
                    estimated_seconds=first.estimated_seconds + wait),) + tuple(waves[1:])
