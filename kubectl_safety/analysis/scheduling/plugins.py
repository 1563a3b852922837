"""The Filter plugins that read only the pod and its node: SchedulingGates, NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity (``node_failures``), then NodePorts and NodeResourcesFit
(``fit_failures``), in the default profile's order."""

from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.model.constants import UNSCHEDULABLE_TAINT
from kubectl_safety.model.quantity import format_amount
from kubectl_safety.model.selectors import (pod_matches_node_selector_and_affinity, toleration_tolerates,
                                            untolerated_taint)


def node_failures(pod, node) -> list:
    """The plugins that read only the pod and the Node object, in order: SchedulingGates (alone),
    NodeUnschedulable, NodeName, TaintToleration, NodeAffinity. The same for any snapshot, and for
    any pod with the same ``node_failures_key``."""
    gates = scheduling_gated(pod)
    if gates:
        return [Failure("SchedulingGates", "scheduling-gated",
                        f"waiting for scheduling gates: {', '.join(gates)} (the pod is not scheduled until "
                        "they are removed)", False)]
    failures = []
    for check in (_node_unschedulable, _node_name, _taints, _node_affinity):
        failure = check(pod, node, None, None)
        if failure:
            failures.append(failure)
    return failures


def fit_failures(pod, node, state, pre) -> list:
    """NodePorts and NodeResourcesFit (``pre``: anything with the pod's ``requests`` and host
    ``ports``): all ``pod_failures`` has to say of a pod without claims, DoNotSchedule spread
    constraints or required pod (anti-)affinity, that no required anti-affinity of a pod selects."""
    port = _ports(pod, node, state, pre)
    return ([port] if port else []) + _resources(pod, node, state, pre)


def node_failures_key(pod) -> str:
    """All ``node_failures`` reads of the pod, as a string (equal strings, equal failures on a node):
    repr is faithful for parsed JSON (equal content written in another key order only misses a memo)."""
    spec = pod.spec
    return repr((spec.get("schedulingGates"), spec.get("nodeName"), spec.get("tolerations"), spec.get("nodeSelector"),
                 (spec.get("affinity") or {}).get("nodeAffinity")))


def scheduling_gated(pod) -> list:
    """The names of the pod's scheduling gates ([] = it may be scheduled)."""
    return [g.get("name") or "?" for g in pod.spec.get("schedulingGates") or []]


def tolerates_cordon(pod) -> bool:
    """Whether the pod tolerates ``node.kubernetes.io/unschedulable:NoSchedule`` (NodeUnschedulable
    lets it onto a cordoned node)."""
    return any(toleration_tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations)


def _node_unschedulable(pod, node, state, pre):
    if node.unschedulable and not tolerates_cordon(pod):
        return Failure("NodeUnschedulable", "node-unschedulable", "node(s) were unschedulable (cordoned)", False)
    return None


def _node_name(pod, node, state, pre):
    if pod.node_name and pod.node_name != node.name:
        return Failure("NodeName", "node-name", f"node(s) didn't match the requested node name {pod.node_name}", False)
    return None


CONDITION_TAINTS = (("Ready", "False", "node.kubernetes.io/not-ready"),
                    ("Ready", "Unknown", "node.kubernetes.io/unreachable"),
                    ("MemoryPressure", "True", "node.kubernetes.io/memory-pressure"),
                    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
                    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
                    ("NetworkUnavailable", "True", "node.kubernetes.io/network-unavailable"))


def implied_taints(node) -> list:
    """NoSchedule taints the node lifecycle controller puts on for the node's conditions
    (TaintNodesByCondition), when the node does not carry them yet (e.g. a hand-written dump)."""
    present = {t.get("key") for t in node.taints}
    out = []
    for kind, status, key in CONDITION_TAINTS:
        cond = node.condition(kind)
        actual = (cond or {}).get("status") or ("Unknown" if kind == "Ready" else "False")
        if actual == status and key not in present:
            out.append({"key": key, "effect": "NoSchedule"})
    return out


def _taints(pod, node, state, pre):
    taint = untolerated_taint(pod, node)
    implied = ""
    if taint is None:
        taint = next((t for t in implied_taints(node)
                      if not any(toleration_tolerates(x, t) for x in pod.tolerations)), None)
        implied = " (implied by the node's conditions)"
    if taint is None:
        return None
    text = (taint.get("key") or "") + (f"={taint['value']}" if taint.get("value") else "") + f":{taint.get('effect')}"
    return Failure("TaintToleration", "untolerated-taint", f"node(s) had untolerated taint {text}{implied}", False)


def _node_affinity(pod, node, state, pre):
    if pod_matches_node_selector_and_affinity(pod, node):
        return None
    return Failure("NodeAffinity", "node-affinity", "node(s) didn't match Pod's node affinity/selector", False)


def port_conflict(wanted, used) -> bool:
    """Whether a (protocol, hostIP, hostPort) collides with one in use (0.0.0.0 collides with every IP)."""
    proto, ip, port = wanted
    return any(u_port == port and u_proto == proto and (ip == u_ip or "0.0.0.0" in (ip, u_ip))
               for u_proto, u_ip, u_port in used)


def _ports(pod, node, state, pre):
    for proto, ip, port in pre.ports:
        if port_conflict((proto, ip, port), state.ports):
            return Failure("NodePorts", "host-port",
                               f"node(s) didn't have free ports for the requested pod ports ({proto}/{port})", True)
    return None


def _resources(pod, node, state, pre):
    alloc = node.allocatable
    out = []
    allowed = alloc.get("pods", 0)
    if state.pod_count + 1 > allowed:
        out.append(Failure("NodeResourcesFit", "too-many-pods",
                           f"Too many pods ({state.pod_count} of {allowed})", True))
    for r, want in pre.requests.items():
        if want <= 0:
            continue
        have = alloc.get(r, 0)
        free = have - state.requested.get(r, 0)
        if want > free:
            too_large = want > have
            detail = (f"requests {format_amount(r, want)}, allocatable {format_amount(r, have)}" if too_large
                      else f"requests {format_amount(r, want)}, free {format_amount(r, max(free, 0))} of {format_amount(r, have)}")
            out.append(Failure("NodeResourcesFit", f"insufficient-{r}", f"Insufficient {r} ({detail})", not too_large))
    if any(not f.resolvable for f in out):  # one unresolvable resource makes the plugin's status unresolvable
        out = [Failure(f.plugin, f.code, f.message, False) for f in out]
    return out
