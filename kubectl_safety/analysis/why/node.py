"""``why node``: why a node takes no pods (cordoned, tainted, not ready, gone) and who did it, from its
spec, taints, labels, annotations, managedFields and events, its Karpenter NodeClaim's events and kured's
lock (docs/research/why-evidence.md, §9).

Pure: a function of (snapshot with events, node name, now).
"""

import json

from kubectl_safety.analysis.why.events import OUR_CONTROLLER, about
from kubectl_safety.analysis.why.report import Cause, Confidence, Evidence, NodeCause, NodePostMortem
from kubectl_safety.model.meta import parse_time

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
LIFECYCLE_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
# Taints an engine puts on the nodes it takes away: key -> the engine.
ENGINE_TAINTS = {"safety.kubectl.io/surge": "kubectl-safety surge", "karpenter.sh/disrupted": "Karpenter",
                 "ToBeDeletedByClusterAutoscaler": "Cluster Autoscaler",
                 "DeletionCandidateOfClusterAutoscaler": "Cluster Autoscaler"}
ENGINE_ANNOTATIONS = {"safety.kubectl.io/rollout": "kubectl-safety rollout",
                      "weave.works/kured-reboot-in-progress": "kured",
                      "cluster.x-k8s.io/machine": "Cluster API (Machine {value})"}
ENGINE_LABELS = {"kubernetes.azure.com/upgrade-status": "AKS upgrade ({value})",
                 "node.kubernetes.io/exclude-from-external-load-balancers": "EKS managed node group update"}
NODE_GONE_REASONS = ("DeletingNode", "RemovingNode")
# kured's lock on its DaemonSet (kubereboot/kured cmd/kured/main.go --lock-annotation, pkg/daemonsetlock):
# {"nodeID", "created", ...}, or {"maxOwners", "locks": [...]} with --concurrency above 1.
KURED_LOCK = "weave.works/kured-node-lock"
KARPENTER_TAINT = "karpenter.sh/disrupted"
# Cluster API's Machine of the node (its annotations name it) and the hooks that hold its deletion
# (api core/v1beta2 common_types.go PreDrainDeleteHookAnnotationPrefix, PreTerminateDeleteHookAnnotationPrefix)
CAPI_MACHINE = "cluster.x-k8s.io/machine"
CAPI_HOOKS = ("pre-drain.delete.hook.machine.cluster.x-k8s.io", "pre-terminate.delete.hook.machine.cluster.x-k8s.io",
              "machine.cluster.x-k8s.io/exclude-node-draining")


