"""One drain on the live cluster, as ``drain`` and each rollout batch run it: cordon the nodes, plan
again from the pods there once cordoned, drain what that plan says (``drain`` gets its ``DrainReport``);
and the server-side dry run of a plan (every eviction it allows now, sent with dryRun=All).

No printing: progress goes out through the drainer's ``on_event``.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import field, replace

from kubectl_safety.analysis.plans.common import Action, ObjectRef, Reason, Risk, RiskCode, Severity
from kubectl_safety.analysis.plans.drain import Blocker, ServerDryRun
from kubectl_safety.cluster.client import Result
from kubectl_safety.cluster.executor import Executor
from kubectl_safety.engine.drain_report import DrainReport, DrainStatus, RequestOutcome
from kubectl_safety.engine.drainer import raw_pod
from kubectl_safety.engine.watch import WatchGroup
from kubectl_safety.errors import ClusterError
from kubectl_safety.record import record

SERVER_DRY_RUN_WAIT = 30.0  # bound on retrying throttled server dry-run evictions (at most --timeout)
MAX_WORKERS = 32  # server dry-run requests in flight


@record(frozen=False, slots=False)
class DrainRun:
    """What one cordon -> re-plan -> drain did."""

    cordons: list = field(default_factory=list)  # the Outcome of each cordon sent
    cordoned: list = field(default_factory=list)  # nodes this run cordoned (not cordoned before)
    failed: object = None  # the Outcome of the cordon that failed (then nothing was drained)
    plan: object = None  # the DrainPlan drained: made once the nodes were cordoned
    refused: str = ""  # the plan was not safe (with ``refuse_unsafe``): its unaccepted risk codes
    result: object = None  # the DrainResult
    surge: object = None  # the SurgeRun (engine/surge.py) when the plan surges workloads

    def report(self, nodes, plan, elapsed_seconds) -> DrainReport:
        """The DrainReport of this run of a drain of ``nodes`` confirmed as ``plan``."""
        cordons = tuple(RequestOutcome.of(o) for o in self.cordons)
        if self.failed is not None:
            return DrainReport(tuple(nodes), DrainStatus.ERROR,
                               f"unable to cordon node {self.failed.target!r}: {self.failed.message}",
                               elapsed_seconds, (), (), (), (), cordons, None, plan)
        r = self.result
        return DrainReport(tuple(nodes), r.status, r.message, elapsed_seconds, tuple(sorted(set(r.evicted))),
                           tuple(sorted(set(r.gone))), tuple(r.left), tuple(r.appeared), cordons + tuple(r.outcomes),
                           r.requests, plan, self.surge.record() if self.surge is not None else None)


def drain_nodes(drainer, nodes, planner, *, plan, timeout=0, **drain_args) -> DrainReport:
    """``drain``: cordon ``nodes``, plan again with ``planner`` (``drain_planner.DrainPlanner``) from
    the watches of the drain's own group, drain; the DrainReport (``plan``: the plan confirmed;
    ``timeout``: seconds from now, 0 for none). Times on the drainer's clock."""
    started = drainer.clock()
    with WatchGroup(drainer.connection) as group:  # the nodes' watches: the re-plan, the drainer
        run = cordon_and_drain(drainer, nodes, lambda: planner.replan(group), group=group, plan=plan,
                               deadline=started + timeout if timeout else None, **drain_args)
    report = run.report(nodes, plan, round(drainer.clock() - started, 1))
    if report.drained:
        for node in nodes:
            drainer.emit("drained", pod=node)
    return report


def cordon_and_drain(drainer, nodes, replan, *, group, plan=None, cordon=True, stop_at_failed_cordon=True,
                     refuse_unsafe=False, before_drain=None, timeout=None, **drain_args) -> DrainRun:
    """Cordon ``nodes`` (unless ``cordon`` is off), re-plan with ``replan()`` (``plan`` stays when the
    API server cannot be read: said through ``unreachable``; None: nothing to drain), then drain the
    plan's pods with the drainer in the watch ``group``. ``refuse_unsafe``: a plan that is not safe
    uncordons what this run cordoned and drains nothing. ``before_drain(plan)`` runs just before the
    first eviction; ``timeout`` (seconds) starts then, ``deadline`` (monotonic) is absolute."""
    run = DrainRun(plan=plan)
    if cordon:
        run.cordons = drainer.cordon(nodes)
        run.cordoned = [o.target for o in run.cordons
                        if o.done and not (o.message or "").startswith("already")]
        failed = [o for o in run.cordons if not o.done]
        if failed and stop_at_failed_cordon:
            run.failed = failed[0]
            return run
    try:
        run.plan = replan()
    except ClusterError as e:
        if plan is None:
            raise
        drainer.emit("unreachable", message=str(e))
    if refuse_unsafe and run.plan is not None and not run.plan.safe:
        drainer.cordon(run.cordoned, False)  # nothing changed
        run.refused = ", ".join(sorted({r.code.value for r in run.plan.unaccepted()}))
        return run
    if before_drain is not None:
        before_drain(run.plan)
    if timeout:
        drain_args["deadline"] = drainer.clock() + timeout
    nodes, pods = (run.plan.node_names, run.plan.pods) if run.plan is not None else ([], ())
    if run.plan is not None and run.plan.surges:  # make before break: the surged pods first, then the rest
        from kubectl_safety.engine.drainer import DrainResult
        from kubectl_safety.engine.surge import Surger

        run.surge = Surger(drainer, group, nodes).run(run.plan, drain_args.get("deadline"),
                                                       drain_args.get("grace_period"))
        if run.surge.status != "done":
            run.result = _merged(run.surge.result or DrainResult(DrainStatus(run.surge.status)), run.surge)
            run.result.status, run.result.message = DrainStatus(run.surge.status), run.surge.message
            return run
        pods = tuple(p for p in pods if not p.surged)
    run.result = drainer.drain(nodes, pods, watches=group, **drain_args)
    if run.surge is not None:
        run.result = _merged(run.result, run.surge)
    return run


