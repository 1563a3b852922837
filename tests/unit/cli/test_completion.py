"""Shell completion: kubectl's plugin protocol, dynamic completers, generated scripts, import cost."""

import os
import subprocess
import sys
import textwrap
import time

import click
import pytest

from kubectl_safety.cli import completers, completion
from kubectl_safety.cli.completers import (complete_contexts, complete_namespaces, complete_nodes, complete_pods,
                                           complete_workloads)
from kubectl_safety.cli.completion import KubectlComplete, answer
from kubectl_safety.cli.main import COMMANDS, cli
from kubectl_safety.cli.options import global_options
from tests.unit.cli_helpers import DEMO, run_cli

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_completions  # noqa: E402


def lines(out):
    """(candidate values, directive) of a protocol answer."""
    rows = out.splitlines()
    assert rows and rows[-1].startswith(":"), out
    return [r.split("\t")[0] for r in rows[:-1]], int(rows[-1][1:])


# A small tree wired like the real commands should be (shell_complete= on each argument).
@click.group()
@global_options
def demo_cli():
    """Demo."""


@demo_cli.command("drain")
@click.argument("nodes", nargs=-1, shell_complete=complete_nodes)
@global_options
def demo_drain(nodes):
    """Drain."""


@demo_cli.command("explain-pod")
@click.argument("name", shell_complete=complete_pods)
@click.option("--ns", shell_complete=complete_namespaces)
@click.option("--ctx", shell_complete=complete_contexts)
@global_options
def demo_explain(name, ns, ctx):
    """Explain."""


@demo_cli.command("rebalance")
@click.argument("workload", required=False, shell_complete=complete_workloads)
@global_options
def demo_rebalance(workload):
    """Rebalance."""


def demo_answer(*argv):
    return lines(KubectlComplete(demo_cli, argv).complete())


# -- static completion of the real command tree --------------------------------------------------

@pytest.mark.parametrize("argv, expected, directive", [
    (["ex"], ["explain"], 4),
    (["dr"], ["drain"], 4),
    (["explain", ""], ["node", "pod", "priorities"], 4),
    (["explain", "pod", "--snap"], ["--snapshot"], 4),
    (["-o", ""], ["table", "wide", "json", "yaml", "name", "jsonpath=", "jsonpath-as-json=", "jsonpath-file=",
                  "go-template=", "go-template-file=", "custom-columns=", "custom-columns-file="], 6),
    (["explain", "node", "--output=y"], ["yaml"], 4),
    (["drain", "n1", "--dry-run="], ["none", "client", "server"], 4),
    (["explain", "pod", "-o", "custom"], ["custom-columns=", "custom-columns-file="], 6),
    (["zzz"], [], 4),
    (["schema", ""], ["ClusterCheck", "DeleteReport", "DrainPlan", "DrainReport", "EnginePlan", "ForceDeleteAssessment",
                      "List", "NodeExplanation", "NodePostMortem", "PodExplanation", "PodPostMortem", "PreemptionPreview",
                      "PriorityAudit", "RebalancePlan", "RolloutPlan", "RolloutReport", "Version"], 4),
    (["schema", "drain"], ["DrainPlan", "DrainReport"], 4),
    (["completion", ""], ["bash", "zsh", "fish"], 4),
], ids=["subcommand-prefix", "drain-prefix", "nested-group", "flag-prefix", "choice-values", "flag-equals-value",
        "dry-run-equals-values", "templated-output-no-space", "no-match", "schema-kinds", "schema-kinds-any-case",
        "completion-shells"])
def test_static_completion(argv, expected, directive):
    values, got = lines(answer(argv))
    assert values == expected
    assert got == directive


def test_every_registered_command_completes_from_its_prefix():
    available = cli.list_commands(None)
    assert "explain" in available and "version" in available
    for name in available:
        assert name in COMMANDS or name == "help"
        values, _ = lines(answer([name[:2]]))
        assert name in values


def test_new_word_lists_subcommands_with_one_line_descriptions():
    out = answer([""])
    rows = out.splitlines()[:-1]
    assert {r.split("\t")[0] for r in rows} == set(cli.list_commands(None))
    assert all("\t" in r and "\n" not in r.split("\t")[1] for r in rows)


