"""Delete pods as ``delete pod`` decided (graceful, or forced with a grace period of 0), record each
force delete as a ``ForceDeleted`` Event on the pod and each graceful one as a ``Deleted`` Event
(``cluster/evidence.py``), and wait until they are gone.

No printing: progress goes out through ``on_event`` (``pod-deleted``, ``pod-delete-failed``,
``event-not-recorded``, ``evidence-not-recorded`` once, and the executor's ``evicted`` when a pod is gone).
"""


from kubectl_safety.cluster.client import Result
from kubectl_safety.cluster.evidence import EventWriter, command_of
from kubectl_safety.cluster.executor import Executor
from kubectl_safety.record import record


@record(slots=False)
class Deletion:
    """What deleting one pod did: the DELETE's outcome and, for a force delete, the Event recorded."""

    outcome: object  # the executor's Outcome
    event: dict = None  # {"reason", "message", "recorded"} of the ForceDeleted Event


class Deleter:
    """Sends the DELETEs of ``delete pod`` (with dryRun=All when ``server_dry_run``)."""

    def __init__(self, connection, *, server_dry_run=False, on_event=None):
        self.executor = Executor(connection, on_event=on_event, dry_run_server=server_dry_run)
        self.server_dry_run = server_dry_run
        self.evidence = EventWriter(connection, command_of(connection), on_failure=lambda message:
                                    self.executor.emit("evidence-not-recorded", message=message))
        self.interrupted = self.executor.interrupted

    def delete(self, pods, *, grace_period=None, force=False, event_messages=None) -> list:
        """One ``Deletion`` per pod, in order. ``force``: grace period 0, and each pod deleted gets a
        ForceDeleted Event with its message from ``event_messages`` ({pod key: message})."""
        out = []
        for pod in pods:
            outcome = self.executor.delete(pod, 0 if force else grace_period)
            event = None
            if outcome.done:
                self.executor.emit("pod-deleted", pod=pod.name, how="deleted (server dry run)" if self.server_dry_run
                                   else "force deleted" if force else "deleted")
                if force and not self.server_dry_run:
                    event = self._record(pod, (event_messages or {}).get(pod.key, ""))
                elif not self.server_dry_run:
                    self.evidence.pod(pod.namespace, pod.name, pod.uid, "Deleted", "Delete",
                                      f"deleted from node {pod.node_name or '-'}")
            elif outcome.result is not Result.GONE:
                self.executor.emit("pod-delete-failed", outcome=outcome)
            out.append(Deletion(outcome, event))
        return out

    def _record(self, pod, message) -> dict:
        outcome = self.executor.record_event(pod, "ForceDeleted", message)
        if not outcome.done:
            self.executor.emit("event-not-recorded", outcome=outcome)
        return {"reason": "ForceDeleted", "message": message, "recorded": outcome.done}

    def wait_gone(self, pods, deadline) -> dict:
        """{pod key: gone} once every pod is gone, or at the monotonic ``deadline``."""
        return self.executor.wait_gone(pods, deadline)
