"""The one reading of the API server's answers: every single-object request (GET, POST, PUT, PATCH,
DELETE) goes through a ``Client`` and comes back as an ``Outcome`` (never an exception for an API answer).

``Result`` (the outcome's class): ``done`` (accepted), ``gone`` (404 or the UID changed: the pod we meant
is gone), ``pdb-blocked`` (429 with a DisruptionBudget cause), ``throttled`` (any other 429, incl. API
priority and fairness and "still being processed"), ``multiple-pdbs`` (the eviction subresource refuses
pods matched by more than one PDB; the server may answer 500 or 201 with a Failure Status body, so the
body is inspected), ``forbidden`` (403), ``not-found`` (404), ``conflict`` (409), ``unavailable`` (no
answer, or 502/503/504: the API server is down or restarting), ``error`` (anything else).
"""

from dataclasses import field
from enum import Enum

from kubectl_safety.cluster.live import resource_path
from kubectl_safety.errors import ClusterError, SafetyError
from kubectl_safety.record import record

CONFLICT_RETRIES = 5


class Result(str, Enum):
    """What the server did with one request."""

    DONE = "done"
    GONE = "gone"
    PDB_BLOCKED = "pdb-blocked"
    THROTTLED = "throttled"
    MULTIPLE_PDBS = "multiple-pdbs"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not-found"
    CONFLICT = "conflict"
    UNAVAILABLE = "unavailable"
    ERROR = "error"

    __str__ = str.__str__
    __format__ = str.__format__


RETRIED = (Result.PDB_BLOCKED, Result.THROTTLED, Result.UNAVAILABLE)


@record(frozen=False, slots=False)
class Outcome:
    """What one request did."""

    target: str  # what the request was about: "ns/name" of a pod, or a node's name (cordon, uncordon)
    action: str  # evict | delete | cordon | uncordon | event | get | create | update | patch
    result: Result
    status: int = None  # HTTP status
    message: str = ""  # server message, one line
    causes: tuple = field(default=(), repr=False)  # Status details.causes reasons
    retry_after: float = field(default=0, repr=False)  # Status details.retryAfterSeconds
    version: str = field(default="", repr=False)  # resourceVersion of the object written (cordon, uncordon)
    body: dict = field(default=None, repr=False)  # the object the server answered with (done)

    @property
    def done(self) -> bool:
        return self.result is Result.DONE

    def raise_unanswered(self) -> "Outcome":
        """Raise the transport's error when the server did not answer; else the outcome."""
        if self.status is None:
            raise ClusterError(self.message)
        return self

    def to_dict(self) -> dict:
        return {"pod": self.target, "action": self.action, "result": self.result.value,
                "status": self.status, "message": self.message}


def version_of(obj) -> str:
    """The resourceVersion of an object ('' when it has none)."""
    return str(((obj if isinstance(obj, dict) else {}).get("metadata") or {}).get("resourceVersion") or "")


def one_line(text) -> str:
    return " ".join(str(text or "").split())[:500]


def status_causes(payload) -> list:
    """The reasons of a Status object's ``details.causes`` (e.g. NamespaceTerminating, DisruptionBudget)."""
    return [c.get("reason") or c.get("type") for c in (payload.get("details") or {}).get("causes") or []]


def _is_failure_status(payload) -> bool:
    return payload.get("kind") == "Status" and payload.get("status") == "Failure"


def _is_multiple_pdbs(payload) -> bool:
    # The server builds this Status without a reason or cause; its message is the only marker.
    message = payload.get("message") or ""
    return "more than one" in message and "PodDisruptionBudget" in message


