"""Dynamic completers (click's ``shell_complete=``): names read from ``--snapshot`` files when given,
else from ``kubectl get`` with a short timeout; [] on any problem, never an error."""

from kubectl_safety.cli import registry
from kubectl_safety.cli.globals import given_globals

LOOKUP_TIMEOUT = 2  # seconds: kubectl --request-timeout for one lookup

WORKLOAD_KINDS = tuple(r.kind for r in registry.WORKLOADS)


def _item(value, **kwargs):
    """click's ``CompletionItem``, imported when a completion is asked for (not by every command)."""
    from click.shell_completion import CompletionItem

    return CompletionItem(value, **kwargs)


def complete_dry_run(ctx, param, incomplete):
    """``--dry-run=`` values, as kubectl's."""
    modes = {"none": "change things", "client": "print the plan, change nothing",
             "server": "also ask the API server (dryRun=All)"}
    return [_item(m, help=h) for m, h in modes.items() if m.startswith(incomplete)]


def complete_kinds(ctx, param, incomplete):
    """``schema KIND``: the JSON kinds of the reports, in any case as typed (``rollout`` -> ``RolloutPlan``)."""
    return [_item(k) for k in sorted(registry.OUTPUTS) if k.lower().startswith(incomplete.lower())]


def complete_names(ctx, param, incomplete):
    """A command's NAME arguments: names of the resources its declaration takes, bare or as ``TYPE/NAME``
    in the spelling being typed (``node/``, ``po/``, ``deploy/``)."""
    declared = registry.command(registry.command_path(ctx))
    takes = declared.takes if declared is not None else ()
    word, slash, rest = incomplete.partition("/")
    typed = registry.resource(word) if slash else None
    if slash and typed not in takes:
        return []
    if declared is not None and declared.typed:
        names = _lookup(ctx, "workloads")
        if not slash:
            return _items(names, incomplete)
        names = [n.partition("/")[2] for n in names if n.partition("/")[0] == typed.kind.lower()]
        return [_item(f"{word}/{i.value}") for i in _items(names, rest)]
    what = {registry.NODE: "nodes", registry.POD: "pods"}
    names = [n for r in takes if r in what for n in _lookup(ctx, what[r])]
    exclude = {v.rpartition("/")[2] for v in _given(ctx, param)}
    if not slash:
        return _items(names, incomplete, exclude)
    return [_item(f"{word}/{i.value}") for i in _items(names, rest, exclude)]


def complete_nodes(ctx, param, incomplete):
    return _items(_lookup(ctx, "nodes"), incomplete, _given(ctx, param))


def complete_pods(ctx, param, incomplete):
    return _items(_lookup(ctx, "pods"), incomplete, _given(ctx, param))


def complete_namespaces(ctx, param, incomplete):
    return _items(_lookup(ctx, "namespaces"), incomplete)


def complete_workloads(ctx, param, incomplete):
    """``deployment/NAME``, ``statefulset/NAME`` and unowned ``replicaset/NAME`` of the namespace."""
    return _items(_lookup(ctx, "workloads"), incomplete)


def complete_contexts(ctx, param, incomplete):
    """Context names of the kubeconfig (``--kubeconfig``, else ``$KUBECONFIG``, else ~/.kube/config)."""
    try:
        names = _kubeconfig_contexts(_globals(ctx).kubeconfig)
    except Exception:
        names = []
    return _items(names, incomplete)


def _items(names, incomplete, exclude=()):
    # a name a terminal could act on (escapes, line breaks, bidi overrides) is never offered
    return [_item(n) for n in dict.fromkeys(names)
            if isinstance(n, str) and n.isprintable() and n.startswith(incomplete) and n not in exclude]


def _given(ctx, param):
    """Values already on the line for a repeatable argument (``drain n1 n2 <TAB>`` skips n1, n2)."""
    value = ctx.params.get(param.name) if param.nargs == -1 else None
    return set(value) if isinstance(value, (tuple, list)) else set()


