"""``why pod|node``: each cause read from the evidence the cluster keeps, one table row per scenario."""

import itertools
from datetime import datetime, timedelta, timezone

import pytest

from kubectl_safety.analysis.why import kubelet
from kubectl_safety.analysis.why.node import why_node
from kubectl_safety.analysis.why.pod import why_pod
from kubectl_safety.model.parse import build_snapshot

NOW = datetime(2026, 12, 2, 4, 0, tzinfo=timezone.utc)
SERIAL = itertools.count()


def ts(minutes_ago=1.0):
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name="web-1", uid="u-web", node="n1", phase="Running", conditions=(), status=None, containers=None,
        deleting=False, priority=0, limits=None):
    raw = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "shop", "uid": uid, "creationTimestamp": ts(30),
                        "ownerReferences": [{"kind": "ReplicaSet", "name": "web-7d9f", "uid": "rs", "controller": True,
                                             "apiVersion": "apps/v1"}]},
           "spec": {"nodeName": node, "priority": priority,
                    "containers": [{"name": "app", "resources": {"limits": limits or {}}}]},
           "status": {"phase": phase, "conditions": list(conditions), "containerStatuses": containers or [],
                      **(status or {})}}
    if deleting:
        raw["metadata"].update(deletionTimestamp=ts(0), deletionGracePeriodSeconds=30)
    return raw


def node(name="n1", unschedulable=False, taints=(), ready="True", annotations=None, labels=None, managed=None):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "node-uid", "annotations": annotations or {}, "labels": labels or {},
                         "managedFields": managed or []},
            "spec": {"unschedulable": unschedulable, "taints": list(taints)},
            "status": {"conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady",
                                       "lastTransitionTime": ts(5)}]}}


def event(reason, message, kind="Pod", name="web-1", uid="u-web", component="", controller="", related=None,
          action="", minutes_ago=1.0, namespace="shop", annotations=None, new_api=False):
    about = {"kind": kind, "name": name, "namespace": namespace if kind != "Node" else "", "uid": uid}
    meta = {"name": f"{name}.{next(SERIAL)}", "namespace": namespace, "annotations": annotations or {}}
    if new_api:
        return {"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": meta, "regarding": about, "reason": reason, "note": message, "type": "Normal",
                "reportingController": controller, "action": action, "related": related,
                "eventTime": (NOW - timedelta(minutes=minutes_ago)).isoformat()}
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": meta, "involvedObject": about, "reason": reason, "message": message, "type": "Normal",
            "source": {"component": component, "host": "n1" if component == "kubelet" else ""},
            "reportingComponent": controller, "related": related, "action": action,
            "firstTimestamp": ts(minutes_ago), "lastTimestamp": ts(minutes_ago)}


def condition(reason, message, minutes_ago=0.5, status="True"):
    return {"type": "DisruptionTarget", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": ts(minutes_ago)}


def why(objects, events=(), name="web-1"):
    snap = build_snapshot([("t", o) for o in list(objects) + list(events)])
    return why_pod(snap, "shop", name, NOW)


PREEMPTOR = {**pod("big", uid="u-big", priority=1000)}
EVICTED_NOW = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 87340Ki. "
               "Container app was using 1Gi, request is 256Mi, has larger consumption of memory. ")
EVICTED_OLD = ("The node was low on resource: memory. Container app was using 166088Ki, which exceeds its request "
               "of 10Mi. ")
OOM = [{"name": "app", "restartCount": 3, "state": {"running": {}},
        "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": ts(2)}}}]
KARPENTER = event("Evicted", "Evicted pod: Underutilized", controller="karpenter")
DESCHEDULER = event("RemovePodsViolatingNodeTaints", "pod eviction from n1 node by sigs.k8s.io/descheduler",
                    controller="sigs.k8s.io.descheduler", action="Descheduled", new_api=True)
OURS = event("Evicted", "drain: evicted from node n1 (wave 2 of 3)", controller="safety.kubectl.io", action="Evict",
             new_api=True)