@pytest.mark.parametrize("types, directive", [
    ([], 4), (["plain"], 4), (["file"], 0), (["dir"], 16), (["plain", "file"], 0),
], ids=["nothing", "plain", "file", "dir", "mixed-file"])
def test_directive(types, directive):
    assert completion.directive([click.shell_completion.CompletionItem("x", type=t) for t in types]) == directive


def test_broken_command_line_prints_only_a_directive():
    assert answer(["--as-of", "not-a-time", "explain", "pod", ""]).splitlines()[-1] == ":4"
    assert answer(["explain", "pod", "--snapshot", "/no/such/file", ""]) == ":4"


# -- dynamic completion from --snapshot files -----------------------------------------------------

@pytest.mark.parametrize("argv, expected", [
    (["drain", "--snapshot", DEMO, "node-a"], ["node-a1", "node-a2"]),
    (["drain", "--snapshot", DEMO, "node-a1", "node-b"], ["node-b1", "node-b2"]),
    (["drain", "--snapshot", DEMO, "node-a1", "node-b1", "node-a"], ["node-a2"]),
    (["explain-pod", "--snapshot", DEMO, "-n", "shop", "db"], ["db-0", "db-1", "db-2"]),
    (["--snapshot", DEMO, "explain-pod", ""], ["debug-shell"]),
    (["explain-pod", "--snapshot", DEMO, "--ns", ""], ["default", "jobs", "monitoring", "shop"]),
    (["rebalance", "--snapshot", DEMO, "-n", "shop", ""], ["deployment/api", "deployment/web", "statefulset/db"]),
    (["rebalance", "--snapshot", DEMO, "-n", "shop", "st"], ["statefulset/db"]),
    (["drain", "--snapshot", "-", ""], []),
], ids=["nodes-prefix", "second-node", "given-nodes-skipped", "pods-in-namespace", "pods-default-namespace",
        "namespaces",
        "workloads-without-owned-replicasets", "workload-prefix", "stdin-never-read"])
def test_dynamic_completion_from_snapshot(argv, expected):
    values, directive = demo_answer(*argv)
    assert values == expected
    assert directive == 4


# -- dynamic completion from the cluster (a fake kubectl on PATH records what it was asked) --------

@pytest.fixture
def fake_kubectl(tmp_path, monkeypatch):
    """Install ``kubectl`` printing ``output`` (after ``sleep`` s, with ``rc``); returns (setter, log)."""
    log = tmp_path / "args.log"

    def make(output="", rc=0, sleep=0):
        script = tmp_path / "kubectl"
        script.write_text(textwrap.dedent(f"""\
            #!/bin/sh
            printf '%s\\n' "$@" >> {log}
            sleep {sleep}
            echo "error: you must be logged in" >&2
            printf '{output}'
            exit {rc}
            """))
        script.chmod(0o755)
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return make, log


@pytest.mark.parametrize("argv, output, expected, flags", [
    (["drain", "w"], "worker-1\\nworker-2\\ncontrol\\n", ["worker-1", "worker-2"], ["get", "nodes"]),
    (["drain", "--context", "prod", "--kubeconfig", "/k", ""], "n1\\n", ["n1"],
     ["--context=prod", "--kubeconfig=/k"]),
    (["explain-pod", "-n", "shop", "--as", "me", "--as-group", "sre", ""], "web-0\\n", ["web-0"],
     ["get", "pods", "--namespace=shop", "--as=me", "--as-group=sre"]),
    (["rebalance", "-n", "shop", ""],
     "Deployment/web \\nReplicaSet/web-5d8 Deployment\\nReplicaSet/solo \\nStatefulSet/db \\n",
     ["deployment/web", "replicaset/solo", "statefulset/db"],
     ["deployments.apps,statefulsets.apps,replicasets.apps"]),
], ids=["nodes", "connection-flags", "pods-namespace-impersonation", "workloads"])
def test_dynamic_completion_from_cluster(fake_kubectl, argv, output, expected, flags):
    make, log = fake_kubectl
    make(output)
    values, _ = demo_answer(*argv)
    assert values == expected
    asked = log.read_text().splitlines()
    assert "--request-timeout=2s" in asked
    for flag in flags:
        assert flag in asked


