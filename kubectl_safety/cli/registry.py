"""Every command declared once: its path, module, the resource types its NAME arguments may carry
(``TYPE/NAME``), whether ``-A`` applies, and the JSON kinds it prints. The command table, the
``TYPE/NAME`` rewriting, the ``-A`` check, ``-o name`` and name completion are all read from here.

Plain data: no click, nothing imported on ``--help`` beyond this module.
"""

from typing import NamedTuple

# -o formats one command prints (format: "command: what"); the others refuse them.
OWN_FORMATS = {"openreports": "check: the readiness as OpenReports objects"}


class Resource(NamedTuple):
    """A resource type as kubectl spells it: singular first, then the plural and short names."""

    kind: str
    spellings: tuple
    group: str = ""

    @property
    def name(self) -> str:
        return self.spellings[0]


POD = Resource("Pod", ("pod", "pods", "po"))
NODE = Resource("Node", ("node", "nodes", "no"))
DEPLOYMENT = Resource("Deployment", ("deployment", "deployments", "deploy"), "apps")
STATEFULSET = Resource("StatefulSet", ("statefulset", "statefulsets", "sts"), "apps")
REPLICASET = Resource("ReplicaSet", ("replicaset", "replicasets", "rs"), "apps")
DAEMONSET = Resource("DaemonSet", ("daemonset", "daemonsets", "ds"), "apps")
JOB = Resource("Job", ("job", "jobs"), "batch")
RESOURCES = (POD, NODE, DEPLOYMENT, STATEFULSET, REPLICASET, DAEMONSET, JOB)
WORKLOADS = (DEPLOYMENT, STATEFULSET, REPLICASET)


def resource(word: str):
    """The resource a kubectl TYPE names (``po``, ``Pods``, ``deployments.apps``), or None."""
    name = str(word).split(".")[0].lower()
    return next((r for r in RESOURCES if name in r.spellings), None)


class Output(NamedTuple):
    """A JSON kind a command prints (its schema is ``schemas/KIND.json``) and what ``-o name`` lists of it:
    the path of its objects (None: the report itself), their TYPE, and which of them (None: all)."""

    kind: str
    objects: str = None
    type: str = None
    wanted: object = None

    @property
    def schema(self) -> str:
        return f"schemas/{self.kind}.json"


OUTPUTS = {o.kind: o for o in (
    Output("PodExplanation", None, "pod"),
    Output("NodeExplanation", None, "node"),
    Output("PodPostMortem", None, "pod"),
    Output("NodePostMortem", None, "node"),
    Output("PriorityAudit", "classes", "priorityclass.scheduling.k8s.io"),
    Output("DrainPlan", "pods", "pod", lambda p: p.get("action") in ("evict", "delete")),
    Output("DrainReport", "evicted", "pod"),
    Output("PreemptionPreview", "victims", "pod"),
    Output("ForceDeleteAssessment", "pods", "pod"),
    Output("DeleteReport", "pods", "pod", lambda p: p.get("action") in ("deleted", "forceDeleted")),
    Output("RebalancePlan", "evictions", "pod"),
    Output("RolloutPlan", "batches", "node"),  # each batch's nodes, in the order they are maintained
    Output("RolloutReport"),
    Output("ClusterCheck", "nodes", "node"),
    Output("EnginePlan"),
    Output("Version"),
    Output("List"),
)}


class Command(NamedTuple):
    """One command: ``path`` after ``kubectl safety``; ``module`` under ``kubectl_safety.cli.commands``
    exposing ``command`` (top-level commands; None when defined in ``main``); ``takes``: the resources its
    NAME arguments may be written as (``TYPE/NAME``); ``typed``: the TYPE is part of the argument
    (``deploy/web``) rather than stripped from it; ``all_namespaces``: True, or why ``-A`` is refused;
    ``namespace``: True, or why ``-n`` is refused; ``kinds``: the JSON kinds it prints."""

    path: str
    module: str = None
    takes: tuple = ()
    typed: bool = False
    all_namespaces: object = "it has no use for it"
    namespace: object = "it has no use for it"
    kinds: tuple = ()


COMMANDS = (
    Command("explain", "explain"),
    Command("explain pod", takes=(POD,), kinds=("PodExplanation",),
            all_namespaces="a pod is named in one namespace: use -n NAMESPACE", namespace=True),
    Command("explain node", takes=(NODE,), kinds=("NodeExplanation",), all_namespaces="a node has no namespace",
            namespace="a node has no namespace"),
    Command("explain priorities", kinds=("PriorityAudit",), all_namespaces=True,
            namespace="it audits every namespace"),
    Command("why", "why"),
    Command("why pod", takes=(POD,), kinds=("PodPostMortem",),
            all_namespaces="a pod is named in one namespace: use -n NAMESPACE", namespace=True),
    Command("why node", takes=(NODE,), kinds=("NodePostMortem",), all_namespaces="a node has no namespace",
            namespace="a node has no namespace"),
    Command("drain", "drain", takes=(NODE,), kinds=("DrainPlan", "DrainReport", "EnginePlan"),
            all_namespaces="drain works on nodes, which have no namespace",
            namespace="drain works on nodes and every pod on them (--pod-selector selects pods)"),
    Command("preemption", "preemption", takes=(POD,), kinds=("PreemptionPreview", "List"),
            all_namespaces="it previews one pod or manifest: use -n NAMESPACE", namespace=True),
    Command("delete", "delete"),
    Command("delete pod", takes=(POD,), kinds=("ForceDeleteAssessment", "DeleteReport"), all_namespaces=True,
            namespace=True),
    Command("rebalance", "rebalance", takes=WORKLOADS, typed=True, kinds=("RebalancePlan",), all_namespaces=True,
            namespace=True),
    Command("rollout", "rollout", takes=(NODE,), kinds=("RolloutPlan", "RolloutReport", "EnginePlan"),
            all_namespaces="rollout works on nodes, which have no namespace",
            namespace="rollout works on nodes and every pod on them"),
    Command("check", "check", kinds=("ClusterCheck", "List", "EnginePlan"), all_namespaces=True,  # (it reads every namespace)
            namespace="it checks every namespace (-l selects the nodes)"),
    Command("version", "version", kinds=("Version",), all_namespaces="it reads no namespaced objects",
            namespace="it reads no namespaced objects"),
    Command("snapshot", "snapshot", all_namespaces="it reads every namespace",
            namespace="it reads every namespace"),
    Command("options", "options"),
    Command("schema", "schema"),
    Command("completion", "completion"),
    Command("help"),
)
BY_PATH = {c.path: c for c in COMMANDS}
LAZY = {c.path: c.module for c in COMMANDS if c.module}  # top-level commands imported on use


def command(path: str):
    """The declaration of ``path`` (``explain pod``), or None."""
    return BY_PATH.get(path)


def subcommand(group_path: str, word: str):
    """The subcommand of ``group_path`` that ``word`` names, a resource spelled any kubectl way
    (``explain pods``, ``delete po``), or None."""
    r = resource(word)
    names = (word,) + ((r.name,) if r else ())
    for name in names:
        found = BY_PATH.get(f"{group_path} {name}".strip())
        if found is not None:
            return found
    return None


def command_path(ctx) -> str:
    """The subcommand words after ``kubectl safety`` of a click context (``explain pod``; ``""``: the root)."""
    names = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(reversed(names))
