"""Cluster API (MachineDeployment rollout, Machine deletion): the Machine controller's drain.

Sources (sigs.k8s.io/cluster-api v1.14.2):
- core/reconcilers/machine/machine_controller.go: ``reconcileDelete`` (drain, then volume detach, then
  the Machine's infrastructure is deleted), ``isNodeDrainAllowed`` (the exclude-node-draining annotation,
  ``nodeDrainTimeoutExceeded``), ``drainNode`` (``GracePeriodSeconds: -1``: each pod's own grace;
  ``drainRetryInterval``: a pass every 20 s).
- core/reconcilers/machine/drain/drain.go: ``GetPodsForEviction`` (the filter order: DaemonSet, mirror,
  local storage, unreplicated, the drain label, MachineDrainRules; the first Skip or WaitCompleted
  decides), ``getMatchingMachineDrainRules`` (rules sorted by name, the first that matches wins),
  ``EvictPods`` and ``minDrainOrderOfPodsToDrain`` (only the lowest order still on the node is evicted;
  WaitCompleted pods, order 0, hold back higher orders), the Eviction API (PDBs honoured).
- core/reconcilers/machine/drain/filters.go: ``daemonSetFilter`` (DaemonSet pods skipped unless
  orphaned or finished), ``mirrorPodFilter``, ``localStorageFilter`` and ``unreplicatedFilter`` (emptyDir
  and controller-less pods evicted, with a warning), ``drainLabelFilter`` (``cluster.x-k8s.io/drain``:
  ``skip``; ``wait-completed``), ``machineDrainRulesFilter``, ``machineDrainRuleAppliesToPod``.
- core/webhooks/admission/machinedeployment.go: maxSurge 1, maxUnavailable 0 by default;
  core/reconcilers/machineset/machineset_deletion_order.go: healthy machines are deleted by name.
- core/reconcilers/machinedeployment/mdutil/util.go ``ResolveFenceposts`` (a percentage of the replicas:
  maxSurge rounded up, maxUnavailable down, ``intstr.GetScaledValueFromIntOrPercent``; both 0: maxUnavailable
  1), ``MaxUnavailable`` (at most the replicas; 0 replicas: 0).
- core/reconcilers/machine/machine_controller.go ``reconcileDelete``: a Machine annotation with the prefix
  pre-drain.delete.hook.machine.cluster.x-k8s.io holds the drain before it starts (no timeout: the
  drain timeout counts from the drain's start); one with pre-terminate.delete.hook.machine.cluster.x-k8s.io
  holds the Machine's deletion after the drain.
"""

import json
import math

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, Budgets, Decision, DrainProfile, Grace, Hold, Order,
                                                    PodRule, SettingError, SettingSpec, boolean, count, int_or_percent)

NAME = "capi"
TITLE = "Cluster API Machine drain"
MANAGEMENT_CLUSTER = True  # Machines, MachineDeployments and MachineDrainRules live in the management cluster
SOURCES = (
    "sigs.k8s.io/cluster-api v1.14.2 core/reconcilers/machine/machine_controller.go reconcileDelete, isNodeDrainAllowed, "
    "nodeDrainTimeoutExceeded, drainNode",
    "sigs.k8s.io/cluster-api v1.14.2 core/reconcilers/machine/drain/drain.go GetPodsForEviction, "
    "getMatchingMachineDrainRules, EvictPods, minDrainOrderOfPodsToDrain",
    "sigs.k8s.io/cluster-api v1.14.2 core/reconcilers/machine/drain/filters.go daemonSetFilter, mirrorPodFilter, "
    "drainLabelFilter, machineDrainRulesFilter",
    "sigs.k8s.io/cluster-api v1.14.2 core/webhooks/admission/machinedeployment.go Default",
    "sigs.k8s.io/cluster-api v1.14.2 core/reconcilers/machinedeployment/mdutil/util.go ResolveFenceposts, "
    "MaxUnavailable",
)
PRE_DRAIN = "pre-drain.delete.hook.machine.cluster.x-k8s.io"  # api core/v1beta2 PreDrainDeleteHookAnnotationPrefix
PRE_TERMINATE = "pre-terminate.delete.hook.machine.cluster.x-k8s.io"  # PreTerminateDeleteHookAnnotationPrefix
DRAIN_RETRY_SECONDS = 20  # machine_controller.go drainRetryInterval
DRAIN_LABEL = "cluster.x-k8s.io/drain"  # api core/v1beta2 machinedrainrules_types.go PodDrainLabel
BEHAVIORS = ("Drain", "Skip", "WaitCompleted")


