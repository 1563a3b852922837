"""``why pod``: who disrupted a pod, read from its DisruptionTarget condition, its status, its containers'
last states, the events naming it and its owner's events (docs/research/why-evidence.md, §1-§7).

Pure: a function of (snapshot with events, namespace, name, now).
"""

import re
from datetime import timedelta

from kubectl_safety.analysis.why import kubelet
from kubectl_safety.analysis.why.events import OUR_CONTROLLER, about, host
from kubectl_safety.analysis.why.report import Cause, Confidence, Evidence, PodCause, PodPostMortem
from kubectl_safety.analysis.node_pressure import memory_pressure_order, memory_request
from kubectl_safety.errors import SafetyError
from kubectl_safety.model.meta import parse_time
from kubectl_safety.model.quantity import amount

PREEMPTED_NOTE = re.compile(r"Preempted by (pod|podgroup) (\S+) on node (\S+)")
ASSIGNED = re.compile(r"Successfully assigned (\S+)/(\S+) to (\S+)")
# DisruptionTarget reasons (k8s.io/api core/v1 types.go and the writers research §1-§6 cite) -> cause.
CONDITION_CAUSES = {"PreemptionByScheduler": PodCause.PREEMPTED, "TerminationByKubelet": PodCause.KUBELET_EVICTION,
                    "EvictionByEvictionAPI": PodCause.EVICTION_API, "DeletionByTaintManager": PodCause.TAINT_MANAGER,
                    "DeletionByPodGC": PodCause.POD_GC}
KUBELET_REASONS = ("Evicted", "Terminated", "Preempting")  # a kubelet-failed pod's status.reason
# Engines that call the Eviction API and say so in an event on the pod: reporter -> name shown.
ENGINES = {"karpenter": "Karpenter", "cluster-autoscaler": "Cluster Autoscaler",
           "sigs.k8s.io.descheduler": "the descheduler", "descheduler": "the descheduler",
           OUR_CONTROLLER: "kubectl-safety"}
EVENT_WINDOW = timedelta(hours=1)  # the API server's default --event-ttl


def audit_query(verb, namespace, name, subresource=None) -> str:
    sub = f" and objectRef.subresource={subresource}" if subresource else " and objectRef.subresource unset"
    return (f"the audit log: verb={verb} and objectRef.resource=pods{sub} and objectRef.namespace={namespace} "
            f"and objectRef.name={name} (user.username is the caller)")


def why_pod(snap, namespace, name, now):
    """The pod's post-mortem, or None when neither the pod nor any event naming it is in ``snap``."""
    pod = snap.pod(namespace, name)
    uid = pod.uid if pod is not None else _latest_uid(snap, namespace, name)
    mine = about(snap, "Pod", namespace, name, uid)
    owner_events = [f for f in snap.events if f.regarding.namespace == namespace and f.regarding.kind != "Pod"
                    and _names_pod(f, name)]
    if pod is None and not mine and not owner_events:
        return None
    node = (pod.node_name if pod is not None else None) or _assigned_node(mine)
    evidence = _evidence(pod, mine, owner_events)
    cause = _cause(snap, pod, mine, owner_events, namespace, name, node, now)
    return PodPostMortem(namespace, name, uid or None, node, pod is not None,
                         pod.phase if pod is not None else None, cause, tuple(evidence))


def _latest_uid(snap, namespace, name):
    """A gone pod's UID: that of the newest event naming it with one (a same-named pod may have come before)."""
    named = [f for f in about(snap, "Pod", namespace, name) if f.regarding.uid]
    return named[-1].regarding.uid if named else None


def _names_pod(f, name) -> bool:
    return f.reason == "SuccessfulDelete" and (f.note == f"Deleted pod: {name}"
                                                 or f.note.startswith(f"Delete Pod {name} in "))


def _assigned_node(mine):
    """A gone pod's node: where the scheduler bound it, preempted it, or whose kubelet wrote about it."""
    for f in reversed(mine):
        m = (ASSIGNED if f.reason == "Scheduled" else PREEMPTED_NOTE if f.reason == "Preempted" else None)
        m = m and m.search(f.note)
        if m and m.group(3) != "cluster":
            return m.group(3)
    return next((host(f) for f in mine if host(f)), None)


