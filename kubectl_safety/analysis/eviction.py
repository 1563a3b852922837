"""The evictor: which pods may leave a node, and every reason why not.

One ordered list of filters per way of moving pods, shaped like kubectl's ``makeFilters`` and the
descheduler's DefaultEvictor constraints:

- drain (and check and rollout, which plan drains): ``KUBECTL_FILTERS`` in kubectl's order, then the
  Eviction API's rules (``eviction_rules``). Severity ``error`` blocks the drain, ``warning``
  needs attention, ``info`` explains; every applicable reason is kept (kubectl keeps only the last
  warning of a pod).
- rebalance: ``DESCHEDULER_FILTERS``, the descheduler's protections; every failure is kept
  (``refusals``), as its ``Filter`` does.

The lists differ where their upstreams do: kubectl drain evicts system-critical pods and pods with
hostPath volumes, and waits for terminating ones; the descheduler moves none of them.
"""

from dataclasses import field

from kubectl_safety.analysis.plans.common import Finding
from kubectl_safety.analysis.budgets import skips_pdb_check, status_sync_failure as sync_failure, unhealthy_goes_free
from kubectl_safety.analysis.plans.common import Action, Reason, Severity
from kubectl_safety.analysis.plans.drain import Blocker
from kubectl_safety.model.constants import SYSTEM_CLASSES, SYSTEM_CRITICAL
from kubectl_safety.record import record

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


@record(frozen=False, slots=False)
class PodVerdict:
    """What the filters and the eviction rules say about one pod (before PDB accounting).

    ``decision``: skip | delete (leave the node) | blocked. ``eviction``: how the Eviction API
    treats a pod that leaves: ``free`` (no PDB check or no PDB), ``budget`` (needs one unit of
    its PDB's disruptionsAllowed), ``delete`` (--disable-eviction), ``refused`` (several PDBs).
    """

    pod: object
    decision: str = "delete"
    eviction: str = "free"
    pdb: object = None
    reasons: list = field(default_factory=list)

    def add(self, code, severity, message):
        self.reasons.append(Reason(code, Severity(severity), message))


def kubectl_filters(v: PodVerdict, options, now, daemonsets_known: bool, snapshot):
    """kubectl's filters in kubectl's order; a filter that skips the pod ends the evaluation."""
    for pod_filter in KUBECTL_FILTERS:
        if pod_filter(v, options, now, daemonsets_known, snapshot):
            return


def _skip_deleted(v, options, now, daemonsets_known, snapshot) -> bool:
    pod, wait = v.pod, options.skip_wait_for_delete_timeout
    if wait > 0 and pod.deletion_timestamp is not None and now is not None \
            and (now - pod.deletion_timestamp).total_seconds() > wait:
        v.decision = "skip"
        v.add("SKIP_DELETED", "info", f"terminating for more than --skip-wait-for-delete-timeout={wait}s: "
              "not waited for")
        return True
    return False


def _daemonset(v, options, now, daemonsets_known, snapshot) -> bool:
    pod = v.pod
    ref = pod.controller_ref
    if not (ref and ref.get("kind") == "DaemonSet" and ref.get("apiVersion", "apps/v1") == "apps/v1"
            and not pod.is_terminal):
        return False
    orphaned = daemonsets_known and snapshot.workload("DaemonSet", pod.namespace, ref.get("name")) is None
    if orphaned and options.force:
        v.add("DAEMONSET_ORPHANED", "warning", f'daemonsets.apps "{ref.get("name")}" not found: '
              "deleting the orphaned pod (--force)")
        return False
    if orphaned:
        v.decision = "blocked"
        v.add("DAEMONSET_ORPHANED", "error", f'daemonsets.apps "{ref.get("name")}" not found '
              "(use --force to delete the orphaned pod)")
    elif options.ignore_daemonsets:
        v.decision = "skip"
        v.add("DAEMONSET", "info", "ignoring DaemonSet-managed Pods: the DaemonSet keeps it on the node")
    else:
        v.decision = "blocked"
        v.add("DAEMONSET", "error", "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)")
    return True


def _mirror(v, options, now, daemonsets_known, snapshot) -> bool:
    if v.pod.is_mirror:
        v.decision = "skip"
        v.add("MIRROR_POD", "info", "mirror pod of a static pod: the kubelet owns it, the API cannot delete it")
        return True
    return False


