"""A rollout's metrics in the Prometheus text exposition format (version 0.0.4), for a Pushgateway or
the node exporter's textfile collector.

Names follow the Prometheus conventions: prefix ``kubectl_safety_rollout_``, the unit in the name
(``_seconds``), ``_total`` on counters. Every series carries ``rollout`` (the Lease's name); per-node
series carry ``node`` and ``batch``, per-batch series ``batch``. ``RolloutMetrics.observe`` takes the
rollout's progress events (to count the waits on budgets and time the batches); ``text(report)``
renders what the report says so far.
"""

import time

PREFIX = "kubectl_safety_rollout_"
BUDGET_WAITS = ("pdb-blocked",)  # an eviction refused by a PodDisruptionBudget (429), then retried

# name -> (type, help)
METRICS = {
    "nodes": ("gauge", "Nodes in the rollout's pool."),
    "nodes_done_total": ("counter", "Nodes maintained, back and gated."),
    "blocked_nodes": ("gauge", "Nodes the rollout could not take now (unsafe batch, held by a blocking pod)."),
    "batches_done_total": ("counter", "Batches finished with their health gate passed."),
    "pods_evicted_total": ("counter", "Pods evicted (or deleted) from a node by the rollout's drains."),
    "surges_total": ("counter", "Workloads scaled up before a batch's evictions (--surge)."),
    "budget_waits_total": ("counter", "Evictions refused by a PodDisruptionBudget and retried later."),
    "node_done": ("gauge", "1 when the node is done, else 0."),
    "batch_duration_seconds": ("gauge", "Wall-clock seconds of the batch so far (drain, maintenance, gate)."),
    "duration_seconds": ("gauge", "Wall-clock seconds of the run so far."),
    "status": ("gauge", "1 for the run's status (running until it ends)."),
}


def escape(value) -> str:
    """A label value as the exposition format wants it: backslash, double quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def exposition(samples) -> str:
    """``samples``: ``(name, labels, value)`` with names from ``METRICS``; grouped by name, in
    ``METRICS`` order, each with its ``# HELP`` and ``# TYPE``."""
    by_name = {}
    for name, labels, value in samples:
        by_name.setdefault(name, []).append((labels, value))
    lines = []
    for name, (kind, help_text) in METRICS.items():
        if name not in by_name:
            continue
        lines += [f"# HELP {PREFIX}{name} {help_text}", f"# TYPE {PREFIX}{name} {kind}"]
        for labels, value in by_name[name]:
            text = ",".join(f'{k}="{escape(v)}"' for k, v in labels.items())
            lines.append(f"{PREFIX}{name}{{{text}}} {float(value):g}")
    return "\n".join(lines) + "\n"


class RolloutMetrics:
    """Counts what the progress events say (waits on budgets per batch, when each batch started)."""

    def __init__(self, rollout, clock=time.monotonic):
        self.rollout = rollout
        self.clock = clock
        self.batch = None
        self.waits = {}  # batch -> waits on budgets
        self.started = {}  # batch -> clock at its start
        self.ended = {}  # batch -> clock when a report first showed it ended

    def observe(self, event):
        kind = event.get("event")
        if kind == "batch":
            self.batch = event.get("batch")
            self.started[self.batch] = self.clock()
        elif kind == "retrying" and event.get("result") in BUDGET_WAITS and self.batch is not None:
            self.waits[self.batch] = self.waits.get(self.batch, 0) + 1

    def text(self, report, blocked=()) -> str:
        """The exposition of ``report`` (a ``RolloutReport``); ``blocked``: nodes held back by a gate."""
        base = {"rollout": self.rollout}
        samples = [("nodes", base, len(report.nodes))]
        done = [n for n in report.nodes if n.state == "done"]
        samples.append(("nodes_done_total", base, len(done)))
        held = set(blocked)
        for b in report.batches:
            if b.status.value == "blocked":
                held.update(n for n in b.nodes if n not in {d.name for d in done})
        samples.append(("blocked_nodes", base, len(held)))
        samples.append(("batches_done_total", base, sum(1 for b in report.batches if b.status.value == "done")))
        for n in report.nodes:
            labels = {**base, "node": n.name, "batch": str(n.batch or "")}
            samples.append(("pods_evicted_total", labels, len(n.drain.evicted) if n.drain else 0))
            samples.append(("node_done", labels, 1 if n.state == "done" else 0))
        now = self.clock()
        for b in report.batches:
            labels = {**base, "batch": str(b.number)}
            surges = {s for n in report.nodes if n.name in b.nodes for s in n.surges or ()}
            samples.append(("surges_total", labels, len(surges)))
            samples.append(("budget_waits_total", labels, self.waits.get(b.number, 0)))
            if b.number in self.started:
                end = self.ended.setdefault(b.number, now) if b.status.value != "running" else now
                samples.append(("batch_duration_seconds", labels, round(end - self.started[b.number], 3)))
        samples.append(("duration_seconds", base, report.elapsed_seconds))
        samples.append(("status", {**base, "status": report.status.value}, 1))
        return exposition(samples)


class MetricsSink:
    """Where the metrics go after each batch and at the end: a Pushgateway (a PUT replacing the group
    ``job=kubectl-safety, rollout=<name>``), a textfile, or both. A failed push or write is a warning: the
    rollout does not stop for its metrics."""

    JOB = "kubectl-safety"

    def __init__(self, rollout, pushgateway=None, metrics_file=None, warn=None, clock=time.monotonic):
        self.metrics = RolloutMetrics(rollout, clock)
        self.pushgateway = pushgateway
        self.metrics_file = metrics_file
        self.warn = warn or (lambda message: None)
        self.held = lambda: ()  # the nodes a gate holds back now (engine/gates.py's)

    def observing(self, on_event):
        """``on_event`` that also counts the events."""
        def both(event):
            self.metrics.observe(event)
            if on_event is not None:
                on_event(event)
        return both

    def publish(self, report):
        from kubectl_safety.cluster.prometheus import PrometheusError, push, write_textfile

        text = self.metrics.text(report, self.held())
        if self.pushgateway:
            try:
                push(self.pushgateway, self.JOB, text, {"rollout": self.metrics.rollout})
            except PrometheusError as e:
                self.warn(f"could not push the rollout's metrics: {e}")
        if self.metrics_file:
            try:
                write_textfile(self.metrics_file, text)
            except OSError as e:
                self.warn(f"could not write the rollout's metrics to {self.metrics_file}: {e}")
