"""What a rollout checks before every batch (kured's blockers, checked per batch rather than once):

- maintenance windows (``model/windows.py``): the batch starts only inside a window that stays open
  for the batch's estimated duration (the plan's ``estimated_seconds``);
- Prometheus alerts (``--block-on-alerts``): any firing alert blocks (with ``--alert-filter``, only
  those whose name or a ``label=value`` matches); a failed query blocks too;
- blocking pods (``--blocking-pod-selector``): a matching pod that has not ended on one of the
  batch's nodes holds the batch (kured pkg/blockers/kubernetespod.go: the field selector
  ``spec.nodeName=N,status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown``).

When one says no: ``outside="stop"`` ends the rollout there ("blocked", its state kept: the same
command resumes); ``outside="wait"`` re-checks all of them every ``poll`` seconds (sooner when a
window opens) until they all say yes, an interrupt, or no window of the coming week is long enough
for the batch (then it stops).
"""

import re
import time
from datetime import datetime, timezone

from kubectl_safety.analysis.rollout_gates import ENDED
from kubectl_safety.cluster.client import Client
from kubectl_safety.cluster.prometheus import PrometheusError, firing_alerts
from kubectl_safety.model.windows import closes_at, next_fitting, next_opening

POLL_SECONDS = 30.0


def _utc_now():
    return datetime.now(timezone.utc)


def _at(instant) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def alert_blocks(alert, pattern) -> bool:
    """``alert`` (``{"name", "labels"}``) blocks: always without a filter, else when ``pattern`` finds its
    name or one of its ``label=value``."""
    if pattern is None:
        return True
    return bool(pattern.search(alert["name"])) or any(pattern.search(f"{k}={v}")
                                                      for k, v in alert["labels"].items())


class RolloutGates:
    """``before_batch(number, nodes)`` for ``engine/rollout.Rollout``."""

    def __init__(self, connection, *, windows=(), outside="wait", alerts=None, alert_filter=None,
                 blocking_selector=None, estimates=(), emit=None, interrupted=None, now=_utc_now,
                 poll=POLL_SECONDS, firing=firing_alerts):
        self.connection = connection
        self.windows = tuple(windows)
        self.outside = outside
        self.alerts = alerts
        self.pattern = re.compile(alert_filter) if alert_filter else None
        self.selector = blocking_selector
        self.estimates = list(estimates)  # seconds, per batch in run order
        self.emit = emit or (lambda *a, **k: None)
        self.interrupted = interrupted
        self.now = now
        self.poll = poll
        self.firing = firing
        self.held = ()  # the nodes blocking pods hold now (metrics)

    def before_batch(self, number, nodes):
        estimate = self.estimates[number - 1] if number <= len(self.estimates) else 0
        while True:
            now = self.now()
            reasons, wake = self._window(number, estimate, now)
            if wake is False:
                return "blocked", reasons[0]
            reasons += self._alerts() + self._blocking(nodes)
            if not reasons:
                return "done", None
            text = "; ".join(reasons)
            if self.outside == "stop":
                return "blocked", f"batch {number} not started (--outside-window stop): {text}"
            self.emit("gate-wait", batch=number, message=f"batch {number} waits: {text}")
            wait = self.poll if wake is None else max(1.0, min(self.poll, (wake - now).total_seconds()))
            if self.interrupted is not None and self.interrupted.wait(wait):
                return "interrupted", f"interrupted while batch {number} waited: {text}"
            if self.interrupted is None:
                time.sleep(wait)

    def _window(self, number, estimate, now):
        """``(reasons, wake)``: wake is when a long enough window opens, None (open now, or no windows),
        False (none in the coming week: the rollout stops)."""
        if not self.windows:
            return [], None
        if next_fitting(self.windows, now, estimate) == now:
            return [], None
        end = closes_at(self.windows, now)
        fits = next_fitting(self.windows, now, estimate)
        if fits is None:
            return [f"no maintenance window in the coming week is open for batch {number}'s estimated "
                    f"{estimate}s"], False
        if end is None:
            return [f"outside the maintenance windows (next opens {_at(next_opening(self.windows, now))})"], fits
        return [f"batch {number} needs about {estimate}s but the window closes {_at(end)}; "
                f"next long enough {_at(fits)}"], fits

    def _alerts(self):
        if not self.alerts:
            return []
        try:
            alerts = [a for a in self.firing(self.alerts) if alert_blocks(a, self.pattern)]
        except PrometheusError as e:
            return [f"the alerts query failed, which blocks: {e}"]
        names = sorted({a["name"] for a in alerts})
        return [f"{len(alerts)} alert(s) firing: {', '.join(names)[:200]}"] if alerts else []

    def _blocking(self, nodes):
        if not self.selector:
            return []
        held, reasons = [], []
        for node in nodes:
            fields = f"spec.nodeName={node}," + ",".join(f"status.phase!={p}" for p in ENDED)
            listed = Client(self.connection).get("pods", query={
                "labelSelector": self.selector, "fieldSelector": fields, "limit": "10"}, action="list", target=node)
            if not listed.done:
                reasons.append(f"cannot list the blocking pods on node {node}: {listed.message or listed.status}")
                continue
            pods = [f"{(p.get('metadata') or {}).get('namespace')}/{(p.get('metadata') or {}).get('name')}"
                    for p in listed.body.get("items") or []]
            if pods:
                held.append(node)
                reasons.append(f"node {node} is held by pod(s) matching {self.selector}: {', '.join(pods)}")
        self.held = tuple(held)
        return reasons