class Rule:
    """A MachineDrainRule as the drain uses it: name, behavior, order, its pod selectors."""

    __slots__ = ("name", "behavior", "order", "pods", "selects_machines")

    def __init__(self, name, behavior, order, pods, selects_machines):
        self.name, self.behavior, self.order = name, behavior, order
        self.pods, self.selects_machines = pods, selects_machines

    def applies_to(self, pod) -> bool:
        """machineDrainRuleAppliesToPod: no pod selectors, or one whose selector and namespaceSelector match
        (a namespace's only known label is kubernetes.io/metadata.name)."""
        if not self.pods:
            return True
        namespace = {"kubernetes.io/metadata.name": pod.namespace}
        return any((sel is None or sel.matches(pod.labels)) and (ns is None or ns.matches(namespace))
                   for sel, ns in self.pods)


def drain_rules(text) -> tuple:
    """MachineDrainRules as JSON (a list, or a List with ``items``): the Rules sorted by name."""
    from kubectl_safety.model.selectors import LabelSelector

    try:
        raw = json.loads(text) if isinstance(text, str) else text
    except ValueError as e:
        raise SettingError(f"not JSON: {e}") from None
    if isinstance(raw, dict):
        raw = raw.get("items")
    if not isinstance(raw, list):
        raise SettingError("use a JSON list of MachineDrainRule objects")
    rules = []
    for obj in raw:
        spec = obj.get("spec") if isinstance(obj, dict) else None
        name = ((obj or {}).get("metadata") or {}).get("name") if isinstance(obj, dict) else None
        if not isinstance(spec, dict) or not name:
            raise SettingError("each MachineDrainRule needs metadata.name and spec")
        drain = spec.get("drain") if isinstance(spec.get("drain"), dict) else {}
        if drain.get("behavior") not in BEHAVIORS:
            raise SettingError(f"MachineDrainRule {name}: spec.drain.behavior must be one of {', '.join(BEHAVIORS)}")
        order = drain.get("order", 0)
        if not isinstance(order, int) or (order and drain["behavior"] != "Drain"):
            raise SettingError(f"MachineDrainRule {name}: spec.drain.order is an integer, with behavior Drain only")
        try:
            pods = tuple((LabelSelector.parse(p.get("selector")), LabelSelector.parse(p.get("namespaceSelector")))
                         for p in spec.get("pods") or [])
        except Exception as e:
            raise SettingError(f"MachineDrainRule {name}: {e}") from None
        rules.append(Rule(name, drain["behavior"], order, pods, bool(spec.get("machines"))))
    return tuple(sorted(rules, key=lambda r: r.name))


def replicas(text):
    """A MachineDeployment's replicas, or empty (None: the nodes drained)."""
    return None if str(text).strip() == "" else count(text)


def hooks(prefix):
    """A parser of comma-separated annotation keys with ``prefix``/ (a bare name gets the prefix)."""
    def parse(text) -> tuple:
        keys = tuple(k.strip() if "/" in k else f"{prefix}/{k.strip()}" for k in str(text).split(",") if k.strip())
        wrong = [k for k in keys if not k.startswith(prefix + "/")]
        if wrong:
            raise SettingError(f"{wrong[0]} is not a {prefix}/ annotation")
        return keys
    return parse


