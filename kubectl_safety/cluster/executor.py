"""Carry out plans on the live API: cordon, evict, delete, wait, record events.

Every call is one attempt with a classified ``Outcome`` (never an exception for an API answer);
``evict_with_retry`` and ``wait_gone`` loop until a monotonic deadline (``None`` = no deadline)
or until ``interrupted`` is set (the CLI sets it on SIGINT/SIGTERM). Safe to call from threads.

Results: ``cluster/client.py`` (``Result``); ``not-found`` of a pod is ``gone``, and so is a ``conflict``
whose pod was replaced (the UID precondition failed).

Retrying an eviction is always safe: every eviction carries the pod's UID as a precondition, so
a retry can only evict the pod that was planned, and never a replacement with the same name.
"""

import threading
import time
from datetime import datetime, timezone
from urllib.parse import quote

from kubectl_safety.cluster.client import RETRIED, Client, Outcome, Result, version_of
from kubectl_safety.cluster.evidence import EVENTS_PATH, REPORTING_CONTROLLER, event_body
from kubectl_safety.errors import ClusterError, SafetyError

MAX_THROTTLE_DELAY = 30.0


def _ident(pod):
    """(namespace, name, uid) of a model Pod, a raw pod dict or a (ns, name[, uid]) tuple."""
    if isinstance(pod, tuple):
        return pod[0], pod[1], pod[2] if len(pod) > 2 else ""
    raw = getattr(pod, "raw", pod)
    meta = raw.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or "", meta.get("uid") or ""