def _evidence(pod, mine, owner_events) -> list:
    out = []
    if pod is not None:
        c = pod.condition_obj("DisruptionTarget")
        if c:
            out.append(Evidence("condition", f"DisruptionTarget={c.get('status')} {c.get('reason') or ''}".strip(),
                                c.get("message") or "", parse_time(c.get("lastTransitionTime"))))
        if pod.status.get("reason"):
            out.append(Evidence("status", f"phase {pod.phase}, reason {pod.status.get('reason')}",
                                pod.status.get("message") or "", None))
        for cs in pod.status.get("containerStatuses") or []:
            for state in ("state", "lastState"):
                t = (cs.get(state) or {}).get("terminated")
                if t:
                    out.append(Evidence("container", f"{cs.get('name')} {state}.terminated {t.get('reason') or ''}"
                                        .strip(), f"exitCode {t.get('exitCode')}, restarts {cs.get('restartCount', 0)}",
                                        parse_time(t.get("finishedAt"))))
        if pod.deletion_timestamp:
            out.append(Evidence("status", "deletionTimestamp",
                                f"grace {pod.deletion_grace_period}s", pod.deletion_timestamp))
    for f in mine + owner_events:
        where = "event" if f.regarding.kind == "Pod" else f"event on {f.regarding.kind} {f.regarding.name}"
        out.append(Evidence(where, f.reason, f.note, f.first_time, f.reporting_controller))
    return out


def _cause(snap, pod, mine, owner_events, namespace, name, node, now) -> Cause:
    condition = pod.condition_obj("DisruptionTarget") if pod is not None else None
    live = pod is not None and not pod.deletion_timestamp and not pod.is_terminal
    stale = None
    if condition and condition.get("status") == "True":
        code = CONDITION_CAUSES.get(condition.get("reason"))
        at = parse_time(condition.get("lastTransitionTime"))
        if code and live and code != PodCause.KUBELET_EVICTION and at and now and now - at > timedelta(minutes=2):
            stale = condition  # an attempt whose DELETE never came (the disruption controller resets it)
        elif code:
            return _by_code(snap, code, pod, mine, owner_events, namespace, name, node, at, Confidence.HIGH)
    if pod is not None and pod.phase == "Failed" and pod.status.get("reason") in KUBELET_REASONS:
        return _kubelet(snap, pod, mine, node, None, Confidence.HIGH)
    if live:
        oom = _oom(snap, pod, node)
        if oom:
            return oom
    for reason, code in (("Preempted", PodCause.PREEMPTED), ("TaintManagerEviction", PodCause.TAINT_MANAGER)):
        hit = _last(mine, reason)
        if hit and not (code == PodCause.TAINT_MANAGER and not hit.note.startswith("Marking for deletion")):
            return _by_code(snap, code, pod, mine, owner_events, namespace, name, node, hit.first_time,
                            Confidence.HIGH)
    hit = _last(mine, "Evicted")
    if hit and hit.reporting_controller == "kubelet":
        return _kubelet(snap, pod, mine, node, hit, Confidence.HIGH)
    engine = _engine(mine)
    if engine:
        return _by_code(snap, _engine_code(engine), pod, mine, owner_events, namespace, name, node, engine.first_time,
                        Confidence.MEDIUM)
    if owner_events:
        return _deleted(owner_events[-1], pod, namespace, name)
    if stale is not None:
        return _unknown(namespace, name, node, pod, "a DisruptionTarget condition older than two minutes on a "
                        f"running pod ({stale.get('reason')}): a disruption was attempted but did not happen")
    if pod is not None and pod.deletion_timestamp:
        grace = pod.deletion_grace_period or 0
        return Cause(PodCause.DELETED.value, "", pod.deletion_timestamp - timedelta(seconds=grace),
                     "deleted by a client (no controller or engine recorded it)", Confidence.MEDIUM, {},
                     audit_query("delete", namespace, name))
    if pod is None and node and snap.node(node) is None and "nodes" not in snap.unread:
        return _pod_gc(snap, node, None, Confidence.LOW)
    return _unknown(namespace, name, node, pod, "")