CASES = [
    # scenario, objects, events, code, actor, summary contains
    ("preempted_condition_and_event_with_related", [pod(conditions=[condition(
        "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")], deleting=True),
        PREEMPTOR, node()],
     [event("Preempted", "Preempted by pod u-big on node n1", controller="default-scheduler", new_api=True,
            related={"kind": "Pod", "namespace": "shop", "name": "big"}, action="Preempting")],
     "PREEMPTED", "default-scheduler", "for pod shop/big on node n1 (priority 0 < 1000)"),
    ("preempted_gone_pod_core_v1_event_resolved_by_uid", [PREEMPTOR, node()],
     [event("Preempted", "Preempted by pod u-big on node n1", component="default-scheduler")],
     "PREEMPTED", "default-scheduler", "for pod shop/big"),
    ("preempted_preemptor_not_readable", [node()],
     [event("Preempted", "Preempted by pod u-gone on node n1", component="default-scheduler")],
     "PREEMPTED", "default-scheduler", "pod with UID u-gone (no longer readable)"),
    ("kubelet_eviction_current_message", [pod(phase="Failed", status={"reason": "Evicted", "message": EVICTED_NOW},
                                              conditions=[condition("TerminationByKubelet", EVICTED_NOW)])],
     [event("Evicted", EVICTED_NOW, component="kubelet", annotations={"starved_resource": "memory"})],
     "KUBELET_EVICTION", "kubelet on n1",
     "node low on memory (threshold 100Mi, available 87340Ki); container app used 1Gi, request 256Mi"),
    ("kubelet_eviction_old_message_from_event_alone", [],
     [event("Evicted", EVICTED_OLD, component="kubelet")],
     "KUBELET_EVICTION", "kubelet on n1", "node low on memory; container app used 166088Ki, request 10Mi"),
    ("kubelet_node_shutdown", [pod(phase="Failed", status={
        "reason": "Terminated", "message": "Pod was terminated in response to imminent node shutdown."},
        conditions=[condition("TerminationByKubelet", "Pod was terminated in response to imminent node shutdown.")])],
     [],
     "KUBELET_EVICTION", "kubelet on n1", "graceful node shutdown"),
    ("oom_killed_running_pod", [pod(containers=OOM, limits={"memory": "64Mi"})], [],
     "OOM_KILLED", "the kernel's OOM killer on n1", "container app was OOM-killed (over its memory limit 64Mi), 3"),
    ("oom_killed_with_the_nodes_system_oom", [pod(containers=OOM, limits={"memory": "64Mi"})],
     [event("SystemOOM", "System OOM encountered, victim process: app, pid: 42", kind="Node", name="n1", uid="",
            component="kubelet", namespace="default")],
     "OOM_KILLED", "the kernel's OOM killer on n1", "container app was OOM-killed"),
    ("eviction_api_caller_unknown", [pod(conditions=[condition("EvictionByEvictionAPI", "Eviction API: evicting")],
                                         deleting=True)], [],
     "EVICTION_API", "", "the cluster does not record the caller"),
    ("eviction_api_by_karpenter", [pod(conditions=[condition("EvictionByEvictionAPI", "Eviction API: evicting")],
                                       deleting=True)], [KARPENTER],
     "EVICTION_API", "Karpenter", "Evicted pod: Underutilized"),
    ("eviction_by_descheduler_gone_pod", [], [DESCHEDULER],
     "EVICTION_API", "the descheduler", "pod eviction from n1 node by sigs.k8s.io/descheduler"),
    ("eviction_by_kubectl_safety_gone_pod", [], [OURS],
     "EVICTION_API", "kubectl-safety drain", "wave 2 of 3"),
    ("taint_manager_event_without_uid", [node(taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                                                       "timeAdded": ts(6)}], ready="Unknown")],
     [event("Scheduled", "Successfully assigned shop/web-1 to n1", component="default-scheduler", minutes_ago=20),
      event("TaintManagerEviction", "Marking for deletion Pod shop/web-1", uid="",
            component="taint-eviction-controller")],
     "TAINT_MANAGER", "taint-eviction-controller",
     "NoExecute taint node.kubernetes.io/unreachable:NoExecute on node n1"),
    ("taint_manager_cancelled_is_not_a_cause", [pod()],
     [event("TaintManagerEviction", "Cancelling deletion of Pod shop/web-1", uid="",
            component="taint-eviction-controller")],
     "UNKNOWN", "", "no disruption recorded"),
    ("pod_gc_node_gone", [], [event("Scheduled", "Successfully assigned shop/web-1 to n9",
                                    component="default-scheduler", minutes_ago=20)],
     "POD_GC", "pod-garbage-collector", "node n9 is gone"),
    ("pod_gc_condition_while_deleting", [pod(phase="Failed", conditions=[condition(
        "DeletionByPodGC", "PodGC: node no longer exists")], deleting=True)], [],
     "POD_GC", "pod-garbage-collector", "node n1 is gone"),
    ("deleted_by_replicaset_scale_down", [node()],
     [event("SuccessfulDelete", "Deleted pod: web-1", kind="ReplicaSet", name="web-7d9f", uid="rs",
            component="replicaset-controller")],
     "DELETED", "replicaset-controller (ReplicaSet web-7d9f)", "scale-down or rollout"),
    ("deleted_by_statefulset", [node()],
     [event("SuccessfulDelete", "Delete Pod web-1 in StatefulSet web successful", kind="StatefulSet",
            name="web", uid="sts", component="statefulset-controller")],
     "DELETED", "statefulset-controller (StatefulSet web)", "StatefulSet web"),
    ("deleted_by_a_client_while_terminating", [pod(deleting=True)], [],
     "DELETED", "", "deleted by a client"),
    ("expired_unknown_names_the_audit_query", [], [event("Scheduled", "Successfully assigned shop/web-1 to n1",
                                                         component="default-scheduler", minutes_ago=50)]
     + [], "UNKNOWN", "", "no event names who ended it"),
    ("stale_disruption_condition_on_running_pod", [pod(conditions=[condition(
        "EvictionByEvictionAPI", "Eviction API: evicting", minutes_ago=5)])], [],
     "UNKNOWN", "", "older than two minutes"),
]


