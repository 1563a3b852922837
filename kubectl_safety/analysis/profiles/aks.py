"""AKS node pool upgrade, rolling (closed: documented behaviour only).

Sources (MicrosoftDocs/azure-aks-docs articles/aks/upgrade-aks-node-pools-rolling.md, upgrade-options.md;
REST model AgentPoolUpgradeSettings):

- maxSurge: AKS adds surge nodes, then cordons and drains "as many old nodes as surge nodes"; a percentage
  is rounded up; maxUnavailable (default 0) drains nodes without a surge.
- drainTimeoutInMinutes (default 30) "honors waiting on pod disruption budgets. If this time is exceeded,
  the upgrade fails."
- nodeSoakDurationInMinutes (default 0): wait after draining a node before reimaging it.
- undrainableNodeBehavior Schedule (default): "AKS will mark the blocked nodes schedulable, but the blocked
  nodes are not upgraded"; the upgrade fails. Cordon: "The blocked nodes will have label
  'kubernetes.azure.com/upgrade-status:Quarantined'. A surge node will be retained for each blocked node."
  and the upgrade goes on with the other nodes.
- force upgrade "bypasses PDBs" and "might cause service disruption by draining all pods simultaneously".
- Old nodes are reimaged: their local data does not survive.

Not documented (docs/deviations.md): DaemonSet, emptyDir and unmanaged pods (taken as kubectl drain with
--ignore-daemonsets --delete-emptydir-data --force), the node order (taken: unknown, each batch one draw),
maxBlockedNodes (not modelled: every blocked node is quarantined).
"""

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, Budgets, DrainProfile, Order, SettingSpec, boolean, choice,
                                                    count, int_or_percent, of_total)

NAME = "aks"
TITLE = "AKS node pool upgrade"
SOURCES = ("MicrosoftDocs/azure-aks-docs articles/aks/upgrade-aks-node-pools-rolling.md",
           "MicrosoftDocs/azure-aks-docs articles/aks/upgrade-options.md", "REST model AgentPoolUpgradeSettings")

SETTINGS = (
    SettingSpec("maxSurge", "1", int_or_percent, "surge nodes (count or percent, rounded up)"),
    SettingSpec("maxUnavailable", "0", int_or_percent, "nodes drained without a surge"),
    SettingSpec("drainTimeoutInMinutes", "30", count, "per node; exceeded: the node is undrainable"),
    SettingSpec("nodeSoakDurationInMinutes", "0", count, "wait after a node's drain"),
    SettingSpec("undrainableNodeBehavior", "Schedule", choice("Schedule", "Cordon"),
                "Schedule: the upgrade fails; Cordon: the node is quarantined and the upgrade goes on"),
    SettingSpec("forceUpgrade", "false", boolean, "bypass PDBs"),
)


def profile(settings) -> DrainProfile:
    v = {name: s.value for name, s in settings.items()}
    cordon = v["undrainableNodeBehavior"] == "Cordon"
    force = v["forceUpgrade"]
    surge, unavailable = v["maxSurge"], v["maxUnavailable"]
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()),
        drain=DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True, disable_eviction=force),
        budgets=Budgets.BYPASS if force else Budgets.HONOUR,
        timeout_seconds=v["drainTimeoutInMinutes"] * 60, timeout_setting="drainTimeoutInMinutes",
        at_timeout=AtTimeout.QUARANTINE if cordon else AtTimeout.FAIL,
        leaves=("the node cordoned and labelled kubernetes.azure.com/upgrade-status=Quarantined, not upgraded, "
                "a surge node kept for it; the upgrade goes on and ends failed") if cordon else
               "the node schedulable again and not upgraded; the upgrade fails",
        halts=not cordon, parallel_of=lambda total: max(of_total(surge, total) + of_total(unavailable, total), 1),
        order=Order.RANDOM, replaces_machine=True, after_drain_seconds=v["nodeSoakDurationInMinutes"] * 60,
        new_capacity=of_total(surge, 1) > 0, sources=SOURCES,
        notes=("the documentation gives no node order: each batch is one possible draw",))