class Executor:
    """Mutations through one ``Connection``, optionally as server-side dry runs (dryRun=All)."""

    def __init__(self, connection, *, dry_run_server=False, on_event=None,
                 clock=time.monotonic, sleep=time.sleep):
        self.connection = connection
        self.client = Client(connection)
        self.dry_run_server = dry_run_server
        self.on_event = on_event
        self.clock = clock
        self._sleep = sleep
        self.interrupted = threading.Event()
        self._lock = threading.Lock()

    # -- helpers ---------------------------------------------------------------------------
    def emit(self, event: str, **fields):
        """Send one progress event to ``on_event`` (serialized across threads)."""
        if self.on_event is not None:
            with self._lock:
                self.on_event({"event": event, **fields})

    def pause(self, seconds):
        """Sleep, but wake up at once when interrupted."""
        if seconds <= 0:
            return
        if self._sleep is time.sleep:
            self.interrupted.wait(seconds)
        else:
            self._sleep(seconds)

    def _left(self, deadline):
        return None if deadline is None else deadline - self.clock()

    def _dry_query(self):
        return {"dryRun": "All"} if self.dry_run_server else None

    # -- nodes -----------------------------------------------------------------------------
    def cordon(self, node_name, unschedulable=True) -> Outcome:
        """Set ``spec.unschedulable`` (strategic merge patch); 'done' also when already so."""
        action = "cordon" if unschedulable else "uncordon"
        read = self.client.get("nodes", name=node_name, action=action)
        if not read.done:
            return read
        node = read.body
        if bool((node.get("spec") or {}).get("unschedulable")) == unschedulable:
            return Outcome(node_name, action, Result.DONE, read.status, f"already {action}ed",
                           version=version_of(node))
        outcome = _unless_unauthorized(self.client.patch("nodes", None, node_name,
                                                         {"spec": {"unschedulable": unschedulable}},
                                                         query=self._dry_query(), action=action))
        if outcome.done:
            outcome.message = f"{action}ed" + (" (server dry run)" if self.dry_run_server else "")
            outcome.version = "" if self.dry_run_server else version_of(outcome.body)
        return outcome

    # -- pods ------------------------------------------------------------------------------
    def evict(self, pod, grace_period=None) -> Outcome:
        """One policy/v1 Eviction, with a UID precondition so a same-named replacement is safe."""
        namespace, name, uid = _ident(pod)
        options = self._delete_options(uid, grace_period)
        body = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": name, "namespace": namespace}, "deleteOptions": options}
        outcome = self.client.send("POST", "pods", namespace, name, subresource="eviction", body=body,
                                   action="evict")
        return _unless_unauthorized(self._pod_outcome(pod, outcome))

    def delete(self, pod, grace_period=None) -> Outcome:
        """One DELETE of the pod (bypasses PDBs), with a UID precondition."""
        namespace, name, uid = _ident(pod)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", **self._delete_options(uid, grace_period)}
        return self._pod_outcome(pod, self.client.delete("pods", namespace, name, body=body))

    def _delete_options(self, uid, grace_period):
        options = {}
        if uid:
            options["preconditions"] = {"uid": uid}
        if grace_period is not None and grace_period >= 0:
            options["gracePeriodSeconds"] = int(grace_period)
        if self.dry_run_server:
            options["dryRun"] = ["All"]
        return options

    def evict_with_retry(self, pod, deadline, grace_period=None, retry_delay=5.0) -> Outcome:
        """Evict, retrying PDB refusals and throttling until ``deadline`` (monotonic, or None).

        Before each retry the pod is read again: if it is gone or replaced (UID changed) the
        result is 'gone'. On timeout or interrupt the last refusal is returned.
        """
        namespace, name, _ = _ident(pod)
        ref = f"{namespace}/{name}"
        delay = retry_delay
        self.emit("evicting", pod=ref, timeLeft=self._left(deadline), dryRun=self.dry_run_server)
        while True:
            outcome = self.evict(pod, grace_period)
            if outcome.result not in RETRIED and not self._namespace_terminating(outcome):
                self.emit(outcome.result, pod=ref, status=outcome.status, message=outcome.message)
                return outcome
            if outcome.result in (Result.THROTTLED, Result.UNAVAILABLE):
                delay = min(delay * 1.5, MAX_THROTTLE_DELAY)
            pause = max(retry_delay if outcome.result is Result.PDB_BLOCKED else delay,
                        outcome.retry_after)
            left = self._left(deadline)
            if self.interrupted.is_set() or (left is not None and left <= 0):
                self.emit("gave-up", pod=ref, status=outcome.status, message=outcome.message,
                          reason="interrupted" if self.interrupted.is_set() else "timeout")
                return outcome
            pause = pause if left is None else min(pause, left)  # one last attempt at the deadline
            self.emit("retrying", pod=ref, result=outcome.result, status=outcome.status,
                      message=outcome.message, retryIn=pause, timeLeft=left)
            self.pause(pause)
            if self.interrupted.is_set():
                return outcome
            if self._gone(pod):
                self.emit("gone", pod=ref)
                return Outcome(ref, "evict", Result.GONE, 404, "the pod is gone or was replaced")

    def _namespace_terminating(self, outcome):
        return namespace_terminating(outcome)

    def _gone(self, pod) -> bool:
        namespace, name, uid = _ident(pod)
        outcome = self.client.get("pods", namespace, name)
        if outcome.result is Result.NOT_FOUND:
            return True
        return outcome.done and bool(uid) and (outcome.body.get("metadata") or {}).get("uid") != uid

    def wait_gone(self, pods, deadline, poll=1.0) -> dict:
        """Poll until every pod is deleted (404) or replaced (UID changed); {pod key: gone}.

        Pods with a node are checked with one LIST per node (field selector), others by GET.
        """
        idents = {(_ident(p)[0], _ident(p)[1]): p for p in pods}
        gone = {key: False for key in idents}
        while True:
            remaining = self._still_there([idents[k] for k, g in gone.items() if not g])
            for key in gone:
                if not gone[key] and key not in remaining:
                    gone[key] = True
                    self.emit("evicted", pod=f"{key[0]}/{key[1]}")
            left = self._left(deadline)
            if not remaining or self.interrupted.is_set() or (left is not None and left <= 0):
                return gone
            self.pause(poll if left is None else min(poll, left))

    def _still_there(self, pods) -> set:
        """Keys of the pods (same UID) that still exist."""
        by_node, present = {}, set()
        for pod in pods:
            raw = {} if isinstance(pod, tuple) else getattr(pod, "raw", pod)
            node = (raw.get("spec") or {}).get("nodeName")
            by_node.setdefault(node, []).append(pod)
        for node, group in by_node.items():
            if node and len(group) > 1:
                present |= self._present_on_node(node, group)
            else:
                present |= {(_ident(p)[0], _ident(p)[1]) for p in group if not self._gone(p)}
        return present

    def _present_on_node(self, node, group) -> set:
        try:
            listing = self.connection.list("pods", field_selector=f"spec.nodeName={node}")
        except SafetyError:
            return {(_ident(p)[0], _ident(p)[1]) for p in group}  # unknown: still there
        live = {((i.get("metadata") or {}).get("namespace"), (i.get("metadata") or {}).get("name")):
                (i.get("metadata") or {}).get("uid") for i in listing["items"]}
        present = set()
        for pod in group:
            namespace, name, uid = _ident(pod)
            if (namespace, name) in live and (not uid or live[(namespace, name)] == uid):
                present.add((namespace, name))
        return present

    # -- events ----------------------------------------------------------------------------
    def record_event(self, pod, reason, message, type="Warning") -> Outcome:
        """Our events.k8s.io/v1 Event on the pod (``cluster/evidence.py``), its note ``delete: MESSAGE``."""
        namespace, name, uid = _ident(pod)
        body = event_body({"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": name, "uid": uid},
                          reason, "Delete", f"delete: {message}", now=datetime.now(timezone.utc),
                          instance=REPORTING_CONTROLLER, type=type)
        return self.client.send("POST", "events", path=EVENTS_PATH.format(namespace=quote(namespace, safe="")),
                                body=body, query=self._dry_query(), action="event", target=f"{namespace}/{name}")

    # -- classification --------------------------------------------------------------------
    def _pod_outcome(self, pod, outcome) -> Outcome:
        namespace, name, _ = _ident(pod)
        outcome.target = f"{namespace}/{name}"
        if outcome.result is Result.NOT_FOUND:
            outcome.result = Result.GONE
        elif outcome.result is Result.CONFLICT and self._gone(pod):
            outcome.result = Result.GONE  # the UID precondition failed: a replacement holds the name
        return outcome


def namespace_terminating(outcome) -> bool:
    """Forbidden because the namespace is being deleted: retried (the pod goes with it)."""
    return outcome.result is Result.FORBIDDEN and "NamespaceTerminating" in outcome.causes


def _unless_unauthorized(outcome):
    """An RBAC refusal ends the whole operation with one line (nothing more will be allowed);
    other 403s (a terminating namespace, an admission webhook) stay this one object's outcome."""
    if outcome.result is Result.FORBIDDEN and " cannot " in outcome.message and "User " in outcome.message:
        raise ClusterError(f"Error from server (Forbidden): {outcome.message}")
    return outcome
