"""The risks that make a plan not SAFE: one table of stable codes shared by drain, rebalance, check
and rollout (plans collect them in ``plans.common.RiskList``; ``--accept-risk`` is read in ``cli/risks.py``).

A plan is safe (exit 0) only when every risk it lists is accepted by name (``--accept-risk``);
nothing is accepted implicitly. What a kubectl flag already accepts (``--force``,
``--delete-emptydir-data``) is counted by the plan, not listed as a risk.
"""
from kubectl_safety.model.snapshot import NOT_HELD

# code -> (alias accepted by --accept-risk, what it means)
RISKS = {
    "REPLACEMENT_UNPLACEABLE": ("unplaceable", "a replacement fits on no node (every Filter plugin, volumes "
                                "included): it stays Pending"),
    "REPLACEMENT_RETURNS_TO_NODE": ("returns", "a replacement tolerates node.kubernetes.io/unschedulable and can "
                                    "be scheduled back onto the cordoned node, or its controller's template sets "
                                    "nodeName to it (the kubelet admits it there): the node is not emptied"),
    "PDB_BYPASSED": ("bypass", "--disable-eviction deletes pods their PodDisruptionBudget would not let go"),
    "PDB_NEVER_ALLOWS": ("never", "a PodDisruptionBudget never allows the eviction: the pod stays"),
    "PDB_EXHAUSTED": ("exhausted", "a PodDisruptionBudget has no disruption left after earlier waves whose "
                      "replacements do not come back"),
    "POD_NOT_EVICTABLE": ("blocked", "a pod can never be evicted as asked (kubectl's filters or the Eviction API "
                          "refuse it)"),
    "NODE_UNREACHABLE": ("unreachable", "the node does not heartbeat (Ready Unknown): evicted pods stay "
                         "Terminating until its kubelet returns"),
    "NODE_NOT_READY": ("not-ready", "the node is NotReady: evicted pods may stay Terminating until its kubelet "
                       "recovers"),
    "POD_HELD_BY_FINALIZER": ("finalizer", "a finalizer holds an evicted pod: the object stays Terminating until "
                              "whoever owns the finalizer removes it, so the drain does not finish"),
    "NODE_NOT_FOUND": ("not-found", "a node to drain does not exist"),
    "DRAIN_TIMEOUT": ("timeout", "the plan takes longer than --timeout: it stops part way"),
    "SYSTEM_CRITICAL": ("system-critical", "a system-critical pod would be moved"),
    "SERVER_REFUSED": ("server-refused", "the API server refused a request of the plan sent with dryRun=All "
                       "(--dry-run=server): its answer is the message"),
    "SURGE_UNPLACEABLE": ("surge-unplaceable", "--surge: a surge pod fits on no node that stays"),
    "SURGE_LIMIT": ("surge-limit", "--surge: a surge needs more extra pods than --surge-limit (or the "
                    "HorizontalPodAutoscaler's maxReplicas) allows"),
    "SURGE_QUOTA": ("surge-quota", "--surge: a ResourceQuota would refuse the surge pods"),
    "SURGE_NOT_JUDGED": ("surge-not-judged", "--surge: the HorizontalPodAutoscalers or ResourceQuotas could not be "
                         "read: who owns the count and whether a quota refuses the surge pods is not judged"),
    "SURGE_GITOPS": ("gitops", "--surge: a GitOps controller (Argo CD, Flux, Helm) manages the workload and may "
                     "revert its replica count while the drain waits"),
    "SURGE_HPA_NO_SCALE_DOWN": ("hpa-no-scale-down", "--surge: the HorizontalPodAutoscaler never scales down "
                                "(behavior.scaleDown.selectPolicy Disabled): once its minReplicas is restored the "
                                "workload keeps the surge's count, and old pods left to the scale-back stay"),
    "SURGE_SCALE_BACK": ("surge-scale-back", "--surge: when the count returns, the ReplicaSet controller would "
                         "remove another pod (not Ready, Pending or unscheduled: it ranks them first) than the old "
                         "ones marked with the lowest pod-deletion-cost, which would stay"),
    "SNAPSHOT_INCOMPLETE": ("snapshot-incomplete", "the snapshot does not hold a kind the verdict rests on: what "
                            "it would hold is unknown, not empty"),
}
# The kinds (``model/snapshot.VERDICT_RESOURCES``) each verdict rests on; check and rollout plan drains.
RESTS_ON = {"drain": ("nodes", "pods", "poddisruptionbudgets"), "rebalance": ("nodes", "pods", "poddisruptionbudgets"),
            "preemption": ("nodes", "pods", "poddisruptionbudgets"), "delete": ("nodes", "pods")}

NODE_WAY_OUT = ("wait for the node to return; or pass --skip-wait-for-delete-timeout=SECONDS so the drain "
                "does not wait for them (they stay Terminating, StatefulSet pods are not replaced meanwhile); "
                "or, if the node is gone for good, add the out-of-service taint "
                "(node.kubernetes.io/out-of-service=nodeshutdown:NoExecute) or "
                "`kubectl safety delete pod ... --force --confirm` after fencing it")


def incomplete(snapshot, verdict):
    """``(code, message)`` of SNAPSHOT_INCOMPLETE when the snapshot does not hold a kind ``verdict``
    rests on (``RESTS_ON``), naming each; else None."""
    missing = snapshot.not_held(RESTS_ON[verdict])
    if not missing:
        return None
    kinds = ", ".join(resource if why == NOT_HELD else f"{resource} ({why})" for resource, why in sorted(missing.items()))
    return "SNAPSHOT_INCOMPLETE", (f"the snapshot does not hold {kinds}: whether there are any is unknown, not "
                                   "none (a kubectl dump with none of a kind cannot say it asked for it; "
                                   "`kubectl safety snapshot` records every kind it reads)")