def _by_code(snap, code, pod, mine, owner_events, namespace, name, node, at, confidence) -> Cause:
    if code == PodCause.PREEMPTED:
        return _preempted(snap, pod, mine, node, at, confidence)
    if code == PodCause.KUBELET_EVICTION:
        return _kubelet(snap, pod, mine, node, _last(mine, "Evicted") or _last(mine, "Preempting"), confidence)
    if code == PodCause.TAINT_MANAGER:
        return _taint(snap, pod, mine, node, at, confidence)
    if code == PodCause.POD_GC:
        return _pod_gc(snap, node, at, confidence)
    engine = _engine(mine)
    if code == PodCause.DELETED and engine:
        return Cause(code.value, _engine_name(engine), engine.first_time,
                     f"deleted by {_engine_name(engine)}: {_engine_note(engine)}", confidence,
                     {"reason": engine.reason, "action": engine.action})
    if engine:
        return Cause(PodCause.EVICTION_API.value, _engine_name(engine), at or engine.first_time,
                     f"evicted through the Eviction API by {_engine_name(engine)}: {_engine_note(engine)}", confidence,
                     {"reason": engine.reason, "action": engine.action})
    return Cause(PodCause.EVICTION_API.value, "", at, "evicted through the Eviction API (the cluster does not "
                 "record the caller)", confidence, {}, audit_query("create", namespace, name, "eviction"))


def _preempted(snap, pod, mine, node, at, confidence) -> Cause:
    event = _last(mine, "Preempted")
    details = {}
    preemptor = ""
    if event:
        m = PREEMPTED_NOTE.search(event.note)
        related = event.related
        if m:
            details.update(preemptorUid=m.group(2), node=m.group(3) if m.group(3) != "cluster" else node)
        found = None
        if related is not None and related.name:
            found = snap.pod(related.namespace, related.name)
            preemptor = f"{related.namespace}/{related.name}" if related.namespace else related.name
        elif m:
            found = next((p for p in snap.pods if p.uid == m.group(2)), None)
            preemptor = found.ref if found is not None else ""
        if found is not None:
            details["preemptorPriority"] = found.priority_value
        elif m:
            details["preemptorReadable"] = False
    victim, source = _victim_priority(snap, pod, event)
    if victim is not None:
        details["victimPriority"] = victim
    details["victimPrioritySource"] = source
    scheduler = event.reporting_controller if event else "default-scheduler"
    who = (f"pod {preemptor}" if preemptor else f"pod with UID {details['preemptorUid']} (no longer readable)"
           if details.get("preemptorUid") else "a higher-priority pod")
    line = f"preempted by {scheduler} for {who}"
    if details.get("node"):
        line += f" on node {details['node']}"
    if "victimPriority" in details and "preemptorPriority" in details:
        line += f" (priority {details['victimPriority']} < {details['preemptorPriority']})"
    else:
        line += (f" (priority {details.get('victimPriority', 'unknown')} < "
                 f"{details.get('preemptorPriority', 'unknown')}: {_unknown_priorities(details)})")
    return Cause(PodCause.PREEMPTED.value, scheduler, at or (event.first_time if event else None), line, confidence,
                 details)


def _victim_priority(snap, pod, event):
    """(value, where it comes from): the pod's spec.priority; of a gone pod, its owner's pod template's
    priorityClassName through the snapshot's PriorityClasses (admission's resolution, the global default
    for none); (None, why not) when neither is readable."""
    if pod is not None:
        return pod.priority_value, "pod"
    name = event.regarding.name if event else ""
    namespace = event.regarding.namespace if event else ""
    guessed = name.rsplit("-", 1)[0]
    owner = next((w for w in (snap.workload(k, namespace, guessed) for k in ("ReplicaSet", "StatefulSet"))
                  if w is not None), None)
    if owner is None:
        return None, "unknown: the pod is gone and its owner is not readable"
    where = f"{owner.kind}/{owner.name} template"
    class_name = (owner.template.get("spec") or {}).get("priorityClassName") or ""
    if "priorityclasses" in snap.unread or (class_name and not snap.priority_classes):
        return None, f"unknown: {where} names class {class_name or '(none)'} but PriorityClasses were not read"
    if not class_name:
        default = snap.global_default_class
        return (default.value, f"{where}: global default class {default.name}") if default else \
            (0, f"{where}: no class, no global default")
    found = snap.priority_class(class_name)
    if found is None:
        return None, f"unknown: {where} names class {class_name}, which is not in the cluster"
    return found.value, f"{where}: class {class_name}"