@pytest.mark.parametrize("scenario,objects,events,code,actor,summary", CASES, ids=[c[0] for c in CASES])
def test_why_pod_cause(scenario, objects, events, code, actor, summary):
    objects = objects + ([node()] if scenario == "expired_unknown_names_the_audit_query" else [])
    r = why(objects, events)
    assert r.cause.code == code, r.cause
    assert r.cause.actor == actor
    assert summary in r.cause.summary
    if code == "UNKNOWN" or not actor:
        assert "audit log" in r.cause.unanswered
    assert r.cause.at is not None or r.cause.unanswered


def test_why_oom_names_the_nodes_system_oom():
    r = why([pod(containers=OOM), node()], [event("SystemOOM", "System OOM encountered, victim process: app, pid: 42",
                                                  kind="Node", name="n1", uid="", component="kubelet",
                                                  namespace="default")])
    assert r.cause.details["systemOOM"] == "System OOM encountered, victim process: app, pid: 42"


def test_why_pod_neither_object_nor_event_is_none():
    assert why([node()], [event("Preempted", "x", name="other")]) is None


def test_why_pod_gone_takes_the_newest_incarnation():
    old = event("Preempted", "Preempted by pod u-big on node n1", uid="old", component="default-scheduler",
                minutes_ago=40)
    new = event("Evicted", EVICTED_NOW, uid="new", component="kubelet", minutes_ago=2)
    r = why([PREEMPTOR], [old, new])
    assert (r.uid, r.cause.code) == ("new", "KUBELET_EVICTION")


def replicaset(class_name=""):
    spec = {"containers": [{"name": "app"}], **({"priorityClassName": class_name} if class_name else {})}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-7d9f", "namespace": "shop",
                                                                        "uid": "rs"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec}}}


def priority_class(name, value, default=False):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


GONE = "web-7d9f-x2k4p"
PREEMPTED = [event("Preempted", "Preempted by pod u-big on node n1", name=GONE, component="default-scheduler")]
PRIORITIES = [
    # scenario, objects, events, pod name, summary contains, victimPrioritySource starts with
    ("gone_victim_owner_template_class", [PREEMPTOR, replicaset("low"), priority_class("low", 100)], PREEMPTED, GONE,
     "(priority 100 < 1000)", "ReplicaSet/web-7d9f template: class low"),
    ("gone_victim_owner_without_class_global_default", [PREEMPTOR, replicaset(), priority_class("base", 5, True)],
     PREEMPTED, GONE, "(priority 5 < 1000)", "ReplicaSet/web-7d9f template: global default class base"),
    ("gone_victim_owner_class_not_read", [PREEMPTOR, replicaset("low")], PREEMPTED, GONE,
     "(priority unknown < 1000: unknown: ReplicaSet/web-7d9f template names class low but PriorityClasses were "
     "not read)", "unknown"),
    ("gone_victim_owner_gone", [PREEMPTOR], PREEMPTED, GONE,
     "(priority unknown < 1000: unknown: the pod is gone and its owner is not readable)", "unknown"),
    ("live_victim_preemptor_gone", [pod(priority=7)],
     [event("Preempted", "Preempted by pod u-gone on node n1", component="default-scheduler")], "web-1",
     "(priority 7 < unknown: the preemptor is not readable)", "pod"),
]