def fenceposts(surge, unavailable, desired) -> tuple:
    """mdutil ResolveFenceposts and MaxUnavailable: (maxSurge, maxUnavailable) in Machines of ``desired``."""
    def scaled(value, round_up):
        if not isinstance(value, str):
            return value
        exact = int(value[:-1]) * desired
        return -(-exact // 100) if round_up else exact // 100
    s, u = scaled(surge, True), scaled(unavailable, False)
    if s == 0 and u == 0:
        u = 1
    return s, (0 if desired == 0 else min(u, desired))


SETTINGS = (
    SettingSpec("nodeDrainTimeoutSeconds", "0", count,
                "Machine spec.deletion: how long the drain may take (0: for ever); then the Machine is deleted "
                "with the pods still on it"),
    SettingSpec("maxSurge", "1", int_or_percent, "MachineDeployment rolling update: new Machines first"),
    SettingSpec("maxUnavailable", "0", int_or_percent, "MachineDeployment rolling update: Machines deleted at once"),
    SettingSpec("exclude-node-draining", "false", boolean,
                "the Machine annotation machine.cluster.x-k8s.io/exclude-node-draining: no drain at all"),
    SettingSpec("machineDrainRules", "[]", drain_rules,
                "the MachineDrainRules of the Machine's namespace, as JSON (kubectl get machinedrainrules -o json)"),
    SettingSpec("replicas", "", replicas,
                "MachineDeployment spec.replicas: what percentages of maxSurge and maxUnavailable are of "
                "(empty: the nodes drained)"),
    SettingSpec("pre-drain-hooks", "", hooks(PRE_DRAIN),
                f"the Machine's {PRE_DRAIN}/* annotations (comma-separated): the drain does not start until they "
                "are removed"),
    SettingSpec("pre-terminate-hooks", "", hooks(PRE_TERMINATE),
                f"the Machine's {PRE_TERMINATE}/* annotations (comma-separated): the Machine is not deleted after "
                "the drain until they are removed"),
)


EXCLUDE_NODE_DRAINING = "machine.cluster.x-k8s.io/exclude-node-draining"  # api core/v1beta2 machine_types.go
DEPLOYMENT_LABEL = "cluster.x-k8s.io/deployment-name"  # api core/v1beta2 machine_types.go MachineDeploymentNameLabel


def _drain_timeout(spec):
    """A Machine spec's drain timeout in seconds as text: v1beta2 ``deletion.nodeDrainTimeoutSeconds``, else
    v1beta1 ``nodeDrainTimeout`` (a duration); None: not set there."""
    from kubectl_safety.analysis.profiles.base import SettingError, at, duration

    seconds = at(spec, "deletion", "nodeDrainTimeoutSeconds")
    if seconds is not None:
        return str(seconds)
    old = at(spec, "nodeDrainTimeout")
    if old is None:
        return None

    try:
        return str(int(duration(old)))
    except SettingError:
        return str(old)  # refused by the setting's parser, named with its object


def read(snapshot, nodes=(), given=None) -> dict:
    """{setting: (value, origin)} from the Machine of each node (``status.nodeRef.name``), its
    MachineDeployment (label cluster.x-k8s.io/deployment-name) and the MachineDrainRules of its namespace."""
    from kubectl_safety.analysis.profiles.base import at, of_nodes

    def find(node):
        machine = next((m for m in snapshot.machines if m.node_name == node), None)
        if machine is None:
            return {}
        origin = f"Machine {machine.namespace}/{machine.name}"
        excluded = EXCLUDE_NODE_DRAINING in machine.annotations
        found = {"exclude-node-draining": (str(excluded).lower(), origin)}
        for name, prefix in (("pre-drain-hooks", PRE_DRAIN), ("pre-terminate-hooks", PRE_TERMINATE)):
            found[name] = (",".join(sorted(k for k in machine.annotations if k.startswith(prefix + "/"))), origin)
        deployment = next((d for d in snapshot.machine_deployments if d.namespace == machine.namespace
                           and d.name == machine.labels.get(DEPLOYMENT_LABEL)), None)
        timeout = _drain_timeout(machine.raw.get("spec"))
        if timeout is not None:
            found["nodeDrainTimeoutSeconds"] = (timeout, origin)
        if deployment is not None:
            where = f"MachineDeployment {deployment.namespace}/{deployment.name}"
            timeout = _drain_timeout(at(deployment.raw, "spec", "template", "spec"))
            if timeout is not None:
                found.setdefault("nodeDrainTimeoutSeconds", (timeout, where))
            rolling = at(deployment.raw, "spec", "rollout", "strategy", "rollingUpdate") or at(
                deployment.raw, "spec", "strategy", "rollingUpdate")  # v1beta2, v1beta1
            for name in ("maxSurge", "maxUnavailable"):
                if at(rolling, name) is not None:
                    found[name] = (str(rolling[name]), where)
            if at(deployment.raw, "spec", "replicas") is not None:
                found["replicas"] = (str(deployment.raw["spec"]["replicas"]), where)
        rules = [r for r in snapshot.machine_drain_rules if r.namespace == machine.namespace]
        if rules:
            found["machineDrainRules"] = (json.dumps([{"metadata": {"name": r.name}, "spec": r.raw.get("spec")}
                                                      for r in rules],
                                                     sort_keys=True, separators=(",", ":")),
                                          f"MachineDrainRules {', '.join(sorted(r.name for r in rules))} in "
                                          f"{machine.namespace}")
        return found
    return of_nodes(nodes, find)


def _ds_skipped(pod, snapshot) -> bool:
    """daemonSetFilter skips the pod: its controller is a DaemonSet that exists, and the pod is not finished."""
    ref = pod.controller_ref
    if not ref or ref.get("kind") != "DaemonSet" or pod.is_terminal:
        return False
    return snapshot.workload("DaemonSet", pod.namespace, ref.get("name")) is not None


def behavior(pod, rules):
    """(behavior, order, where): drainLabelFilter, then the first MachineDrainRule that applies (none: Drain, 0)."""
    value = pod.labels.get(DRAIN_LABEL)
    if value is not None:
        if value.lower() == "skip":
            return "Skip", 0, f"label {DRAIN_LABEL}={value}"
        if value.replace("-", "", 1).lower() == "waitcompleted":
            return "WaitCompleted", 0, f"label {DRAIN_LABEL}={value}"
    rule = next((r for r in rules if r.applies_to(pod)), None)
    if rule is None:
        return "Drain", 0, ""
    return rule.behavior, rule.order, f"MachineDrainRule {rule.name}"


def profile(settings) -> DrainProfile:
    v = {name: s.value for name, s in settings.items()}
    rules = v["machineDrainRules"]

    def rule(pod, snapshot):
        if v["exclude-node-draining"]:
            return PodRule(Decision.WAIT, "CAPI_EXCLUDE_NODE_DRAINING", f"not drained: the Machine has "
                           f"{EXCLUDE_NODE_DRAINING}; it is deleted with the pod on it")
        if pod.is_mirror or _ds_skipped(pod, snapshot):
            return None  # the filters before the drain label skip them
        decided, _, where = behavior(pod, rules)
        if decided == "Drain":
            return None
        if decided == "Skip":
            return PodRule(Decision.SKIP, "CAPI_DRAIN_SKIP", f"left in place: {where} says Skip")
        return PodRule(Decision.WAIT, "CAPI_WAIT_COMPLETED", f"not evicted: {where} says WaitCompleted; "
                       "the drain waits until the pod completes")

    def order_group(pod):
        order = behavior(pod, rules)[1]
        return order, f"order {order}"

    timeout = v["nodeDrainTimeoutSeconds"]
    notes = [f"the drain runs in passes {DRAIN_RETRY_SECONDS} s apart: it gives up at the first pass at or past "
             "nodeDrainTimeoutSeconds"] if timeout else []
    if any(r.selects_machines for r in rules):
        notes.append("MachineDrainRules that select Machines are taken to apply to every node drained")
    if any(ns is not None for r in rules for _, ns in r.pods):
        notes.append("a namespaceSelector sees only the namespace's kubernetes.io/metadata.name label")
    surge, unavailable, desired = v["maxSurge"], v["maxUnavailable"], v["replicas"]

    def parallel_of(total):  # Machines replaced at once: new ones up to maxSurge, old ones down to maxUnavailable
        return max(sum(fenceposts(surge, unavailable, total if desired is None else desired)), 1)
    holds = tuple(Hold(before, name, code, f"{', '.join(v[name])} on the Machine {what} until removed (no timeout)")
                  for before, name, code, what in (
                      (True, "pre-drain-hooks", "CAPI_PRE_DRAIN_HOOK", "holds the drain"),
                      (False, "pre-terminate-hooks", "CAPI_PRE_TERMINATE_HOOK", "holds the Machine's deletion"))
                  if v[name])
    if v["exclude-node-draining"]:
        timeout, setting = 0, "exclude-node-draining"
    else:
        timeout = math.ceil(timeout / DRAIN_RETRY_SECONDS) * DRAIN_RETRY_SECONDS if timeout else None
        setting = "nodeDrainTimeoutSeconds"
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()),
        drain=DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True),
        rules=(rule,), budgets=Budgets.HONOUR, order_group=order_group, grace=Grace(),
        timeout_seconds=timeout, timeout_setting=setting, at_timeout=AtTimeout.FORCE,
        leaves="", halts=False, parallel_of=parallel_of, order=Order.DETERMINISTIC,
        node_order=lambda snapshot, names: sorted(names), holds=holds,
        replaces_machine=True, new_capacity=(int(surge[:-1]) if isinstance(surge, str) else surge) > 0,
        sources=SOURCES, notes=tuple(notes))
