"""Shell completion: kubectl's plugin completion protocol over click's, and dynamic completers.

``kubectl_complete-safety`` (kubectl >= 1.26) receives the words after ``safety`` plus the word
being completed (``""`` for a new word) and prints one ``value<TAB>description`` per line, then
``:<directive>`` (cobra's ShellCompDirective). Static answers (subcommands, flags) come from the
click tree without importing the kubernetes client. Dynamic completers (``complete_nodes`` ...)
are plugged into parameters with ``shell_complete=``; they read ``--snapshot`` files when given,
else ask ``kubectl get`` with a short timeout. A completion never hangs and never prints an error.
"""

import contextlib
import io
import os
import sys

import click
from click.shell_completion import CompletionItem, FishComplete, ShellComplete, add_completion_class

COMPLETE_VAR = "_KUBECTL_SAFETY_COMPLETE"
EXECUTABLE = "kubectl-safety"
LOOKUP_TIMEOUT = 2  # seconds: kubectl --request-timeout for one lookup
HARD_LIMIT = 5  # seconds: a kubectl_complete-safety run answers within this, whatever happens

# cobra ShellCompDirective values
DIRECTIVE_DEFAULT, DIRECTIVE_NO_SPACE, DIRECTIVE_NO_FILE_COMP, DIRECTIVE_FILTER_DIRS = 0, 2, 4, 16

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "ReplicaSet")


class KubectlComplete(ShellComplete):
    """Answer one kubectl plugin completion request for ``argv`` (the words after ``safety``)."""

    name = "kubectl"

    def __init__(self, cli, argv):
        super().__init__(cli, {}, "kubectl safety", COMPLETE_VAR)
        self.argv = list(argv)

    def get_completion_args(self):
        if not self.argv:
            return [], ""
        return self.argv[:-1], self.argv[-1]

    def format_completion(self, item):
        description = " ".join(str(item.help or "").split())
        return f"{item.value}\t{description}" if description else str(item.value)

    def complete(self):
        args, incomplete = self.get_completion_args()
        items = self.get_completions(args, incomplete)
        lines = [self.format_completion(i) for i in items if i.type == "plain"]
        return "\n".join(lines + [f":{directive(items)}"])


class WholeFishComplete(FishComplete):
    """click's fish support, but a description with commas stays whole (split at the first comma only)."""

    source_template = FishComplete.source_template.replace('(string split "," $completion)',
                                                            '(string split -m 1 "," $completion)')

    def format_completion(self, item):
        help_ = " ".join(str(item.help or "").split())
        return f"{item.type},{item.value}\t{help_}" if help_ else f"{item.type},{item.value}"


add_completion_class(WholeFishComplete, "fish")


def summary(command) -> str:
    """A command's whole one-line summary (the docstring's first paragraph), not click's 45-character cut."""
    text = command.short_help or (command.help or "").split("\n\n")[0]
    return " ".join(text.split())


class WholeHelpGroup(click.Group):
    """A group whose help and subcommand completions carry each subcommand's whole summary."""

    def format_commands(self, ctx, formatter):
        rows = [(name, summary(cmd)) for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def shell_complete(self, ctx, incomplete):
        items = [CompletionItem(name, help=summary(cmd)) for name in self.list_commands(ctx)
                 if name.startswith(incomplete) and (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        return items + click.Command.shell_complete(self, ctx, incomplete)


def complete_dry_run(ctx, param, incomplete):
    """``--dry-run=`` values, as kubectl's."""
    modes = {"none": "change things", "client": "print the plan, change nothing",
             "server": "also ask the API server (dryRun=All)"}
    return [CompletionItem(m, help=h) for m, h in modes.items() if m.startswith(incomplete)]


def directive(items) -> int:
    """Files or directories let the shell complete paths; anything else turns path completion off."""
    types = {i.type for i in items}
    if "file" in types:
        return DIRECTIVE_DEFAULT
    if "dir" in types:
        return DIRECTIVE_FILTER_DIRS
    if any(str(i.value).endswith("=") for i in items):  # -o jsonpath= : the template follows, no space
        return DIRECTIVE_NO_FILE_COMP | DIRECTIVE_NO_SPACE
    return DIRECTIVE_NO_FILE_COMP


SHELLS = ("bash", "zsh", "fish")
INSTRUCTIONS = tuple(f"{shell}_{what}" for what in ("source", "complete") for shell in SHELLS)


def instruction_error(value=None):
    """What is wrong with ``_KUBECTL_SAFETY_COMPLETE`` (None when unset, empty or one click answers)."""
    value = os.environ.get(COMPLETE_VAR) if value is None else value
    if not value or value in INSTRUCTIONS:
        return None
    return (f"{COMPLETE_VAR}={value} is not a completion instruction: "
            f"use {', '.join(INSTRUCTIONS[:-1])} or {INSTRUCTIONS[-1]}")


def shell_source(shell: str) -> str:
    """The bash/zsh/fish script click generates for the ``kubectl-safety`` executable."""
    from click.shell_completion import get_completion_class

    from kubectl_safety.cli.main import cli

    completer = get_completion_class(shell)(cli, {}, EXECUTABLE, COMPLETE_VAR)
    # ShellComplete.source without BashComplete's bash version probe: the text depends on nothing else.
    return ShellComplete.source(completer)


# -- dynamic completers (signature of click's ``shell_complete=``) -----------------------------

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
    return [CompletionItem(n) for n in dict.fromkeys(names)
            if isinstance(n, str) and n.isprintable() and n.startswith(incomplete) and n not in exclude]


def _given(ctx, param):
    """Values already on the line for a repeatable argument (``drain n1 n2 <TAB>`` skips n1, n2)."""
    value = ctx.params.get(param.name) if param.nargs == -1 else None
    return set(value) if isinstance(value, (tuple, list)) else set()


def _globals(ctx):
    from kubectl_safety.cli.options import get_globals

    return get_globals(ctx)


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
    import yaml

    if path:
        paths = [path]
    else:
        paths = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
        paths = paths or [os.path.expanduser("~/.kube/config")]
    names = []
    for p in paths:
        if os.path.isfile(p):
            with open(p, encoding="utf-8") as f:
                config = yaml.safe_load(f) or {}
            names += [c.get("name") for c in config.get("contexts") or [] if isinstance(c, dict) and c.get("name")]
    return names


# -- the kubectl_complete-safety executable -----------------------------------------------------

class _TooSlow(Exception):
    pass


def _too_slow(signum, frame):
    raise _TooSlow()


def answer(argv) -> str:
    """The full answer to one request; ``:4`` alone when anything goes wrong."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            from kubectl_safety.cli.main import cli

            return KubectlComplete(cli, argv).complete()
    except BaseException:  # noqa: BLE001 - a completion prints candidates or nothing, never an error
        return f":{DIRECTIVE_NO_FILE_COMP}"


def main(argv=None):
    """Entry point of ``kubectl_complete-safety``."""
    import signal

    argv = sys.argv[1:] if argv is None else argv
    alarm = hasattr(signal, "SIGALRM")
    if alarm:
        previous = signal.signal(signal.SIGALRM, _too_slow)
        signal.alarm(HARD_LIMIT)
    try:
        out = answer(argv)
    finally:
        if alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    from kubectl_safety.printable import printable

    sys.stdout.write("\n".join("\t".join(map(printable, line.split("\t"))) for line in out.split("\n")) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