@pytest.mark.parametrize("scenario,objects,events,name,summary,source", PRIORITIES, ids=[c[0] for c in PRIORITIES])
def test_why_preempted_names_both_priorities_or_why_not(scenario, objects, events, name, summary, source):
    r = why(objects, events, name=name)
    assert r.cause.code == "PREEMPTED"
    assert summary in r.cause.summary, r.cause.summary
    assert r.cause.details["victimPrioritySource"].startswith(source)


def requesting(raw, memory=None, priority=0):
    if memory:
        raw["spec"]["containers"][0]["resources"]["requests"] = {"memory": memory}
    raw["spec"]["priority"] = priority
    return raw


EVICTED_POD = requesting(pod(phase="Failed", status={"reason": "Evicted", "message": EVICTED_NOW},
                             conditions=[condition("TerminationByKubelet", EVICTED_NOW)]), "256Mi", priority=100)
NO_REQUEST = requesting(pod("batch", uid="u-batch"))  # BestEffort, priority 0: ranks before the victim
WITHIN = requesting(pod("db", uid="u-db"), "2Gi", priority=100)  # assumed within its request: after
DISK = EVICTED_NOW.replace("memory", "ephemeral-storage")
EVICTION_PLACES = [
    # scenario, objects, events, evictionRank, evictionOrder contains
    ("ranked_among_the_nodes_pods", [EVICTED_POD, NO_REQUEST, WITHIN, node()], [], 2,
     "2 of 3 (usage above its memory request; then priority 100), among the 3 pods on n1 in the snapshot"),
    ("no_other_pod_known", [EVICTED_POD, node()], [], 1,
     "1 of 1 (usage above its memory request; then priority 100), no other pod of n1 in the snapshot (pods it "
     "does not hold are not known)"),
    ("gone_pod", [NO_REQUEST], [event("Evicted", EVICTED_NOW, component="kubelet")], None,
     "unknown: the pod is gone"),
    ("disk_pressure_not_modelled", [requesting(pod(phase="Failed", status={"reason": "Evicted", "message": DISK}),
                                               "256Mi"), NO_REQUEST], [], None,
     "unknown: the order under ephemeral-storage pressure is not modelled"),
]


@pytest.mark.parametrize("scenario,objects,events,rank,order", EVICTION_PLACES, ids=[c[0] for c in EVICTION_PLACES])
def test_why_kubelet_eviction_names_the_pods_place_in_the_eviction_order(scenario, objects, events, rank, order):
    r = why(objects, events)
    assert r.cause.code == "KUBELET_EVICTION"
    assert r.cause.details.get("evictionRank") == rank
    assert order in r.cause.details["evictionOrder"], r.cause.details["evictionOrder"]


KUBELET_MESSAGES = [
    ("current", EVICTED_NOW, "pressure", "memory", "100Mi", "87340Ki", [("app", "1Gi", "256Mi")]),
    ("old", EVICTED_OLD, "pressure", "memory", None, None, [("app", "166088Ki", "10Mi")]),
    ("pod_level", "The node was low on resource: memory. Threshold quantity: 1Gi, available: 10Mi. Pod web was "
     "using 2Gi, request is 1Gi, has larger consumption of memory. ", "pressure", "memory", "1Gi", "10Mi",
     [("", "2Gi", "1Gi")]),
    ("two_containers", "The node was low on resource: ephemeral-storage. Threshold quantity: 1.5Gi, available: "
     "1.2Gi. Container a was using 5Gi, request is 0, has larger consumption of ephemeral-storage. Container b was "
     "using 1Gi, request is 0, has larger consumption of ephemeral-storage. ", "pressure", "ephemeral-storage", "1.5Gi",
     "1.2Gi", [("a", "5Gi", "0"), ("b", "1Gi", "0")]),
    ("empty_dir", 'Usage of EmptyDir volume "cache" exceeds the limit "1Gi". ', "local-storage", "ephemeral-storage",
     None, None, []),
    ("container_storage", 'Container app exceeded its local ephemeral storage limit "2Gi". ', "local-storage",
     "ephemeral-storage", None, None, [("app", "", "")]),
    ("critical", "Preempted in order to admit critical pod", "critical-pod", None, None, None, []),
    ("admission", "The node had condition: [DiskPressure]. ", "admission", "[DiskPressure]", None, None, []),
]