def why_node(snap, name, now):
    """The node's post-mortem, or None when neither the node nor any event naming it is in ``snap``."""
    node = snap.node(name)
    mine = about(snap, "Node", "", name)
    if node is None and not mine:
        return None
    evidence = [Evidence("event", f.reason, f.note, f.first_time, f.reporting_controller) for f in mine]
    if node is None:
        gone = next((f for f in reversed(mine) if f.reason in NODE_GONE_REASONS), None)
        cause = Cause(NodeCause.DELETED.value, gone.reporting_controller if gone else "",
                      gone.first_time if gone else None,
                      f"the node is gone{': ' + gone.note if gone else ''}",
                      Confidence.HIGH if gone else Confidence.MEDIUM, {},
                      "" if gone else "the audit log: verb=delete and objectRef.resource=nodes and "
                      f"objectRef.name={name} (user.username is the caller)")
        return NodePostMortem(name, False, None, cause, tuple(evidence), ())
    claim = next((r.get("name") for r in node.owner_references if r.get("kind") == "NodeClaim"), "")
    claim_events = about(snap, "NodeClaim", "", claim) if claim else []
    evidence += [Evidence(f"event on NodeClaim {claim}", f.reason, f.note, f.first_time, f.reporting_controller)
                 for f in claim_events]
    lock = _kured_lock(snap, name)
    evidence += _node_evidence(node) + _machine_evidence(snap, node)
    if lock:
        evidence.append(Evidence("annotation", f"{KURED_LOCK} on DaemonSet {lock[0].namespace}/{lock[0].name}",
                                 lock[1], parse_time(lock[2].get("created"))))
    actor, actor_at, how = _actor(node, mine, lock)
    taints = node.taints
    if node.unschedulable:
        taint = next((t for t in taints if t.get("key") == UNSCHEDULABLE_TAINT), {})
        at = parse_time(taint.get("timeAdded")) or actor_at or _last_time(mine, "NodeNotSchedulable")
        code = NodeCause.CORDONED if actor else NodeCause.UNKNOWN
        summary = f"cordoned by {actor} ({how})" if actor else "cordoned; who cordoned it is not recorded"
        cause = Cause(code.value, actor, at, summary, Confidence.HIGH if actor else Confidence.LOW,
                      {"cordonedSince": taint.get("timeAdded")} if taint.get("timeAdded") else {},
                      "" if actor else f"the audit log: verb=patch and objectRef.resource=nodes and objectRef.name="
                      f"{name} with spec.unschedulable in the request (user.username is the caller)")
    elif node.ready_status != "True":
        ready = node.condition("Ready") or {}
        lifecycle = [t.get("key") for t in taints if t.get("key") in LIFECYCLE_TAINTS]
        cause = Cause(NodeCause.NOT_READY.value, "node-lifecycle-controller",
                      parse_time(ready.get("lastTransitionTime")),
                      f"not ready ({ready.get('reason') or 'no Ready condition'}: {ready.get('message') or ''})"
                      + (f"; tainted {', '.join(lifecycle)}" if lifecycle else ""), Confidence.HIGH,
                      {"ready": node.ready_status, "taints": lifecycle})
    else:
        hard = [t for t in taints if t.get("effect") in ("NoSchedule", "NoExecute")]
        if hard:
            t = hard[0]
            who = actor or ENGINE_TAINTS.get(t.get("key"), "")
            details = {"taints": [x.get("key") for x in hard]}
            disrupting = _karpenter_disruption(mine + claim_events) if t.get("key") == KARPENTER_TAINT else None
            if disrupting:
                details["karpenterDisruption"] = f"{disrupting.reason}: {disrupting.note}"
            cause = Cause((NodeCause.TAINTED if who else NodeCause.UNKNOWN).value, who,
                          parse_time(t.get("timeAdded")) or actor_at,
                          f"tainted {t.get('key')}:{t.get('effect')}" + (f" by {who}" if who else
                                                                        " (who tainted it is not recorded)")
                          + (f" ({details['karpenterDisruption']})" if disrupting else ""),
                          Confidence.HIGH if who else Confidence.LOW, details,
                          "" if who else f"the audit log: objectRef.resource=nodes and objectRef.name={name}")
        else:
            cause = Cause(NodeCause.SCHEDULABLE.value, "", None, "schedulable: not cordoned, ready, no NoSchedule "
                          "or NoExecute taint", Confidence.HIGH, {})
    pods = tuple(sorted(p.ref for p in snap.pods_on(name)))
    return NodePostMortem(name, True, node.unschedulable, cause, tuple(evidence), pods)


def _node_evidence(node) -> list:
    out = [Evidence("taint", f"{t.get('key')}:{t.get('effect')}", t.get("value") or "",
                    parse_time(t.get("timeAdded"))) for t in node.taints]
    for key, value in sorted(node.annotations.items()):
        if key in ENGINE_ANNOTATIONS or key.startswith("safety.kubectl.io/"):
            out.append(Evidence("annotation", key, value, None))
    ready = node.condition("Ready")
    if ready and ready.get("status") != "True":
        out.append(Evidence("condition", f"Ready={ready.get('status')} {ready.get('reason') or ''}".strip(),
                            ready.get("message") or "", parse_time(ready.get("lastTransitionTime"))))
    manager = _unschedulable_manager(node)
    if manager:
        out.append(Evidence("managedFields", "spec.unschedulable", f"last set by field manager {manager[0]}",
                            manager[1], manager[0]))
    return out