def _globals(ctx):
    return given_globals(ctx)


def _lookup(ctx, what):
    """Names from ``--snapshot`` files when given, else from the cluster; [] on any problem."""
    try:
        g = _globals(ctx)
        if g.snapshot:
            return _from_snapshot(g, what)
        return _from_cluster(g, what)
    except Exception:
        return []


def _from_snapshot(g, what):
    from kubectl_safety.cluster.dump import load_objects

    paths = [p for p in g.snapshot if p != "-"]  # stdin is the terminal while completing
    objects = [doc for _, doc in load_objects(paths)[0]] if paths else []
    namespace = g.namespace or "default"

    def named(kinds, in_namespace=True):
        return [o for o in objects if o.get("kind") in kinds
                and (not in_namespace or _meta(o).get("namespace", "default") == namespace)]

    if what == "nodes":
        return sorted(_meta(o).get("name", "") for o in named({"Node"}, in_namespace=False))
    if what == "pods":
        return sorted(_meta(o).get("name", "") for o in named({"Pod"}))
    if what == "namespaces":
        found = {_meta(o).get("name") for o in named({"Namespace"}, in_namespace=False)}
        found |= {_meta(o).get("namespace") for o in objects}
        return sorted(n for n in found if n)
    return sorted(_workload(o.get("kind"), _meta(o).get("name", ""))
                  for o in named(set(WORKLOAD_KINDS)) if not _meta(o).get("ownerReferences"))


def _meta(obj):
    return obj.get("metadata") or {}


def _workload(kind, name):
    return f"{kind.lower()}/{name}"


NAME_TEMPLATE = '{range .items[*]}{.metadata.name}{"\\n"}{end}'
WORKLOAD_TEMPLATE = '{range .items[*]}{.kind}/{.metadata.name} {.metadata.ownerReferences[0].kind}{"\\n"}{end}'
CLUSTER_QUERIES = {
    # what: (kubectl resources, namespaced, jsonpath template)
    "nodes": ("nodes", False, NAME_TEMPLATE),
    "pods": ("pods", True, NAME_TEMPLATE),
    "namespaces": ("namespaces", False, NAME_TEMPLATE),
    "workloads": ("deployments.apps,statefulsets.apps,replicasets.apps", True, WORKLOAD_TEMPLATE),
}


def _from_cluster(g, what):
    resources, namespaced, template = CLUSTER_QUERIES[what]
    lines = _kubectl_get(g, resources, template, namespaced)
    if what != "workloads":
        return sorted(line for line in lines if line)
    out = []
    for line in lines:
        ref, _, owner = line.partition(" ")
        kind, _, name = ref.partition("/")
        if kind in WORKLOAD_KINDS and name and not owner.strip():
            out.append(_workload(kind, name))
    return sorted(out)


def kubectl_args(g, namespaced) -> list:
    """The connection flags of the command line, passed on to ``kubectl get``."""
    args = [f"--request-timeout={LOOKUP_TIMEOUT}s"]
    for flag, value in (("--kubeconfig", g.kubeconfig), ("--context", g.context), ("--as", g.as_user)):
        if value:
            args.append(f"{flag}={value}")
    args += [f"--as-group={group}" for group in g.as_groups]
    if g.insecure_skip_tls_verify:
        args.append("--insecure-skip-tls-verify")
    if namespaced and g.namespace:
        args.append(f"--namespace={g.namespace}")
    return args


def _kubectl_get(g, resources, template, namespaced):
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    if not kubectl:
        return []
    proc = subprocess.run([kubectl, "get", resources, "-o", f"jsonpath={template}", *kubectl_args(g, namespaced)],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, timeout=LOOKUP_TIMEOUT + 1)
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def _kubeconfig_contexts(path):
    from kubectl_safety.cluster.kubeconfig import context_names
    from kubectl_safety.errors import ClusterError

    try:
        return context_names(path)
    except ClusterError:
        return []