@pytest.mark.parametrize("case,message,kind,resource,threshold,available,usage", KUBELET_MESSAGES,
                         ids=[m[0] for m in KUBELET_MESSAGES])
def test_kubelet_eviction_message_formats(case, message, kind, resource, threshold, available, usage):
    m = kubelet.read(message)
    assert (m.kind, m.resource, m.threshold, m.available) == (kind, resource, threshold, available)
    assert [(u.container, u.using, u.request) for u in m.usage] == usage


def wn(objects, events=(), name="n1"):
    snap = build_snapshot([("t", o) for o in list(objects) + list(events)])
    return why_node(snap, name, NOW)


CORDON = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": ts(10)}
KUBECTL = [{"manager": "kubectl-cordon", "operation": "Update", "time": ts(10),
            "fieldsV1": {"f:spec": {"f:unschedulable": {}}}}]
NODE_CASES = [
    ("cordoned_by_kubectl_safety_event", [node(unschedulable=True, taints=[CORDON])],
     [event("Cordoned", "drain: cordoned before evicting 3 pods (wave 1 of 1)", kind="Node", name="n1",
            uid="node-uid", controller="safety.kubectl.io", action="Cordon", new_api=True, namespace="default")],
     "CORDONED", "kubectl-safety drain"),
    ("cordoned_by_kubectl_managed_fields", [node(unschedulable=True, taints=[CORDON], managed=KUBECTL)], [],
     "CORDONED", "kubectl (cordon or drain)"),
    ("cordoned_by_rollout_annotation", [node(unschedulable=True, annotations={"safety.kubectl.io/rollout": "r1"})],
     [], "CORDONED", "kubectl-safety rollout"),
    ("cordoned_by_karpenter", [node(unschedulable=True, taints=[{"key": "karpenter.sh/disrupted",
                                                                   "effect": "NoSchedule"}])], [],
     "CORDONED", "Karpenter"),
    ("cordoned_by_nobody_known", [node(unschedulable=True, taints=[CORDON])], [], "UNKNOWN", ""),
    ("tainted_by_cluster_autoscaler", [node(taints=[{"key": "ToBeDeletedByClusterAutoscaler", "value": "1700000000",
                                                     "effect": "NoSchedule"}])], [], "TAINTED", "Cluster Autoscaler"),
    ("not_ready", [node(ready="Unknown", taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}])],
     [], "NOT_READY", "node-lifecycle-controller"),
    ("node_gone_with_event", [], [event("RemovingNode", "Node n1 event: Removing Node n1 from Controller",
                                        kind="Node", name="n1", uid="", component="node-controller",
                                        namespace="default")], "DELETED", "node-controller"),
    ("schedulable", [node()], [], "SCHEDULABLE", ""),
]


@pytest.mark.parametrize("scenario,objects,events,code,actor", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_why_node_cause(scenario, objects, events, code, actor):
    r = wn(objects, events)
    assert (r.cause.code, r.cause.actor) == (code, actor), r.cause
    if code == "CORDONED" and scenario.endswith("managed_fields"):
        assert r.cause.at == NOW - timedelta(minutes=10)


def kured(lock, name="kured", namespace="kube-system"):
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": namespace, "annotations": {"weave.works/kured-node-lock": lock}},
            "spec": {"selector": {"matchLabels": {"app": "kured"}}, "template": {"spec": {"containers": []}}}}


def cluster_scoped(e):
    """An event about a cluster-scoped object (in namespace default, its object naming none)."""
    e["involvedObject"]["namespace"] = ""
    return e


