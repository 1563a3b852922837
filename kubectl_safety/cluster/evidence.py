"""The events kubectl-safety writes on the pods and nodes it acts on (events.k8s.io/v1), so that ``why`` and
``kubectl events`` name it: reportingController ``safety.kubectl.io``, CamelCase reason and action, a note
under 1 kB naming the command (``drain: ...``) and the plan's wave.

Evidence never stops an action: a write that fails is reported once (``on_failure``) and the next ones
are not sent. The body passes ``pkg/apis/core/validation/events.go`` (v1.36.3): eventTime in RFC 3339 with
microseconds, reportingController a qualified name, reportingInstance, action and reason at most 128 bytes,
note at most 1024, a Node's events in ``default``.
"""

import socket
import threading
from datetime import datetime, timezone
from urllib.parse import quote

from kubectl_safety.cluster.client import Client, Result
from kubectl_safety.model.events import EVENT_NOTE_LIMIT, EVENT_TEXT_LIMIT, bounded

REPORTING_CONTROLLER = "safety.kubectl.io"
EVENTS_PATH = "/apis/events.k8s.io/v1/namespaces/{namespace}/events"


def event_body(regarding: dict, reason: str, action: str, note: str, *, now, instance: str,
               type: str = "Normal") -> dict:
    """An events.k8s.io/v1 Event about ``regarding`` ({apiVersion, kind, namespace, name, uid})."""
    namespace = regarding.get("namespace") or "default"  # a Node's events live in default
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": f"{regarding['name']}.{int(now.timestamp() * 1e9):x}", "namespace": namespace},
            "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "reportingController": REPORTING_CONTROLLER, "reportingInstance": bounded(instance, EVENT_TEXT_LIMIT),
            "action": bounded(action, EVENT_TEXT_LIMIT), "reason": bounded(reason, EVENT_TEXT_LIMIT), "type": type,
            "regarding": {k: v for k, v in regarding.items() if v}, "note": bounded(note, EVENT_NOTE_LIMIT)}


class EventWriter:
    """Writes our events through ``connection``; ``command``: the command the notes start with."""

    def __init__(self, connection, command: str, on_failure=None, clock=None):
        self.connection = connection
        self.command = command
        self.on_failure = on_failure
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.instance = f"{REPORTING_CONTROLLER}-{socket.gethostname()}"
        self.failed = False
        self._lock = threading.Lock()

    def pod(self, namespace, name, uid, reason, action, what, wave=None) -> bool:
        return self._write({"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": name, "uid": uid},
                           reason, action, what, wave)

    def node(self, name, reason, action, what, uid=None, wave=None) -> bool:
        return self._write({"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid}, reason, action, what,
                           wave)

    def cordoned(self, node, outcome, unschedulable=True):
        """On a node we cordoned (or uncordoned): ``why node`` names us. ``outcome``: the executor's."""
        if outcome.result == "done" and not outcome.message.startswith("already"):
            verb = "Cordon" if unschedulable else "Uncordon"
            self.node(node, f"{verb}ed", verb, f"{verb.lower()}ed node {node}")

    def removed(self, entry, outcome):
        """On a pod we evicted (or deleted): its node and the plan's wave. ``entry``: its PodAction."""
        if outcome.result == "done":
            deleted = entry.action.value == "delete"
            self.pod(entry.namespace, entry.name, entry.uid, "Deleted" if deleted else "Evicted",
                     "Delete" if deleted else "Evict", f"{'deleted' if deleted else 'evicted'} from node {entry.node}",
                     entry.wave)

    def _write(self, regarding, reason, action, what, wave) -> bool:
        if self.failed:
            return False
        note = f"{self.command}: {what}" + (f" (wave {wave})" if wave else "")
        body = event_body(regarding, reason, action, note, now=self.clock(), instance=self.instance)
        path = EVENTS_PATH.format(namespace=quote(body["metadata"]["namespace"], safe=""))
        outcome = Client(self.connection).send("POST", "events", path=path, body=body, action="event")
        if outcome.result is Result.DONE:
            return True
        with self._lock:
            first, self.failed = not self.failed, True
        if first and self.on_failure is not None:
            self.on_failure(f"could not record kubectl-safety's events ({outcome.status or 'no answer'}: "
                            f"{outcome.message or 'unknown error'}); going on without them")
        return False


def command_of(connection) -> str:
    """The command a connection acts for (its user agent's ``(drain)``), as our notes name it."""
    suffix = getattr(connection, "user_agent_suffix", "") or ""
    return suffix.strip().strip("()") or "kubectl-safety"