def _machine_evidence(snap, node) -> list:
    """Cluster API's Machine of the node, when the snapshot holds it: its deletion (Cluster API drains the
    node before it deletes the Machine) and the hooks and annotation that hold or skip that drain."""
    name = node.annotations.get(CAPI_MACHINE)
    machine = next((m for m in snap.machines if m.name == name and m.node_name in ("", node.name)), None) \
        if name else None
    if machine is None:
        return []
    ref = f"Machine {machine.namespace}/{machine.name}"
    out = []
    deleting = parse_time(machine.meta.get("deletionTimestamp"))
    if deleting:
        out.append(Evidence("owner", f"{ref} is being deleted",
                            "Cluster API drains the node, then deletes the Machine", deleting, "Cluster API"))
    for key, value in sorted(machine.annotations.items()):
        if key.startswith(CAPI_HOOKS):
            out.append(Evidence("annotation", f"{key} on {ref}", value, None, value if "hook" in key else ""))
    return out


def _kured_lock(snap, name):
    """(DaemonSet, annotation, holder) of the kured lock this node holds, or None."""
    for ds in snap.annotated_workloads(KURED_LOCK):
        raw = ds.annotations[KURED_LOCK]
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        holders = data.get("locks") if isinstance(data, dict) and isinstance(data.get("locks"), list) else [data]
        holder = next((h for h in holders if isinstance(h, dict) and h.get("nodeID") == name), None)
        if ds.kind == "DaemonSet" and holder:
            return ds, raw, holder
    return None


def _karpenter_disruption(events):
    """Karpenter's newest Disruption* event on the node or its NodeClaim (``Disrupting NodeClaim: Drifted``)."""
    found = [f for f in events if f.reporting_controller == "karpenter" and f.reason.startswith("Disruption")]
    return max(found, key=lambda f: f.first_time.timestamp() if f.first_time else 0, default=None)


def _actor(node, mine, lock=None):
    """(who, when, how it is known) of the node's cordon or taint, from the strongest record."""
    ours = next((f for f in reversed(mine) if f.reporting_controller == OUR_CONTROLLER), None)
    if ours:
        return f"kubectl-safety {ours.note.split(':')[0]}", ours.first_time, f"its event {ours.reason}: {ours.note}"
    if lock:
        ds, _, holder = lock
        return "kured", parse_time(holder.get("created")), f"kured's lock {KURED_LOCK} on DaemonSet " \
            f"{ds.namespace}/{ds.name}, held since {holder.get('created') or '(no time)'}"
    for key, who in ENGINE_ANNOTATIONS.items():
        if key in node.annotations:
            return who.format(value=node.annotations[key]), None, f"annotation {key}"
    for t in node.taints:
        if t.get("key") in ENGINE_TAINTS:
            return ENGINE_TAINTS[t["key"]], parse_time(t.get("timeAdded")), f"taint {t['key']}"
    for key, who in ENGINE_LABELS.items():
        if key in node.labels and (key != "node.kubernetes.io/exclude-from-external-load-balancers"
                                   or "eks.amazonaws.com/nodegroup" in node.labels):
            return who.format(value=node.labels[key]), None, f"label {key}"
    manager = _unschedulable_manager(node)
    if manager and node.unschedulable:
        name = "kubectl (cordon or drain)" if manager[0].startswith("kubectl") and manager[0] != "kubectl-safety" \
            else manager[0]
        return name, manager[1], "the field manager of spec.unschedulable"
    return "", None, ""


def _unschedulable_manager(node):
    """(manager, time) of the managedFields entry that owns spec.unschedulable, or None."""
    for entry in reversed(node.meta.get("managedFields") or []):
        fields = ((entry.get("fieldsV1") or {}).get("f:spec") or {})
        if "f:unschedulable" in fields:
            return str(entry.get("manager") or ""), parse_time(entry.get("time"))
    return None


def _last_time(events, reason):
    return next((f.first_time for f in reversed(events) if f.reason == reason), None)