CLAIMED = {"ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "default-x7k2p"}]}
DISRUPTED = {"key": "karpenter.sh/disrupted", "effect": "NoSchedule", "timeAdded": ts(3)}
ENGINE_NODE_CASES = [
    # scenario, objects, events, code, actor, summary contains, evidence reason contains
    ("kured_lock_one_holder", [node(unschedulable=True, taints=[CORDON]), kured(
        '{"nodeID":"n1","metadata":{"unschedulable":false},"created":"2026-12-02T03:55:00Z","TTL":0}')], [],
     "CORDONED", "kured", "kured's lock weave.works/kured-node-lock on DaemonSet kube-system/kured, held since "
     "2026-12-02T03:55:00Z", "weave.works/kured-node-lock on DaemonSet kube-system/kured"),
    ("kured_lock_concurrency_holders", [node(unschedulable=True, taints=[CORDON]), kured(
        '{"maxOwners":2,"locks":[{"nodeID":"n0","created":"2026-12-02T03:50:00Z"},'
        '{"nodeID":"n1","created":"2026-12-02T03:55:00Z"}]}', name="kured-ds", namespace="ops")], [],
     "CORDONED", "kured", "DaemonSet ops/kured-ds", "kured-node-lock on DaemonSet ops/kured-ds"),
    ("kured_lock_held_by_another_node", [node(unschedulable=True, taints=[CORDON]), kured(
        '{"nodeID":"n2","created":"2026-12-02T03:55:00Z"}')], [], "UNKNOWN", "", "cordoned; who cordoned", ""),
    ("karpenter_nodeclaim_event", [{**node(taints=[DISRUPTED]), "metadata": {
        **node()["metadata"], **CLAIMED}}],
     [cluster_scoped(event("DisruptionTerminating", "Disrupting NodeClaim: Underutilized", kind="NodeClaim",
                           name="default-x7k2p", uid="nc", component="karpenter", namespace="default"))],
     "TAINTED", "Karpenter", "by Karpenter (DisruptionTerminating: Disrupting NodeClaim: Underutilized)",
     "DisruptionTerminating"),
]


@pytest.mark.parametrize("scenario,objects,events,code,actor,summary,evidence", ENGINE_NODE_CASES,
                         ids=[c[0] for c in ENGINE_NODE_CASES])
def test_why_node_reads_kureds_lock_and_karpenters_nodeclaim_events(scenario, objects, events, code, actor, summary,
                                                                    evidence):
    r = wn(objects, events)
    assert (r.cause.code, r.cause.actor) == (code, actor), r.cause
    assert summary in r.cause.summary
    assert any(evidence in f"{e.source} {e.reason}" for e in r.evidence) if evidence else True


def test_why_node_neither_object_nor_event_is_none():
    assert wn([node("other")]) is None


def machine(deleting=True, **annotations):
    meta = {"name": "md-0-abc", "namespace": "capi", "annotations": annotations}
    if deleting:
        meta["deletionTimestamp"] = ts(2)
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "metadata": meta,
            "spec": {"clusterName": "c1"}, "status": {"nodeRef": {"name": "n1"}}}


CAPI_NODE = {"annotations": {"cluster.x-k8s.io/machine": "md-0-abc", "cluster.x-k8s.io/cluster-namespace": "capi"}}
HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/volume-detach"


@pytest.mark.parametrize("scenario, objects, evidence", [
    ("machine_deleting_held_by_a_pre_drain_hook",
     [{**node(unschedulable=True, taints=[CORDON]), "metadata": {**node()["metadata"], **CAPI_NODE}},
      machine(**{HOOK: "storage-operator"})],
     ["owner Machine capi/md-0-abc is being deleted", f"annotation {HOOK} on Machine capi/md-0-abc"]),
    ("machine_not_in_the_snapshot_names_it_from_the_node",
     [{**node(unschedulable=True, taints=[CORDON]), "metadata": {**node()["metadata"], **CAPI_NODE}}],
     ["annotation cluster.x-k8s.io/machine"]),
    ("another_machine_of_the_same_name_elsewhere_is_not_this_nodes",
     [{**node(unschedulable=True, taints=[CORDON]), "metadata": {**node()["metadata"], **CAPI_NODE}},
      {**machine(**{HOOK: "x"}), "status": {"nodeRef": {"name": "n2"}}}],
     ["annotation cluster.x-k8s.io/machine"]),
])
def test_why_node_of_cluster_api_reads_its_machines_deletion_and_drain_hooks(scenario, objects, evidence):
    r = wn(objects, [])
    seen = [f"{e.source} {e.reason}" for e in r.evidence]
    assert all(any(want in s for s in seen) for want in evidence), seen
    hooked = [e for e in r.evidence if HOOK in e.reason]
    assert bool(hooked) == scenario.startswith("machine_deleting"), seen
    assert all(e.by == "storage-operator" for e in hooked)