def _unknown_priorities(details) -> str:
    why = []
    if "preemptorPriority" not in details:
        why.append("the preemptor is not readable")
    if "victimPriority" not in details:
        why.append(details["victimPrioritySource"])
    return "; ".join(why)


def _kubelet(snap, pod, mine, node, event, confidence) -> Cause:
    message = (pod.status.get("message") if pod is not None else "") or (event.note if event else "")
    condition = pod.condition_obj("DisruptionTarget") if pod is not None else None
    m = kubelet.read(message or (condition or {}).get("message") or "")
    details = {"kind": m.kind}
    for key in ("resource", "threshold", "available", "limit"):
        if getattr(m, key):
            details[key] = getattr(m, key)
    if m.format:
        details["messageFormat"] = m.format
    if m.usage:
        details["usage"] = [{"container": u.container, "using": u.using, "request": u.request} for u in m.usage]
    if event and event.annotations.get("starved_resource"):
        details["starvedResource"] = event.annotations["starved_resource"]
    if m.kind == "pressure":
        details.update(_eviction_place(snap, pod, node, m))
    at = (event.first_time if event else None) or parse_time((condition or {}).get("lastTransitionTime"))
    actor = f"kubelet on {node}" if node else "kubelet"
    return Cause(PodCause.KUBELET_EVICTION.value, actor, at, f"evicted by the {actor}: {kubelet.summary(m)}",
                 confidence, details)


def _eviction_place(snap, pod, node, m) -> dict:
    """The evicted pod's place in the kubelet's memory-pressure order (``rankMemoryPressure``,
    pkg/kubelet/eviction/helpers.go) among the node's pods of the snapshot: its usage from the message,
    the others' assumed at their memory request (the cluster keeps no usage)."""
    if m.resource != "memory":
        return {"evictionOrder": f"unknown: the order under {m.resource} pressure is not modelled"}
    if pod is None:
        return {"evictionOrder": "unknown: the pod is gone, and its requests with it"}
    if not node or "pods" in snap.unread:
        return {"evictionOrder": "unknown: the node's other pods were not read"}
    others = [p for p in snap.pods_on(node) if p.key != pod.key and not p.is_terminal]
    usage = {p.key: memory_request(p) or 1 for p in others}  # no request: any usage exceeds it
    try:
        used = sum(amount("memory", u.using) for u in m.usage)
    except SafetyError:
        used = 0
    usage[pod.key] = used or memory_request(pod) or 1
    rows = [r for r in memory_pressure_order([pod, *others], snap, usage, keep={pod.key}) if r["rank"]]
    row = next((r for r in rows if r["pod"].key == pod.key), None)
    if row is None:
        return {"evictionOrder": "unknown: a critical pod, which the kubelet never evicts for node pressure"}
    basis = (f"among the {len(rows)} pods on {node} in the snapshot; the others' usage assumed at their "
             "memory request" if others else f"no other pod of {node} in the snapshot (pods it does not hold are not known)")
    return {"evictionRank": row["rank"], "evictionRankOf": len(rows),
            "evictionOrder": f"{row['rank']} of {len(rows)} ({row['reason']}), {basis}"}


def _oom(snap, pod, node):
    """The newest OOMKilled termination of a container (137 alone is not an OOM kill), and the node's
    SystemOOM event when the whole node ran out (the kubelet writes one only for a node-wide OOM)."""
    best = None
    for cs in pod.status.get("containerStatuses") or []:
        for state in ("state", "lastState"):
            t = (cs.get(state) or {}).get("terminated") or {}
            if t.get("reason") == "OOMKilled":
                at = parse_time(t.get("finishedAt"))
                if best is None or (at and (best[0] is None or at > best[0])):
                    best = (at, cs)
    if best is None:
        return None
    at, cs = best
    spec = next((c for c in pod.spec.get("containers") or [] if c.get("name") == cs.get("name")), {})
    limit = ((spec.get("resources") or {}).get("limits") or {}).get("memory")
    details = {"container": cs.get("name"), "restarts": cs.get("restartCount", 0)}
    if limit is not None:
        details["memoryLimit"] = str(limit)
    system = next((e for e in reversed(about(snap, "Node", "", node) if node else []) if e.reason == "SystemOOM"), None)
    if system is not None:
        details["systemOOM"] = system.note
    where = f" on {node}" if node else ""
    line = f"container {cs.get('name')} was OOM-killed (over its memory limit {details.get('memoryLimit', 'unset')})"
    return Cause(PodCause.OOM_KILLED.value, f"the kernel's OOM killer{where}", at,
                 f"{line}, {details['restarts']} restart(s)", Confidence.HIGH, details)