def _merged(result, surge):
    """The drain's result with what the surge removed before it (evicted, or by the scale-back)."""
    first = surge.result
    if first is not None and first is not result:
        result.evicted = first.evicted + result.evicted
        result.gone = first.gone + result.gone
        result.outcomes = first.outcomes + result.outcomes
        for owner, n in first.evictions.items():
            result.evictions[owner] = result.evictions.get(owner, 0) + n
        result.requests = first.requests if result.requests is None else result.requests + first.requests
    result.evicted = surge.removed + result.evicted
    result.outcomes = surge.outcomes + result.outcomes
    return result


def server_dry_run(connection, plan, *, timeout, grace_period=None, on_event=None, interrupts=None):
    """``plan`` with the server's answer to each request it implies, sent with dryRun=All: the cordons,
    the evictions it allows now (throttled ones retried within a bound), and the evictions the
    Eviction API's rules block (sent once to confirm the refusal). Pods waiting for a later wave are
    not sent (the server judges each eviction alone, against today's budget). A refusal the plan did
    not predict (a cordon, or an eviction the plan allows) is a SERVER_REFUSED risk with the server's
    answer: the plan is not safe unless it is accepted. ``interrupts(executor)``: a context manager
    around the requests."""
    executor = Executor(connection, dry_run_server=True, on_event=on_event)
    bound = min(timeout, SERVER_DRY_RUN_WAIT) if timeout else SERVER_DRY_RUN_WAIT
    deadline = time.monotonic() + bound
    with interrupts(executor) if interrupts else nullcontext():
        nodes = tuple(replace(node, server_dry_run=executor.cordon(node.name)) for node in plan.nodes)
        todo = [p for p in plan.pods if not p.surged  # they go once surged: not now
                and (p.action in (Action.EVICT, Action.DELETE) or p.blocked_by is Blocker.EVICTION_API)]

        def one(p):
            if p.action is Action.DELETE:
                return p, executor.delete(raw_pod(p), grace_period)
            if p.action is Action.BLOCKED:  # confirm the refusal once, without retrying
                return p, executor.evict(raw_pod(p), grace_period)
            return p, executor.evict_with_retry(raw_pod(p), deadline, grace_period, retry_delay=2.0)

        results = []
        if todo:
            with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(todo))) as pool:
                results = list(pool.map(one, todo))
    answered, refusals = {}, []
    for node in nodes:
        if node.server_dry_run is not None and not node.server_dry_run.done:
            refusals.append((ObjectRef("Node", "", node.name), server_answer("cordon", node.server_dry_run)))
    for p, outcome in results:
        reasons = p.reasons
        if outcome.result not in (Result.DONE, Result.GONE) and p.action is not Action.BLOCKED:
            message = server_answer("eviction" if p.action is Action.EVICT else "delete", outcome)
            refusals.append((ObjectRef("Pod", p.namespace, p.name), message))
            reasons += (Reason("SERVER_REFUSED", Severity.ERROR, message),)
        answered[id(p)] = replace(p, reasons=reasons, server_dry_run=outcome)
    accepted = "SERVER_REFUSED" in plan.options.accept_risks
    risks = tuple(Risk(RiskCode.SERVER_REFUSED, message, tuple(o for o, m in refusals if m == message), accepted)
                  for message in dict.fromkeys(m for _, m in refusals))
    return replace(plan, nodes=nodes, pods=tuple(answered.get(id(p), p) for p in plan.pods),
                   risks=plan.risks + risks, server_dry_run=ServerDryRun(len(results), sum(o.kind == "Pod" for o, _ in refusals)),
                   safe=plan.safe and all(r.accepted for r in risks))


def server_answer(request, outcome) -> str:
    """The server's refusal of a dry-run request, as a risk's message."""
    status = f" ({outcome.status})" if outcome.status else ""
    return f"server dry run: the {request} was refused{status}: {outcome.result} {outcome.message}".strip()