def test_cluster_error_prints_nothing(fake_kubectl, capfd):
    make, _ = fake_kubectl
    make("half-output\\n", rc=1)
    assert demo_answer("drain", "") == ([], 4)
    assert capfd.readouterr().err == ""


def test_main_writes_the_answer_to_stdout(capfd):
    assert completion.main(["ex"]) == 0
    out, err = capfd.readouterr()
    assert out.startswith("explain\t") and out.endswith("\n:4\n")
    assert err == ""


def test_hanging_cluster_never_hangs_completion(fake_kubectl):
    make, _ = fake_kubectl
    make("late\\n", sleep=30)
    start = time.monotonic()
    values, directive = demo_answer("drain", "")
    assert values == [] and directive == 4
    assert time.monotonic() - start < completers.LOOKUP_TIMEOUT + 4  # the stub would sleep 30s


def test_no_kubectl_on_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert demo_answer("drain", "") == ([], 4)


# -- kubeconfig contexts ----------------------------------------------------------------------------

def kubeconfig(path, *names):
    path.write_text("apiVersion: v1\nkind: Config\ncontexts:\n"
                    + "".join(f"- name: {n}\n  context: {{cluster: c, user: u}}\n" for n in names))
    return str(path)


def test_contexts_from_flag_and_env(tmp_path, monkeypatch):
    a = kubeconfig(tmp_path / "a", "prod-eu", "prod-us", "dev")
    b = kubeconfig(tmp_path / "b", "staging", "prod-eu")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([a, str(tmp_path / "missing"), b]))
    assert demo_answer("explain-pod", "--ctx", "")[0] == ["prod-eu", "prod-us", "dev", "staging"]
    assert demo_answer("explain-pod", "--ctx", "prod")[0] == ["prod-eu", "prod-us"]
    assert demo_answer("--kubeconfig", b, "explain-pod", "--ctx", "")[0] == ["staging", "prod-eu"]
    (tmp_path / "a").write_text("{not yaml: [")
    assert demo_answer("explain-pod", "--ctx", "")[0] == []


# -- the real command tree is wired to the completers (lead / command owners add shell_complete=) --

@pytest.mark.parametrize("argv, expected", [
    (["-n", "mon"], ["monitoring"]),
    (["explain", "pod", "-n", "shop", "db"], ["db-0", "db-1", "db-2"]),
    (["explain", "node", "node-c"], ["node-c1", "node-c2"]),
    (["drain", "node-c1", "node-c"], ["node-c2"]),
    (["delete", "pod", "-n", "shop", "db-0", "db"], ["db-1", "db-2"]),
    (["preemption", "-n", "jobs", "b"], ["batch-6f5d-0b0", "batch-6f5d-1b1"]),
    (["rebalance", "-n", "shop", ""], ["deployment/api", "deployment/web", "statefulset/db"]),
], ids=["global-namespace", "explain-pod-name", "explain-node-name", "drain-nodes", "delete-pods",
        "preemption-pod", "rebalance-workload"])
def test_real_tree_completes_names_from_snapshot(argv, expected):
    values, _ = lines(answer(["--snapshot", DEMO, *argv]))
    assert values == expected


def test_real_tree_completes_contexts(tmp_path):
    config = kubeconfig(tmp_path / "config", "kind-a", "kind-b")
    assert lines(answer(["--kubeconfig", config, "--context", "kind-"]))[0] == ["kind-a", "kind-b"]


# -- generated shell scripts --------------------------------------------------------------------------

@pytest.mark.parametrize("shell", gen_completions.SHELLS)
def test_committed_completion_script_is_current(shell):
    with open(gen_completions.path(shell), encoding="utf-8") as f:
        committed = f.read()
    assert committed == gen_completions.script(shell), "run: python scripts/gen_completions.py"
    assert "kubectl-safety" in committed and "_KUBECTL_SAFETY_COMPLETE" in committed
    assert "kubectl safety" not in committed.replace("`kubectl safety <TAB>`", "")


@pytest.mark.parametrize("shell", gen_completions.SHELLS)
def test_completion_command_prints_the_committed_script(shell):
    """``kubectl safety completion SHELL``: a pip or pipx install needs no checkout for completion."""
    code, out, err = run_cli(["completion", shell])
    with open(gen_completions.path(shell), encoding="utf-8") as f:
        assert (code, out, err) == (0, f.read(), "")


