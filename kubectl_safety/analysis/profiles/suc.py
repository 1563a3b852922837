"""Rancher system-upgrade-controller (v0.20.1): a Plan's Job per node runs ``kubectl drain``.

Sources: pkg/upgrade/job/job.go ``New`` (the drain's flags: --ignore-daemonsets and --delete-emptydir-data
unless the Plan sets them false, --force, --timeout, --grace-period, --disable-eviction,
--skip-wait-for-delete-timeout, --pod-selector '!upgrade.cattle.io/controller[,selector]';
activeDeadlineSeconds 600 and backoffLimit 2), pkg/upgrade/handle_batch.go (a failed Job: the plan stops,
the node stays cordoned), pkg/upgrade/plan/plan.go ``SelectConcurrentNodes`` (``concurrency`` nodes at a
time, in the order of sha256(node UID + plan UID + plan hash); concurrency 0 selects no node).
Its oracle is kubectl's drain with these flags (tests/integration/test_engine_kubectl_drain.py).
"""

import hashlib

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, Budgets, DrainProfile, Grace, GraceRule, Order, SettingError,
                                                    SettingSpec, boolean, count, duration, integer, text)
from kubectl_safety.analysis.profiles.kubectl import selector

NAME = "suc"
TITLE = "system-upgrade-controller Plan"
SOURCES = ("rancher/system-upgrade-controller v0.20.1 pkg/upgrade/job/job.go New",
           "pkg/upgrade/handle_batch.go", "pkg/upgrade/plan/plan.go SelectConcurrentNodes")
OWN_PODS = "!upgrade.cattle.io/controller"  # the controller never drains its own pods
ATTEMPTS = 3  # backoffLimit 2: the drain runs at most three times


def timeout(value) -> float:
    """drain.timeout: a Go duration, or an integer of nanoseconds (job.go)."""
    value = str(value).strip()
    if value.isdigit():
        return int(value) / 1e9
    return duration(value)


def concurrency(value) -> int:
    n = count(value)
    if n == 0:
        raise SettingError("0 (the Plan's default) selects no node: the plan upgrades nothing")
    return n


SETTINGS = (
    SettingSpec("concurrency", "0", concurrency, "nodes upgraded at once"),
    SettingSpec("drain.ignoreDaemonSets", "true", boolean, "--ignore-daemonsets"),
    SettingSpec("drain.deleteEmptydirData", "true", boolean, "--delete-emptydir-data"),
    SettingSpec("drain.force", "false", boolean, "--force"),
    SettingSpec("drain.timeout", "0", timeout, "--timeout (0: for ever)"),
    SettingSpec("drain.gracePeriod", "-1", integer, "--grace-period"),
    SettingSpec("drain.disableEviction", "false", boolean, "--disable-eviction: PDBs bypassed"),
    SettingSpec("drain.skipWaitForDeleteTimeout", "0", count, "--skip-wait-for-delete-timeout"),
    SettingSpec("drain.podSelector", "", text, "--pod-selector, with the controller's own pods left out"),
    SettingSpec("jobActiveDeadlineSecs", "600", count, "the Job's deadline (0: none)"),
    SettingSpec("metadata.uid", "", text, "the Plan's UID (with status.latestHash: the node order)"),
    SettingSpec("status.latestHash", "", text, "the Plan's hash"),
)


DRAIN_FIELDS = ("ignoreDaemonSets", "deleteEmptydirData", "force", "timeout", "gracePeriod", "disableEviction",
                "skipWaitForDeleteTimeout")


def _plan_of(snapshot, node):
    """The Plan whose nodeSelector selects the node (none: None; a Plan without one selects no node, as
    plan.go ``SelectConcurrentNodes``); two Plans selecting it are a usage error."""
    from kubectl_safety.analysis.profiles.base import at
    from kubectl_safety.errors import UsageError
    from kubectl_safety.model.selectors import LabelSelector

    n = snapshot.node(node)
    if n is None:
        return None
    selectors = ((p, LabelSelector.parse(at(p.raw, "spec", "nodeSelector"))) for p in snapshot.upgrade_plans)
    plans = [p for p, sel in selectors if sel is not None and sel.matches(n.labels)]  # none: selects no node
    if len(plans) > 1:
        raise UsageError(f"node {node} is selected by Plans {', '.join(f'{p.namespace}/{p.name}' for p in plans)}: "
                         "predict one Plan's nodes at a time")
    return plans[0] if plans else None