def _local_storage(v, options, now, daemonsets_known, snapshot) -> bool:
    if not v.pod.is_terminal and local_volumes(v.pod, host_path=False):
        if options.delete_emptydir_data:
            v.add("LOCAL_STORAGE", "warning", "deleting Pods with local storage: emptyDir data is lost")
        else:
            v.decision = "blocked"
            v.add("LOCAL_STORAGE", "error", "cannot delete Pods with local storage "
                  "(use --delete-emptydir-data to override)")
    return False  # kubectl goes on: an unmanaged pod with local storage gets both reasons


def _unreplicated(v, options, now, daemonsets_known, snapshot) -> bool:
    if not v.pod.is_terminal and not v.pod.controller_ref:
        if options.force:
            v.add("UNMANAGED", "warning", "deleting Pods that declare no controller: it will not be recreated")
        else:
            v.decision = "blocked"
            v.add("UNMANAGED", "error", "cannot delete Pods that declare no controller (use --force to override)")
    return False


# kubectl's makeFilters order; each returns True to end the evaluation (the pod is skipped or blocked)
KUBECTL_FILTERS = (_skip_deleted, _daemonset, _mirror, _local_storage, _unreplicated)
# the codes with which they block a pod (kubectl's filter errors: a flag lifts each)
FILTER_CODES = ("DAEMONSET", "DAEMONSET_ORPHANED", "LOCAL_STORAGE", "UNMANAGED")


def blocker(action, reasons) -> Blocker:
    """What keeps a pod of this action (and these reasons) on its node: a kubectl filter's error, else
    (blocked) the Eviction API's rules."""
    if action is not Action.BLOCKED:
        return Blocker.NONE
    filtered = any(r.code in FILTER_CODES for r in reasons if r.severity is Severity.ERROR)
    return Blocker.KUBECTL_FILTER if filtered else Blocker.EVICTION_API


def kept_on_node(pod) -> bool:
    """A pod that belongs to its node whatever the drain: a DaemonSet's, or a static pod's mirror."""
    return (pod.controller_ref or {}).get("kind") == "DaemonSet" or pod.is_mirror


def eviction_rules(v: PodVerdict, options, snapshot):
    """The API server's Eviction rules (eviction.go) and cluster-autoscaler style warnings."""
    pod = v.pod
    annotation = pod.annotations.get(SAFE_TO_EVICT)
    if annotation == "false":
        v.add("SAFE_TO_EVICT_FALSE", "warning", f"annotated {SAFE_TO_EVICT}=false: its owners asked not to "
              "evict it (the cluster autoscaler never does; kubectl drain does)")
    elif annotation == "on-completion":
        v.add("SAFE_TO_EVICT_ON_COMPLETION", "warning", f"annotated {SAFE_TO_EVICT}=on-completion: "
              "its owners expect it to finish before the node goes")
    pdbs = snapshot.pdbs_for(pod)
    if options.disable_eviction:
        v.eviction = "delete"
        v.pdb = pdbs[0] if len(pdbs) == 1 else None
        v.add("EVICTION_DISABLED", "warning", "--disable-eviction: deleted directly, bypassing "
              + (f"PodDisruptionBudget {_ref(pdbs[0])}" if len(pdbs) == 1 else "PodDisruptionBudgets"))
        return
    if skips_pdb_check(pod):
        state = ("terminal (" + pod.phase + ")" if pod.is_terminal else
                 "already terminating" if pod.is_terminating else "Pending")
        code = "TERMINAL" if pod.is_terminal else "ALREADY_TERMINATING" if pod.is_terminating else "PENDING"
        v.add(code, "info", f"{state}: the Eviction API deletes it without a PodDisruptionBudget check")
        v.pdb = pdbs[0] if len(pdbs) == 1 else None
        return
    if len(pdbs) > 1:
        v.decision, v.eviction = "blocked", "refused"
        names = ", ".join(_ref(b) for b in pdbs)
        v.add("MULTIPLE_PDBS", "error", f"matched by {len(pdbs)} PodDisruptionBudgets ({names}): the Eviction "
              "API refuses such pods whatever the budgets allow (fix the selectors, or --disable-eviction)")
        return
    if not pdbs:
        if pod.namespace == "kube-system":
            v.add("KUBE_SYSTEM_NO_PDB", "warning", "kube-system pod without a PodDisruptionBudget: "
                  "nothing limits how many of its replicas go at once")
        return
    pdb = v.pdb = pdbs[0]
    if not pod.is_ready:
        free = unhealthy_goes_free(pdb)
        healthy, desired = pdb.status_int("currentHealthy") or 0, pdb.status_int("desiredHealthy") or 0
        if free == "AlwaysAllow":
            v.add("UNHEALTHY_ALWAYS_ALLOW", "info", f"not Ready and PDB {_ref(pdb)} has unhealthyPodEvictionPolicy "
                  "AlwaysAllow: evicted without using its budget")
            return
        if free:
            v.add("UNHEALTHY_BUDGET_HEALTHY", "info", f"not Ready and PDB {_ref(pdb)} is healthy (has {healthy}, "
                  f"needs {desired}): evicted without using its budget (IfHealthyBudget)")
            return
        v.add("UNHEALTHY_NEEDS_BUDGET", "warning", f"not Ready and PDB {_ref(pdb)} is not healthy (has {healthy}, "
              f"needs {desired}): with IfHealthyBudget it needs a disruption like a healthy pod "
              "(unhealthyPodEvictionPolicy AlwaysAllow would let it go)")
    v.eviction = "budget"
    failed = sync_failure(pdb)
    if failed:
        v.add("PDB_SYNC_FAILED", "warning", f"PDB {_ref(pdb)}: the disruption controller cannot compute it "
              f"({failed}) and fails safe to 0 disruptions allowed: every eviction is refused")
    elif not pdb.status_is_current:
        v.add("PDB_STATUS_STALE", "warning", f"PDB {_ref(pdb)} status is older than its spec: the API server "
              "answers 429 until the disruption controller catches up")