def classify(target, action, status, payload) -> Outcome:
    """The ``Outcome`` of one answer (``status`` None: no answer; ``payload``: its parsed body)."""
    payload = payload if isinstance(payload, dict) else {}
    message = one_line(payload.get("message"))
    code = status
    if status is not None and 200 <= status < 300 and _is_failure_status(payload):
        code = payload.get("code") or 500  # a Failure Status returned with a 2xx code
    if _is_failure_status(payload) and _is_multiple_pdbs(payload):
        result = Result.MULTIPLE_PDBS
    elif code is not None and 200 <= code < 300:
        result = Result.DONE
    elif code == 429:
        result = Result.PDB_BLOCKED if "DisruptionBudget" in status_causes(payload) else Result.THROTTLED
    elif code == 403:
        result = Result.FORBIDDEN
    elif code == 404:
        result = Result.NOT_FOUND
    elif code == 409:
        result = Result.CONFLICT
    elif code is None or code in (502, 503, 504):
        result = Result.UNAVAILABLE
    else:
        result = Result.ERROR
    outcome = Outcome(target, action, result, status, message, tuple(status_causes(payload)),
                      (payload.get("details") or {}).get("retryAfterSeconds") or 0,
                      body=payload if result is Result.DONE else None)
    if result is Result.PDB_BLOCKED:
        details = [c.get("message") for c in (payload.get("details") or {}).get("causes") or []
                   if c.get("reason") == "DisruptionBudget" or c.get("type") == "DisruptionBudget"]
        if details and details[0]:
            outcome.message = one_line(f"{message} {details[0]}")
    return outcome


def watch_expired(status) -> bool:
    """A watch's ERROR event (its Status object) saying the version was compacted away (410 Gone): relist."""
    return status.get("code") == 410 or status.get("reason") in ("Expired", "Gone")


def watch_forbidden(status) -> bool:
    """A watch's ERROR event (its Status object) refusing the watch (403)."""
    return classify("", "watch", status.get("code"), status).result is Result.FORBIDDEN


class Client:
    """Single-object requests through one ``Connection``; each answer classified (``classify``)."""

    def __init__(self, connection):
        self.connection = connection

    def send(self, method, resource, namespace=None, name=None, *, subresource=None, query=None, body=None,
             action=None, target=None, path=None) -> Outcome:
        """One request (to ``path`` when given, else the resource's); a transport error is an ``unavailable``
        outcome carrying its message."""
        path = path or resource_path(resource, namespace, name, subresource=subresource)
        target = target if target is not None else "/".join(x for x in (namespace, name) if x)
        try:
            status, payload = self.connection.request(method, path, query=query, body=body)
        except SafetyError as e:  # transport errors: report, do not raise
            status, payload = None, {"message": str(e)}
        return classify(target, action or method.lower(), status, payload)

    def get(self, resource, namespace=None, name=None, **kw) -> Outcome:
        return self.send("GET", resource, namespace, name, **kw)

    def create(self, resource, namespace, body, **kw) -> Outcome:
        return self.send("POST", resource, namespace, body=body, **kw)

    def update(self, resource, namespace, name, body, **kw) -> Outcome:
        return self.send("PUT", resource, namespace, name, body=body, **kw)

    def patch(self, resource, namespace, name, body, **kw) -> Outcome:
        """A strategic merge patch."""
        return self.send("PATCH", resource, namespace, name, body=body, **kw)

    def delete(self, resource, namespace, name, body=None, **kw) -> Outcome:
        return self.send("DELETE", resource, namespace, name, body=body, **kw)

    def patch_checked(self, resource, namespace, name, build, retries=CONFLICT_RETRIES):
        """Read, ``build(obj)`` a patch (None: nothing to change) and send it with the object's
        resourceVersion as precondition; on a conflict read again and retry (``retries`` times).
        ``(outcome, patch sent or None)``: the outcome of the last request (a read that failed, the
        patch's, or ``conflict`` after the last retry); its ``body`` the object as it is now."""
        outcome = None
        for _ in range(retries):
            outcome = self.get(resource, namespace, name)
            if not outcome.done:
                return outcome, None
            obj = outcome.body
            patch = build(obj)
            if patch is None:
                return outcome, None
            patch.setdefault("metadata", {})["resourceVersion"] = (obj.get("metadata") or {}).get("resourceVersion")
            outcome = self.patch(resource, namespace, name, patch)
            if outcome.result is not Result.CONFLICT:
                return outcome, patch
        return outcome, None
