"""What finishes a pod's deletion once it is asked for (pure).

- The pod GC force-deletes terminating pods on a node that is not Ready and carries the
  ``node.kubernetes.io/out-of-service`` taint (any value or effect), so no kubelet has to confirm.
- A finalizer keeps the object (Terminating) until someone removes it, force or not. The ones the
  cluster's own controllers remove when the pod ends do not hold it: the Job controller's
  ``batch.kubernetes.io/job-tracking`` and the garbage collector's ``orphan`` and ``foregroundDeletion``.
"""

OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
CONTROLLER_FINALIZERS = frozenset({"batch.kubernetes.io/job-tracking", "orphan", "foregroundDeletion"})


def pod_gc_force_deletes(node, state) -> bool:
    """Whether the pod GC force-deletes the node's terminating pods (``state`` from node_health)."""
    return (node is not None and state["state"] != "Ready"
            and any(t.get("key") == OUT_OF_SERVICE_TAINT for t in node.taints))


def holding_finalizers(pod) -> list:
    """The pod's finalizers that nothing in the cluster removes by itself when it ends."""
    return [f for f in pod.finalizers if f not in CONTROLLER_FINALIZERS]
