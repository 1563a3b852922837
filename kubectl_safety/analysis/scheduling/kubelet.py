"""What the kubelet checks before it runs a pod bound to its node without the scheduler
(``spec.nodeName`` set at create): ``predicateAdmitHandler.Admit`` (pkg/kubelet/lifecycle/predicate.go,
``generalFilter``): the scheduler's ``AdmissionCheck`` (NodeResourcesFit, NodeAffinity, NodeName,
NodePorts) and untolerated NoExecute taints. Cordons, NoSchedule taints, spread, inter-pod affinity
and volumes are not checked: a pod the kubelet rejects fails (phase Failed) and is not retried."""

from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.analysis.scheduling.filters import filter_node
from kubectl_safety.model.selectors import untolerated_taint

ADMISSION_PLUGINS = ("NodeResourcesFit", "NodeAffinity", "NodeName", "NodePorts")


def kubelet_rejects(pod, node, snapshot, state=None) -> list:
    """The reasons the kubelet of ``node`` rejects ``pod`` ([] = it runs it); ``state`` as for
    ``filter_node`` (the node's pods, when they differ from the snapshot)."""
    failures = [f for f in filter_node(pod, node, snapshot, state) if f.plugin in ADMISSION_PLUGINS]
    taint = untolerated_taint(pod, node, effects=("NoExecute",))
    if taint is not None:
        text = (taint.get("key") or "") + (f"={taint['value']}" if taint.get("value") else "") + ":NoExecute"
        failures.append(Failure("TaintToleration", "untolerated-taint",
                                f"node(s) had untolerated taint {text}", False))
    return failures