def _ref(obj) -> str:
    return f"{obj.namespace}/{obj.name}"


def local_volumes(pod, host_path: bool) -> list:
    """Names of the pod's node-local volumes: emptyDir, and hostPath when ``host_path``."""
    return [vol.get("name") for vol in pod.volumes if "emptyDir" in vol or (host_path and "hostPath" in vol)]


def is_system_critical(pod) -> bool:
    """A system-critical pod (the descheduler's protection): by class name or priority."""
    return pod.priority_class_name in SYSTEM_CLASSES or pod.priority_value >= SYSTEM_CRITICAL


# -- the descheduler's protections (rebalance) ---------------------------------------------------

def refusals(pod, snapshot, evict_local_storage: bool) -> list:
    """Every reason the descheduler's evictor refuses ``pod``, in ``DESCHEDULER_FILTERS`` order ([]: it may go)."""
    out = []
    for code, refuse in DESCHEDULER_FILTERS:
        message = refuse(pod, snapshot, evict_local_storage)
        if message:
            out.append(Finding(code, "error", message))
    return out


def _refuse_mirror(pod, snapshot, evict_local_storage) -> str:
    return "mirror (static) pod: the API cannot evict it" if pod.is_mirror else ""


def _refuse_bare(pod, snapshot, evict_local_storage) -> str:
    return "bare pod: no controller would re-create it" if pod.controller_ref is None else ""


def _refuse_daemonset(pod, snapshot, evict_local_storage) -> str:
    ref = pod.controller_ref
    return "DaemonSet pod: it would come back on the same node" if ref and ref.get("kind") == "DaemonSet" else ""


def _refuse_terminating(pod, snapshot, evict_local_storage) -> str:
    return "already terminating" if pod.is_terminating else ""


def _refuse_system_critical(pod, snapshot, evict_local_storage) -> str:
    if not is_system_critical(pod):
        return ""
    return (f"system-critical pod (priority {pod.priority_value}"
            + (f", {pod.priority_class_name}" if pod.priority_class_name else "") + "): never moved")


def _refuse_local_storage(pod, snapshot, evict_local_storage) -> str:
    local = local_volumes(pod, host_path=True)
    if local and not evict_local_storage:
        return f"uses local storage ({', '.join(local)}): add --evict-local-storage to allow"
    return ""


def _refuse_multiple_pdbs(pod, snapshot, evict_local_storage) -> str:
    budgets = snapshot.pdbs_for(pod)
    if len(budgets) > 1:
        return ("selected by more than one PDB (" + ", ".join(b.name for b in budgets)
                + "): the Eviction API refuses it")
    return ""


DESCHEDULER_FILTERS = (("MIRROR_POD", _refuse_mirror), ("UNMANAGED", _refuse_bare), ("DAEMONSET", _refuse_daemonset),
                       ("ALREADY_TERMINATING", _refuse_terminating), ("SYSTEM_CRITICAL", _refuse_system_critical),
                       ("LOCAL_STORAGE", _refuse_local_storage), ("MULTIPLE_PDBS", _refuse_multiple_pdbs))