def _taint(snap, pod, mine, node, at, confidence) -> Cause:
    details = {}
    n = snap.node(node) if node else None
    taints = [t for t in (n.taints if n is not None else []) if t.get("effect") == "NoExecute"]
    if taints:
        t = taints[0]
        details.update(taint=f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:NoExecute")
        if t.get("timeAdded"):
            details["taintAdded"] = t["timeAdded"]
        seconds = next((tol.get("tolerationSeconds") for tol in (pod.tolerations if pod is not None else [])
                        if tol.get("key") == t.get("key") and tol.get("effect") in (None, "", "NoExecute")), None)
        if seconds is not None:
            details["tolerationSeconds"] = seconds
        ready = n.ready_status
        if ready != "True":
            details["nodeReady"] = ready
    event = _last(mine, "TaintManagerEviction")
    actor = event.reporting_controller if event else "taint-eviction-controller"
    line = f"deleted by the {actor}: NoExecute taint {details.get('taint', '(taint since removed)')}"
    line += f" on node {node}" if node else ""
    return Cause(PodCause.TAINT_MANAGER.value, actor, at or (event.first_time if event else None), line, confidence,
                 details)


def _pod_gc(snap, node, at, confidence) -> Cause:
    details = {"node": node} if node else {}
    node_events = about(snap, "Node", "", node) if node else []
    removed = next((f for f in reversed(node_events) if f.reason in ("DeletingNode", "RemovingNode")), None)
    line = f"deleted by the pod garbage collector: node {node} is gone"
    actor = "pod-garbage-collector"
    if removed:
        details["nodeRemovedBy"] = removed.reporting_controller
        line += f" ({removed.reporting_controller}: {removed.note})"
    return Cause(PodCause.POD_GC.value, actor, at or (removed.first_time if removed else None), line, confidence,
                 details, "" if at else "the pod garbage collector records no event: when the pod went is in the "
                 "audit log (verb=delete, objectRef.resource=pods, user "
                 "system:serviceaccount:kube-system:pod-garbage-collector)")


def _deleted(event, pod, namespace, name) -> Cause:
    owner = f"{event.regarding.kind} {event.regarding.name}"
    return Cause(PodCause.DELETED.value, f"{event.reporting_controller} ({owner})", event.first_time,
                 f"deleted by its controller {owner} (scale-down or rollout): {event.note}", Confidence.HIGH,
                 {"owner": owner.replace(" ", "/")})


def _unknown(namespace, name, node, pod, why) -> Cause:
    if pod is not None and not why:
        why = "no disruption recorded: the pod is still there"
    elif not why:
        why = ("the pod is gone and no event names who ended it (events expire an hour after their last write, "
               "the --event-ttl default)")
    return Cause(PodCause.UNKNOWN.value, "", None, why, Confidence.LOW, {},
                 audit_query("delete", namespace, name) + "; or, for an eviction, "
                 + audit_query("create", namespace, name, "eviction"))


def _last(events, reason):
    return next((f for f in reversed(events) if f.reason == reason), None)


def _engine(events):
    return next((f for f in reversed(events) if f.reporting_controller in ENGINES and f.reason != "Scheduled"),
                None)


def _engine_name(f) -> str:
    if f.reporting_controller == OUR_CONTROLLER:  # our notes start with the command: "drain: ..."
        return "kubectl-safety " + f.note.split(":")[0]
    return ENGINES.get(f.reporting_controller, f.reporting_controller)


def _engine_note(f) -> str:
    """An engine's note; ours without the command it starts with (the actor names it)."""
    return f.note.split(": ", 1)[-1] if f.reporting_controller == OUR_CONTROLLER else f.note


def _engine_code(f):
    return PodCause.DELETED if f.action in ("Delete", "Deleting") or f.reason in ("Deleted", "Disrupted") \
        else PodCause.EVICTION_API