def test_completion_command_rejects_another_shell():
    code, out, err = run_cli(["completion", "ksh"])
    assert (code, out) == (2, "") and err.startswith("error: Invalid value for 'SHELL': 'ksh' is not one of"), err


def test_bash_script_from_the_completion_command_completes():
    """``source <(kubectl-safety completion bash)``: the installed executable answers, no checkout needed."""
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])
    source = f"source <({sys.executable} -m kubectl_safety completion bash)"
    assert bash_complete(["kubectl-safety", "schema", "Roll"], 2, path, source) == ["RolloutPlan", "RolloutReport"]


def bash_complete(words, cword, path, source=None):
    """COMPREPLY of the committed bash script (or ``source``) for COMP_WORDS/COMP_CWORD, in a real bash."""
    quoted = " ".join("'" + w + "'" for w in words)
    script = ((source or f"source {gen_completions.path('bash')}") + "\n"
              f"COMP_WORDS=({quoted}); COMP_CWORD={cword}\n"
              "_kubectl_safety_completion kubectl-safety\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = {**os.environ, "PATH": path}
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


def test_bash_script_from_checkout():
    path = os.pathsep.join([os.path.join(ROOT, "bin"), os.environ["PATH"]])
    assert bash_complete(["kubectl-safety", "ex"], 1, path) == ["explain"]
    assert bash_complete(["kubectl-safety", "explain", ""], 2, path) == ["node", "pod", "priorities"]


# -- import cost: static paths load neither the kubernetes client nor the planners -----------------------

STATIC_PATHS = [
    (["-m", "kubectl_safety", "--help"], {}),
    (["-m", "kubectl_safety", "drain", "--help"], {}),
    (["-m", "kubectl_safety.cli.completion", "drain", "n1", "--"], {}),
    (["-m", "kubectl_safety"], {"_KUBECTL_SAFETY_COMPLETE": "bash_complete",
                                "COMP_WORDS": "kubectl-safety delete pod --", "COMP_CWORD": "3"}),
]
HEAVY = ("kubectl_safety.analysis", "kubectl_safety.engine", "kubectl_safety.cli.published", "kubectl_safety.cli.views")


# Runs argv (python's own arguments) and writes, when the process ends (also through os._exit, as main ends),
# every module it imported, one per line, to the file named by $MODULES_OUT. -X importtime is not used: its
# lines for the last imports are lost when the process ends with os._exit.
MODULES_WRAPPER = """
import atexit, os, runpy, sys
def dump(code=0, _exit=os._exit):
    with open(os.environ["MODULES_OUT"], "w") as f:
        f.write("\\n".join(sys.modules))
    _exit(code)
os._exit = dump
atexit.register(lambda: dump(0, lambda code: None))
sys.argv = sys.argv[1:]
flag = sys.argv.pop(0)
if flag == "-m":
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:  # -c CODE
    exec(sys.argv[0], {"__name__": "__main__"})
"""


def imported_modules(argv, env=None, tmp_path=None) -> tuple:
    """(process, the modules it imported) of ``python ARGV``."""
    out = os.path.join(tmp_path, "modules")
    proc = subprocess.run([sys.executable, "-c", MODULES_WRAPPER, *argv], capture_output=True, text=True,
                          env={**os.environ, **(env or {}), "MODULES_OUT": out}, timeout=60)
    with open(out) as f:
        return proc, f.read().split()


def test_the_module_list_sees_the_last_import(tmp_path):
    """The list is read at the very end: a module imported just before os._exit is in it."""
    proc, modules = imported_modules(["-c", "import os, tabulate; os._exit(3)"], tmp_path=tmp_path)
    assert proc.returncode == 3 and "tabulate" in modules


@pytest.mark.parametrize("argv, env", STATIC_PATHS, ids=["help", "drain-help", "plugin-completion",
                                                         "click-bash-completion"])
def test_help_and_completion_import_no_analysis_engine_or_serializers(argv, env, tmp_path):
    """--help and a completion request load no planner, typed plan, engine report or serializer, and
    neither the kubernetes client nor YAML."""
    proc, imported = imported_modules(argv, env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip()
    assert "kubectl_safety.cli.main" in imported
    assert [m for m in imported if m.startswith(HEAVY)] == []
    assert not [m for m in imported if m.split(".")[0] in ("kubernetes", "urllib3", "yaml")]


OTHER_FAMILIES = ("kubectl_safety.engine.drain_report", "kubectl_safety.engine.drainer", "kubectl_safety.engine.rollout",
                  "kubectl_safety.engine.rebalance", "kubectl_safety.engine.delete", "kubectl_safety.engine.surge",
                  "kubectl_safety.analysis.capacity", "kubectl_safety.analysis.explain",
                  "kubectl_safety.analysis.explanations.pod", "kubectl_safety.analysis.explanations.node",
                  "kubectl_safety.analysis.explanations.priority", "kubectl_safety.analysis.explanations.delete",
                  "kubectl_safety.analysis.plans.check", "kubectl_safety.analysis.plans.rollout",
                  "kubectl_safety.analysis.plans.rebalance", "kubectl_safety.analysis.plans.preemption",
                  *(f"kubectl_safety.cli.views.{v}" for v in ("check", "delete", "engine", "explain", "preemption",
                                                               "rebalance", "rollout", "version", "why")))


@pytest.mark.parametrize("output", [["-o", "json"], []], ids=["json", "table"])
def test_node_scoped_dry_run_drain_imports_only_the_drain_families(output, tmp_path):
    """``drain NODE --dry-run --no-capacity`` (printed as JSON too) loads the drain's plans and its view, not
    the other plan families and views, the explanations or the engine's actions and reports (its planner,
    which reads and plans, it does load)."""
    argv = ["-m", "kubectl_safety", "drain", "node-a1", "--dry-run", "--no-capacity", "--ignore-daemonsets",
            "--snapshot", DEMO, *output]
    proc, imported = imported_modules(argv, tmp_path=tmp_path)
    assert proc.returncode in (0, 3), proc.stderr[-2000:]
    assert "kubectl_safety.analysis.plans.drain" in imported and "kubectl_safety.cli.views.drain" in imported
    assert [m for m in imported if m.startswith(OTHER_FAMILIES)] == []


def test_every_published_kind_names_its_class():
    """The serializers are found by class name: each name in the table is a class of that module."""
    import importlib

    from kubectl_safety.cli.published import serializers

    for name in serializers():
        module, _, cls = name.rpartition(".")
        assert isinstance(getattr(importlib.import_module(module), cls), type), name


def test_checkout_helper_without_dependencies_stays_silent():
    """bin/kubectl_complete-safety under a python3 lacking click: ':4' only, never a traceback."""
    proc = subprocess.run([sys.executable, "-I", "-S", os.path.join(ROOT, "bin", "kubectl_complete-safety"), "ex"],
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, ":4\n", "")


def test_fish_descriptions_stay_whole(monkeypatch, capsys):
    """A summary with commas reaches fish whole: the script splits type from value at the first comma only."""
    from kubectl_safety.cli.main import main

    monkeypatch.setenv("_KUBECTL_SAFETY_COMPLETE", "fish_complete")
    monkeypatch.setenv("COMP_WORDS", "kubectl-safety ")
    monkeypatch.setenv("COMP_CWORD", "")
    with pytest.raises(SystemExit):
        main([])
    lines = capsys.readouterr().out.splitlines()
    assert "plain,delete\tDelete pods gracefully, or force-delete them only with --confirm." in lines
    script = open(os.path.join(ROOT, "completions", "kubectl-safety.fish")).read()
    assert '(string split -m 1 "," $completion)' in script


def test_context_names_complete_from_a_kubeconfig_read_bounded(tmp_path):
    """An alias bomb as kubeconfig completes nothing (before: yaml.safe_load expanded it whole)."""
    from kubectl_safety.cli.completers import _kubeconfig_contexts

    bomb = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    bomb += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    path = tmp_path / "config"
    path.write_text("\n".join(bomb) + "\ncontexts: [{name: c, context: {cluster: x}}]\n")
    assert _kubeconfig_contexts(str(path)) == []
    path.write_text("contexts: [{name: c1, context: {cluster: x}}, {name: c2, context: {cluster: x}}]\n")
    assert _kubeconfig_contexts(str(path)) == ["c1", "c2"]
