"""The rollout's lock: a coordination.k8s.io/v1 Lease naming the rollout and its holder.

Acquired before anything changes, renewed while the rollout runs, its holder cleared when it stops
(so the same command resumes), deleted when it completes. A Lease held by another live holder
refuses the rollout with the holder's name; one that expired (``leaseDurationSeconds`` after its
last renewal), or whose holder was a process on this host that no longer runs, is taken over.
"""

import os
import socket
import threading
from datetime import datetime, timedelta, timezone

from kubectl_safety.cluster import threads
from kubectl_safety.cluster.client import Client, Result
from kubectl_safety.errors import ClusterError, InputError, RefusedError
from kubectl_safety.model.meta import parse_time

LEASE_SECONDS = 300
MICRO = "%Y-%m-%dT%H:%M:%S.%fZ"


def holder_identity() -> str:
    return f"kubectl-safety@{socket.gethostname()} pid {os.getpid()}"


def _stamp(when=None) -> str:
    return (when or datetime.now(timezone.utc)).strftime(MICRO)


def _parse(text):
    """A Lease's time (``parse_time``), or None when it has none or an unreadable one."""
    try:
        return parse_time(text)
    except InputError:
        return None


def describe(lease) -> str:
    """``HOLDER (renewed 12s ago)`` of a Lease object."""
    spec = (lease or {}).get("spec") or {}
    renewed = _parse(spec.get("renewTime"))
    ago = f" (renewed {int((datetime.now(timezone.utc) - renewed).total_seconds())}s ago)" if renewed else ""
    return f"{spec.get('holderIdentity') or 'nobody'}{ago}"


def is_live(lease, me=None) -> bool:
    """Held by someone other than ``me`` and not expired (nor left by a dead process of this host)."""
    spec = (lease or {}).get("spec") or {}
    holder = spec.get("holderIdentity")
    if not holder or holder == me:
        return False
    renewed = _parse(spec.get("renewTime"))
    duration = spec.get("leaseDurationSeconds") or LEASE_SECONDS
    if renewed is None or datetime.now(timezone.utc) > renewed + timedelta(seconds=duration):
        return False
    host, _, pid = holder.partition(" pid ")
    if host == f"kubectl-safety@{socket.gethostname()}" and pid.isdigit() and not _alive(int(pid)):
        return False
    return True


def _alive(pid) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RolloutLease:
    """One Lease: ``acquire``, ``renew`` (also from a thread while running), ``release``, ``delete``."""

    def __init__(self, connection, name, namespace, holder=None, description=""):
        self.client = Client(connection)
        self.name, self.namespace = name, namespace
        self.holder = holder or holder_identity()
        self.description = description
        self._object = None
        self._stop = threading.Event()
        self._thread = None

    def get(self):
        outcome = self.client.get("leases", self.namespace, self.name).raise_unanswered()
        if outcome.result is Result.NOT_FOUND:
            return None
        if not outcome.done:
            raise ClusterError(f"cannot read Lease {self.namespace}/{self.name}: {outcome.message or outcome.status}")
        return outcome.body

    def acquire(self) -> bool:
        """Take the Lease (True if it existed: a resumed rollout); refuse if someone else holds it."""
        current = self.get()
        spec = {"holderIdentity": self.holder, "leaseDurationSeconds": LEASE_SECONDS,
                "acquireTime": _stamp(), "renewTime": _stamp()}
        if current is None:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace,
                                 "annotations": {"safety.kubectl.io/rollout": self.description}},
                    "spec": spec}
            outcome = self.client.create("leases", self.namespace, body).raise_unanswered()
            if outcome.result is Result.CONFLICT:
                return self._refuse(self.get())
            if not outcome.done:
                raise ClusterError(f"cannot create Lease {self.namespace}/{self.name}: "
                                   f"{outcome.message or outcome.status}")
            self._object = outcome.body
            return False
        if is_live(current, self.holder):
            return self._refuse(current)
        self._put(current, spec)
        return True

    def _refuse(self, lease):
        raise RefusedError(f"rollout {self.name} is held by {describe(lease)} (Lease {self.namespace}/{self.name}); "
                           "nothing was changed")

    def _put(self, current, spec):
        body = dict(current)
        body["spec"] = {**(current.get("spec") or {}), **spec}
        outcome = self.client.update("leases", self.namespace, self.name, body).raise_unanswered()
        if outcome.result is Result.CONFLICT:  # someone else wrote it meanwhile
            return self._refuse(self.get())
        if not outcome.done:
            raise ClusterError(f"cannot update Lease {self.namespace}/{self.name}: "
                               f"{outcome.message or outcome.status}")
        self._object = outcome.body

    def renew(self):
        current = self._object or self.get()
        if current is not None:
            self._put(current, {"holderIdentity": self.holder, "renewTime": _stamp()})

    def keep_renewed(self, every=LEASE_SECONDS / 3):
        """Renew from a daemon thread until ``release``/``delete``."""

        def loop():
            while not self._stop.wait(every):
                try:
                    self.renew()
                except Exception:  # a missed renewal is retried; the lease lasts LEASE_SECONDS
                    continue

        self._thread = threads.start(loop, "lease")

    def release(self):
        """Clear the holder (the rollout stopped; the same command resumes it)."""
        self._stop.set()
        try:
            current = self.get()
            if current is not None and (current.get("spec") or {}).get("holderIdentity") == self.holder:
                self._put(current, {"holderIdentity": None, "renewTime": _stamp()})
        except Exception:
            pass

    def delete(self):
        """The rollout completed: the Lease goes."""
        self._stop.set()
        self.client.delete("leases", self.namespace, self.name).raise_unanswered()