def read(snapshot, nodes=(), given=None) -> dict:
    """{setting: (value, origin)} from the Plan whose nodeSelector selects each node: ``concurrency``,
    ``drain.*`` (``deleteLocalData``: the older name of ``deleteEmptydirData``), its UID and
    ``status.latestHash`` (the node order)."""
    from kubectl_safety.analysis.profiles.base import at, of_nodes
    from kubectl_safety.model.selectors import LabelSelector

    def find(node):
        plan = _plan_of(snapshot, node)
        if plan is None:
            return {}
        origin = f"Plan {plan.namespace}/{plan.name}"
        drain = at(plan.raw, "spec", "drain")
        values = {"concurrency": at(plan.raw, "spec", "concurrency"), "metadata.uid": plan.uid or None,
                  "status.latestHash": at(plan.raw, "status", "latestHash"),
                  "drain.deleteEmptydirData": at(drain, "deleteLocalData")}
        values.update({f"drain.{name}": at(drain, name) for name in DRAIN_FIELDS if at(drain, name) is not None})
        if at(drain, "podSelector"):
            values["drain.podSelector"] = str(LabelSelector.parse(drain["podSelector"]))
        return {name: (str(value).lower() if isinstance(value, bool) else str(value), origin)
                for name, value in values.items() if value is not None}
    return of_nodes(nodes, find)


def drain_options(v) -> DrainOptions:
    wanted = v["drain.podSelector"]
    return DrainOptions(ignore_daemonsets=v["drain.ignoreDaemonSets"],
                        delete_emptydir_data=v["drain.deleteEmptydirData"], force=v["drain.force"],
                        grace_period=v["drain.gracePeriod"], disable_eviction=v["drain.disableEviction"],
                        skip_wait_for_delete_timeout=v["drain.skipWaitForDeleteTimeout"],
                        pod_selector=selector(f"{OWN_PODS},{wanted}" if wanted else OWN_PODS))


def node_order(plan_uid, latest_hash):
    """``SelectConcurrentNodes``' order: sha256 of node UID, plan UID and plan hash."""
    def order(snapshot, names):
        def key(name):
            node = snapshot.node(name)
            uid = node.uid if node is not None else ""
            return hashlib.sha256(f"{uid}{plan_uid}{latest_hash}".encode()).hexdigest()
        return sorted(names, key=key)
    return order


def profile(settings) -> DrainProfile:
    v = {name: s.value for name, s in settings.items()}
    deadline, drain_timeout = v["jobActiveDeadlineSecs"], v["drain.timeout"]
    limits = [(deadline, "jobActiveDeadlineSecs")] if deadline else []
    if drain_timeout:
        limits.append((drain_timeout * ATTEMPTS, "drain.timeout"))
    limit = min(limits) if limits else None
    ordered = bool(v["metadata.uid"] and v["status.latestHash"])
    grace = v["drain.gracePeriod"]
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()), drain=drain_options(v),
        budgets=Budgets.BYPASS if v["drain.disableEviction"] else Budgets.HONOUR,
        grace=Grace(GraceRule.FIXED, grace) if grace >= 0 else Grace(),
        timeout_seconds=limit[0] if limit else None, timeout_setting=limit[1] if limit else "",
        at_timeout=AtTimeout.FAIL,
        leaves="the node cordoned and the Job failed; the Plan stops until it is updated", halts=True,
        parallel=v["concurrency"], order=Order.DETERMINISTIC if ordered else Order.RANDOM,
        node_order=node_order(v["metadata.uid"], v["status.latestHash"]) if ordered else None, sources=SOURCES,
        notes=() if ordered else ("the order follows the Plan's UID and hash (metadata.uid, status.latestHash): "
                                  "not given, each batch is one possible draw",))
