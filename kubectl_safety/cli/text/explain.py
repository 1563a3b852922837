"""``explain pod|node|priorities`` as text, read from the typed explanations (their strings made printable)."""

from kubectl_safety.cli.render import table
from kubectl_safety.model.duration import human_duration


def findings(report) -> str:
    rows = [[f.severity.value, f.code, f.message] for f in report.findings]
    return "\nFindings:\n" + (table(rows, ["severity", "code", "message"]) if rows else "  none\n")


def render_pod(r, wide=False) -> str:
    p, q, pr, t = r.pod, r.qos, r.priority, r.termination
    state = f"{p.phase}{', ready' if p.ready else ''}{', terminating' if p.terminating else ''}"
    lines = [f"Pod:          {p.namespace}/{p.name} on {p.node or '(unscheduled)'} ({state})",
             f"QoS:          {q.qos_class}: {q.reason}"
             + ("" if q.matches_status else f" (status says {q.status}, spec computes {q.computed.value})")]
    for c in q.containers:
        lines.append(f"  {'init ' if c.init else ''}{c.name}: {c.qos_class.value} ({c.reason})")
    cls = f" (class {pr.class_name})" if pr.class_name else ""
    lines.append(f"Priority:     {pr.value} from {pr.source.value}{cls}; preemptionPolicy {pr.preemption_policy}")
    lines.append(f"Termination:  grace {human_duration(t.grace_period_seconds)} ({t.why})")
    times = [f"t+{human_duration(step.at)}" for step in t.steps]
    width = max(map(len, times), default=0)
    for at, step in zip(times, t.steps):  # one column: t+0s and t+30s alike
        lines.append(f"  {at:<{width}}  {step.event}")
    lines.append(f"  eviction: {human_duration(t.eviction.grace_period_seconds)}; kubelet soft eviction: "
                 f"{t.kubelet_soft_eviction.note}; hard: 1s")
    for probe in t.probe_failure:
        lines.append(f"  {probe.probe.value} failure on {probe.container}: {human_duration(probe.grace_period_seconds)}"
                     + (" (probe-level)" if probe.probe_override else ""))
    lines.append(f"OOM score:    oom_score_adj {r.oom.max}")
    if r.eviction_rank:
        e = r.eviction_rank
        lines.append(f"Eviction:     rank {e.rank or '-'} of {e.of} under memory pressure: {e.reason}")
    if r.node_state:
        lines.append(f"Node state:   {r.node_state.message}")
    fd = r.force_delete
    lines.append(f"Force delete: {fd.verdict}")
    for risk in fd.risks:
        lines.append(f"  {risk.code}: {risk.message}")
    owners = " <- ".join(f"{o.kind}/{o.name}" for o in r.owners) or "none (unmanaged pod)"
    lines.append(f"Owners:       {owners}")
    for b in r.pdbs:
        spec = (f"minAvailable {b.min_available}" if b.min_available is not None
                else f"maxUnavailable {b.max_unavailable}")
        lines.append(f"PDB:          {b.name} ({spec}): disruptionsAllowed {b.disruptions_allowed}, healthy "
                     f"{b.current_healthy}/{b.desired_healthy} desired, {b.unhealthy_pod_eviction_policy}")
    if not r.pdbs:
        lines.append("PDB:          none")
    for c in r.topology_spread:
        domains = ", ".join(f"{k}={v}" for k, v in c.domains.items())
        lines.append(f"Spread:       {c.topology_key} maxSkew {c.max_skew} {c.when_unsatisfiable}: skew {c.skew}"
                     f"{' VIOLATED' if c.violated else ''} [{domains}]")
    return "\n".join(lines) + "\n" + findings(r)


def render_node(r, wide=False) -> str:
    n, st = r.node, r.state
    lines = [f"Node:   {n.name}{' (cordoned)' if n.unschedulable else ''}",
             f"State:  {st.message}{' (partitioned?)' if st.partitioned else ''}"]
    lines.append("\nConditions:")
    lines.append(table([[c.type, c.status, c.reason or ""] for c in r.conditions],
                       ["type", "status", "reason"]).rstrip() or "  none")
    lines.append("\nAllocated (sum of the pods' requests, as kubectl describe node):")
    lines.append(table([[a.resource, a.requested, a.allocatable, "" if a.percent is None else f"{a.percent}%"]
                        for a in r.allocation], ["resource", "requests", "allocatable", "requests%"]).rstrip())
    lines.append("\nPods in memory-pressure eviction order (" + r.eviction_order_assumption + "):")
    headers = ["rank", "namespace", "name", "qos", "priority", "oom_score_adj", "pdb"] + (["reason"] if wide else [])
    rows = [[p.rank or "-", p.namespace, p.name, p.qos, p.priority, p.oom_score_adj, p.pdb or ""]
            + ([p.reason] if wide else []) for p in r.pods]
    lines.append(table(rows, headers).rstrip() or "  none")
    return "\n".join(lines) + "\n" + findings(r)


def render_priorities(r, wide=False) -> str:
    rows = [[c.name, c.value, "yes" if c.global_default else "", c.preemption_policy, c.pods] for c in r.classes]
    out = table(rows, ["name", "value", "global-default", "preemption-policy", "pods"])
    out += f"\nPods without a class: {r.pods_without_class}; at priority 0: {r.pods_at_zero_count}\n"
    return out + findings(r)
