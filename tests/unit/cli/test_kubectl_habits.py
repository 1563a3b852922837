"""kubectl habits: each flag spelled as kubectl users spell it, run against the CLI (and, where practical, kubectl).

The table rows are ``Habit(id, args, code, stdout, stderr)``: run ``kubectl safety ARGS`` on the demo
dump (offline), expect the exit code and regular expressions on stdout/stderr. The comparisons with the real
kubectl binary are in tests/differential/test_kubectl_output.py.
"""

import io
import re
from dataclasses import dataclass

import pytest

from kubectl_safety.cli import progress, render
from kubectl_safety.cluster.kubeconfig import OverrideError, resolve
from kubectl_safety.model.duration import DurationError, human_duration, parse_duration
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

CLOCK = ["--snapshot", DEMO, "--as-of", DEMO_NOW]


@dataclass
class Habit:
    id: str
    args: list
    code: int = 0
    stdout: str = ""
    stderr: str = ""


HABITS = [
    # -- pflag spellings: short flags with '=', attached values, booleans with values ---------------------
    Habit("rebalance-n-equals-targets-shop", ["rebalance", "-n=shop", "--dry-run", "-o", "jsonpath={.scope.namespace}"],
          0, r"^shop$"),
    Habit("rebalance-n-equals-finds-workloads", ["rebalance", "-n=shop", "--dry-run", "-o",
                                                 "jsonpath={.constraints[?(@.violated==true)].workload}"], 0,
          r"^Deployment/shop/web$"),
    Habit("o-equals-json", ["explain", "priorities", "-o=json"], 0, r'"kind": "PriorityAudit"'),
    Habit("o-attached-json", ["explain", "priorities", "-ojson"], 0, r'"kind": "PriorityAudit"'),
    Habit("namespace-equals", ["explain", "pod", "web-5d8f7c-0x0", "--namespace=shop", "-o", "name"], 0, r"^pod/web-5d8f7c-0x0$"),
    Habit("n-attached", ["explain", "pod", "web-5d8f7c-0x0", "-nshop", "-o", "name"], 0, r"^pod/web-5d8f7c-0x0$"),
    Habit("global-flags-before-the-command", ["-n=shop", "-o=name", "explain", "pod", "web-5d8f7c-0x0"], 0,
          r"^pod/web-5d8f7c-0x0$"),
    Habit("bool-flag-equals-true", ["drain", "node-a1", "--dry-run", "--ignore-daemonsets=true", "-o=name"], 0,
          r"pod/web-5d8f7c-0x0"),
    Habit("bool-flag-equals-false", ["drain", "node-a1", "--dry-run", "--ignore-daemonsets=false", "-o",
                                     "jsonpath={.safe}"], 3, r"^false$"),
    Habit("bool-flag-bad-value", ["drain", "node-a1", "--dry-run", "--force=maybe"], 2, "",
          r'invalid argument "maybe" for "--force" flag'),
    Habit("dry-run-equals-client", ["drain", "node-a1", "--dry-run=client", "--ignore-daemonsets", "-o", "name"], 0,
          r"pod/web"),
    # kubectl's GetDryRunStrategy: a Go boolean is client/none with a deprecation warning; =VALUE is never a name
    Habit("dry-run-equals-true-is-client", ["drain", "node-a1", "--dry-run=true", "--ignore-daemonsets", "-o", "name"],
          0, r"pod/web", r"^warning: --dry-run=true is deprecated \(boolean value\) and can be replaced with "
                         r"--dry-run=client\.\n$"),
    Habit("dry-run-equals-1-is-client", ["rebalance", "-n", "shop", "--dry-run=1", "-o", "jsonpath={.kind}"], 0,
          r"^RebalancePlan$", r"--dry-run=1 is deprecated \(boolean value\) and can be replaced with --dry-run=client"),
    Habit("dry-run-equals-true-delete", ["delete", "pod", "db-0", "-n", "shop", "--dry-run=True", "-o", "name"], 0,
          r"^pod/db-0$", r"--dry-run=True is deprecated"),
    Habit("dry-run-equals-true-rollout", ["rollout", "node-a1", "--dry-run=true", "--ignore-daemonsets", "-o",
                                          "jsonpath={.kind}"], 0, r"^RolloutPlan$", r"--dry-run=true is deprecated"),
    Habit("dry-run-equals-false-is-none", ["drain", "node-a1", "--dry-run=false"], 2, "",
          r"^warning: --dry-run=false is deprecated \(boolean value\) and can be replaced with --dry-run=none\.\n"
          r"error: a drain needs a live cluster"),
    Habit("dry-run-equals-word-is-no-node-name", ["drain", "node-a1", "--dry-run=node-b1"], 2, "",
          r'^error: invalid dry-run value \(node-b1\): must be "none", "server", or "client"\n$'),
    Habit("dry-run-equals-empty", ["delete", "pod", "db-0", "-n", "shop", "--dry-run="], 2, "",
          r"invalid dry-run value \(\)"),
    Habit("dry-run-space-word-is-still-a-node", ["drain", "--dry-run", "node-a1", "--ignore-daemonsets", "-o", "name"],
          0, r"pod/web"),
    # -- help ------------------------------------------------------------------------------------------
    Habit("bare-kubectl-safety-is-help", [], 0, r"^Usage: kubectl safety \[OPTIONS\] COMMAND"),
    Habit("bare-explain-is-help", ["explain"], 0, r"^Usage: kubectl safety explain"),
    Habit("bare-delete-is-help", ["delete"], 0, r"^Usage: kubectl safety delete"),
    Habit("help-command", ["help"], 0, r"Commands:"),
    Habit("help-subcommand", ["help", "explain", "pod"], 0, r"^Usage: kubectl safety explain pod"),
    Habit("help-unknown", ["help", "nope"], 2, "", r"unknown command 'nope'"),
    # -- TYPE/NAME ------------------------------------------------------------------------------------
    Habit("explain-pod-slash-name", ["explain", "pod/web-5d8f7c-0x0", "-n", "shop", "-o", "name"], 0, r"^pod/web-5d8f7c-0x0$"),
    Habit("explain-pods-plural", ["explain", "pods", "web-5d8f7c-0x0", "-n", "shop", "-o", "name"], 0, r"^pod/web-5d8f7c-0x0$"),
    Habit("explain-node-slash-name", ["explain", "node/node-a1", "-o", "name"], 0, r"^node/node-a1$"),
    Habit("explain-node-no-alias", ["explain", "no", "node-a1", "-o", "name"], 0, r"^node/node-a1$"),
    Habit("drain-node-slash-name", ["drain", "node/node-a1", "--dry-run", "--ignore-daemonsets", "-o", "name"], 0, r"pod/web"),
    Habit("drain-wrong-type", ["drain", "pod/x", "--dry-run"], 2, "", r"'drain' takes node names: 'pod/x' is not a node"),
    Habit("delete-pod-slash-name", ["delete", "pod/db-0", "-n", "shop", "--dry-run", "-o", "name"], 0, r"^pod/db-0$"),
    Habit("preemption-pod-slash-name", ["preemption", "pod/report-xyz", "-n", "jobs", "-o", "jsonpath={.pod.name}"], 0,
          r"^report-xyz$"),
    Habit("rebalance-deployment-apps", ["rebalance", "deployment.apps/web", "-n", "shop", "--dry-run", "-o",
                                        "jsonpath={.scope.workload}"], 0, r"^Deployment/web$"),
    # -- -A: where it makes sense, else a clear error ------------------------------------------------------
    Habit("rebalance-all-namespaces", ["rebalance", "-A", "--dry-run", "-o", "jsonpath={.workloads[*].namespace}"], 0,
          r"^(shop |jobs )+"),
    Habit("delete-selector-all-namespaces", ["delete", "pod", "-l", "app=web", "-A", "--dry-run", "-o", "name"], 0,
          r"pod/web-5d8f7c-0x0"),
    Habit("explain-priorities-all-namespaces", ["explain", "priorities", "-A", "-o", "name"], 0, r"priorityclass"),
    Habit("drain-all-namespaces-is-an-error", ["drain", "node-a1", "-A", "--dry-run"], 2, "",
          r"-A/--all-namespaces is not supported by 'drain': drain works on nodes"),
    Habit("explain-node-all-namespaces-is-an-error", ["explain", "node", "node-a1", "-A"], 2, "", r"a node has no namespace"),
    Habit("preemption-all-namespaces-is-an-error", ["preemption", "report-xyz", "-A"], 2, "", r"not supported by 'preemption'"),
    Habit("version-all-namespaces-is-an-error", ["version", "-A"], 2, "", r"not supported by 'version'"),
    Habit("delete-name-all-namespaces-is-an-error", ["delete", "pod", "db-0", "-A", "--dry-run"], 2, "",
          r"cannot be retrieved by name across all namespaces"),
    # -- Go durations ---------------------------------------------------------------------------------
    Habit("drain-timeout-go-duration", ["drain", "node-a1", "--dry-run", "--ignore-daemonsets", "--timeout=1h30m",
                                        "-o", "name"], 0, r"pod/web"),
    Habit("rebalance-timeout-go-duration", ["rebalance", "-n", "shop", "--dry-run", "--timeout", "5m30s", "-o",
                                            "jsonpath={.kind}"], 0, r"^RebalancePlan$"),
    Habit("delete-timeout-needs-a-unit", ["delete", "pod", "db-0", "-n", "shop", "--dry-run", "--timeout=90"], 2, "",
          r"invalid --timeout '90': missing unit"),
    Habit("request-timeout-checked-offline-too", ["explain", "priorities", "--request-timeout=5x"], 2, "",
          r"invalid --request-timeout '5x': not a duration"),
    Habit("request-timeout-bare-seconds", ["explain", "priorities", "--request-timeout=30", "-o", "name"], 0,
          r"priorityclass"),
    # kubectl's Duration flags reject a number without a unit (except 0); --request-timeout takes seconds
    *[Habit(f"unitless-{'-'.join(a for a in args if a.isalpha())}-{flag[2:]}-is-an-error", args + [flag, "10"], 2, "",
            rf"^error: invalid {flag} '10': missing unit: use a Go duration such as 30s")
      for args in (["drain", "node-a1", "--dry-run"], ["rollout", "node-a1", "--dry-run"], ["check"],
                   ["rebalance", "-n", "shop", "--dry-run"], ["delete", "pod", "db-0", "-n", "shop", "--dry-run"])
      for flag in ["--timeout"] + (["--exec-timeout", "--ready-timeout", "--gate-timeout"] if args[0] == "rollout" else [])],
    *[Habit(f"zero-{args[0]}-{flag[2:]}-needs-no-unit", args + [flag, "0", "-o", "jsonpath={.kind}"], code, rf"^{kind}$")
      for args, flag, code, kind in [
          (["drain", "node-a1", "--dry-run", "--ignore-daemonsets"], "--timeout", 0, "DrainPlan"),
          (["rollout", "node-a1", "--dry-run", "--ignore-daemonsets"], "--gate-timeout", 0, "RolloutPlan"),
          (["check"], "--timeout", 3, "ClusterCheck"),
          (["rebalance", "-n", "shop", "--dry-run"], "--timeout", 0, "RebalancePlan")]],
    Habit("request-timeout-fraction-without-unit", ["explain", "priorities", "--request-timeout=1.5"], 2, "",
          r"invalid --request-timeout '1.5': missing unit"),
    Habit("delete-timeout-milliseconds", ["delete", "pod", "db-0", "-n", "shop", "--dry-run", "--timeout=500ms",
                                          "-o", "name"], 0, r"^pod/db-0$"),
    # -- output formats on every JSON kind --------------------------------------------------------------
    *[Habit(f"jsonpath-kind-{kind}", args + ["-o", "jsonpath={.kind}"], code, rf"^{kind}$") for kind, args, code in [
        ("PodExplanation", ["explain", "pod", "web-5d8f7c-0x0", "-n", "shop"], 0),
        ("NodeExplanation", ["explain", "node", "node-a1"], 0),
        ("PriorityAudit", ["explain", "priorities"], 0),
        ("DrainPlan", ["drain", "node-a1", "--dry-run", "--ignore-daemonsets"], 0),
        ("PreemptionPreview", ["preemption", "report-xyz", "-n", "jobs"], 0),
        ("ForceDeleteAssessment", ["delete", "pod", "db-0", "-n", "shop", "--dry-run"], 0),
        ("RebalancePlan", ["rebalance", "-n", "shop", "--dry-run"], 0),
        ("Version", ["version"], 0),
        ("List", ["preemption", "-f", "examples/demo-workloads.yaml"], 3)]],
    Habit("preemption-stream-previews-every-workload", ["preemption", "-f", "examples/demo-workloads.yaml", "-o",
                                                        "jsonpath={range .items[*]}{.pod.name}={.outcome} {end}"], 3,
          r"^web-preview=fits api-preview=fits .*report-builder-preview=not-eligible postgres-0=fits $",
          r"ignored 14 object\(s\) that create no pods: 1 DaemonSet, 2 Namespace, 7 Node, 3 PodDisruptionBudget, 1 Service"),
    Habit("preemption-stream-replicas-needs-one-workload", ["preemption", "-f", "examples/demo-workloads.yaml",
                                                            "--replicas", "2"], 2, "",
          r"--replicas applies to one workload: examples/demo-workloads.yaml has 5"),
    Habit("jsonpath-range", ["explain", "priorities", "-o",
                             'jsonpath={range .classes[*]}{.name}={.value}{"\\n"}{end}'], 0, r"(?m)^business-critical=500000$"),
    Habit("jsonpath-filter", ["drain", "node-a1", "--dry-run", "--ignore-daemonsets", "-o",
                              'jsonpath={.pods[?(@.action=="evict")].name}'], 0, r"web-5d8f7c-0x0"),
    Habit("jsonpath-as-json", ["explain", "node", "node-a1", "-o", "jsonpath-as-json={.node.name}"], 0, r'^\[\n    "node-a1"\n\]$'),
    Habit("jsonpath-bad-template", ["explain", "priorities", "-o", "jsonpath={range .classes[*]}"], 2, "",
          r"error parsing jsonpath template .*without \{end\}"),
    Habit("go-template", ["explain", "priorities", "-o",
                          "go-template={{range .classes}}{{if eq .name \"business-critical\"}}{{.value}}{{end}}{{end}}"],
          0, r"^500000$"),
    Habit("custom-columns", ["explain", "priorities", "-o", "custom-columns=NAME:.name,VALUE:.value,X:.nope"], 0,
          r"(?m)^NAME +VALUE +X\nsystem-node-critical +2000001000 +<none>$"),
    Habit("output-name-drain-lists-evicted-pods", ["drain", "node-a1", "--dry-run", "--ignore-daemonsets", "-o", "name"], 0,
          r"^pod/api-7c9b4-0q0\npod/web-5d8f7c-0x0\n$"),
    Habit("output-name-version-is-an-error", ["version", "-o", "name"], 2, "", r"-o name is not supported for Version"),
    Habit("output-unknown", ["version", "-o", "xml"], 2, "", r"unable to match a printer suitable for the output format 'xml'"),
    Habit("output-template-missing", ["version", "-o", "jsonpath"], 2, "", r"jsonpath format specified but no template"),
    # -- delete as kubectl ---------------------------------------------------------------------------
    Habit("delete-grace-0-without-force-is-1s", ["delete", "pod", "db-0", "-n", "shop", "--grace-period=0", "--dry-run",
                                                 "-o", "jsonpath={.force} {.pods[0].gracePeriodSeconds}"], 0, r"^false 1$"),
    Habit("delete-now-is-grace-1", ["delete", "pod", "db-0", "-n", "shop", "--now", "--dry-run",
                                    "-o", "jsonpath={.force} {.pods[0].gracePeriodSeconds}"], 0, r"^false 1$"),
    Habit("delete-now-then-snapshot-stays-offline", ["delete", "pod", "db-0", "-n", "shop", "--now", "--snapshot", DEMO,
                                                     "--dry-run", "-o", "name"], 0, r"^pod/db-0$"),
    Habit("delete-now-with-grace-is-an-error", ["delete", "pod", "db-0", "-n", "shop", "--now", "--grace-period=5"], 2, "",
          r"--now and --grace-period cannot be specified together"),
    Habit("delete-force-alone-is-grace-0", ["delete", "pod", "db-0", "-n", "shop", "--force", "--dry-run", "-o",
                                            "jsonpath={.force} {.pods[0].gracePeriodSeconds}"], 3, r"^true 0$"),
    Habit("delete-wait-false", ["delete", "pod", "db-0", "-n", "shop", "--wait=false", "--dry-run", "-o", "name"], 0,
          r"^pod/db-0$"),
    Habit("delete-dry-run-server-needs-live", ["delete", "pod", "db-0", "-n", "shop", "--dry-run=server"], 2, "",
          r"needs a live cluster"),
    Habit("delete-ignore-not-found", ["delete", "pod", "nope", "-n", "shop", "--ignore-not-found", "--dry-run"], 0,
          r"No pods found"),
    Habit("delete-not-found", ["delete", "pod", "nope", "-n", "shop", "--dry-run"], 1, "", r'pod "nope" not found'),
    Habit("delete-force-on-ready-node-says-so", ["delete", "pod", "db-0", "-n", "shop", "--force", "--confirm", "--dry-run"],
          0, "", r"pod/db-0: force is not needed: the node is Ready.*proceeding with the force delete because --confirm"),
    # -- the clock flag no longer collides ------------------------------------------------------------
    Habit("old-now-time-still-works-outside-delete", ["explain", "priorities", "--snapshot", DEMO, "--now", DEMO_NOW,
                                                      "-o", "jsonpath={.kind}"], 0, r"^PriorityAudit$"),
    Habit("old-now-time-before-the-command", ["--now", DEMO_NOW, "explain", "priorities", "--snapshot", DEMO,
                                              "-o", "jsonpath={.kind}"], 0, r"^PriorityAudit$"),
    Habit("delete-now-takes-no-time", ["delete", "pod", "db-0", "-n", "shop", "--now", DEMO_NOW, "--snapshot", DEMO,
                                       "--dry-run"], 1, "", r'pod "2026-11-22T09:00:00Z" not found'),
    # -- a global flag that would change nothing is refused, in every command ('kubectl safety options') -----
    *[Habit(f"connection-flag-{flag.lstrip('-')}-with-snapshot-is-an-error", args + [given], 2, "",
            rf"^error: {flag} cannot be used with --snapshot: the files are read instead of a cluster")
      for args in (["explain", "priorities"], ["drain", "node-a1", "--dry-run"])
      for given, flag in [("--context=prod", "--context"), ("--kubeconfig=/kc", "--kubeconfig"),
                          ("--cluster=c", "--cluster"), ("--user=u", "--user"), ("-s=https://k:6443", "-s/--server"),
                          ("--token=t", "--token"), ("--certificate-authority=/ca", "--certificate-authority"),
                          ("--client-certificate=/c", "--client-certificate"), ("--client-key=/k", "--client-key"),
                          ("--tls-server-name=k", "--tls-server-name"), ("--as=u", "--as"), ("--as-group=g", "--as-group"),
                          ("--as-uid=1", "--as-uid"), ("--insecure-skip-tls-verify", "--insecure-skip-tls-verify")]],
    Habit("check-context-with-snapshot-is-an-error", ["check", "--context", "prod"], 2, "",
          r"^error: --context cannot be used with --snapshot"),
    Habit("check-all-contexts-with-snapshot-is-an-error", ["check", "--all-contexts"], 2, "",
          r"^error: --all-contexts cannot be used with --snapshot"),
    Habit("context-before-the-command-with-snapshot-is-an-error", ["--context=prod", "rollout", "node-a1", "--dry-run"],
          2, "", r"^error: --context cannot be used with --snapshot"),
    *[Habit(f"namespace-on-{'-'.join(args[:2])}-is-an-error", args + ["-n", "shop"], 2, "",
            rf"^error: -n/--namespace is not supported by '{path}': {why}")
      for args, path, why in [(["check"], "check", r"it checks every namespace"),
                              (["explain", "priorities"], "explain priorities", "it audits every namespace"),
                              (["explain", "node", "node-a1"], "explain node", "a node has no namespace"),
                              (["drain", "node-a1", "--dry-run"], "drain", "drain works on nodes"),
                              (["rollout", "node-a1", "--dry-run"], "rollout", "rollout works on nodes"),
                              (["version"], "version", "it reads no namespaced objects")]],
    Habit("verbosity-and-request-timeout-with-snapshot", ["explain", "priorities", "-v=6", "--request-timeout=5s",
                                                          "-o", "jsonpath={.kind}"], 0, r"^PriorityAudit$"),
]


def test_connection_flags_accepted_where_a_cluster_is_read():
    code, out, err = run_cli(["options", "--cluster=c", "--user=u", "-s=https://k:6443", "--token=t",
                              "--certificate-authority=/ca", "--client-certificate=/c", "--client-key=/k",
                              "--tls-server-name=k", "--insecure-skip-tls-verify", "--as=u", "--as-group=g",
                              "--as-uid=1", "-v=6", "--context=c", "--kubeconfig=/kc"])
    assert (code, err) == (0, ""), err
    assert "Flags that would change nothing:" in out


@pytest.mark.parametrize("habit", HABITS, ids=[h.id for h in HABITS])
def test_kubectl_habit(habit):
    plain = not habit.args or habit.args[0] == "help" or habit.args in (["explain"], ["delete"]) or "--snapshot" in habit.args
    code, out, err = run_cli(habit.args if plain else habit.args + CLOCK)
    assert code == habit.code, (out, err)
    assert re.search(habit.stdout, out), out
    assert re.search(habit.stderr, err), err


# -- the pieces behind the table -------------------------------------------------------------------

@pytest.mark.parametrize("text, seconds", [("1h30m", 5400), ("5m30s", 330), ("500ms", 0.5), ("0", 0), ("1.5h", 5400),
                                           ("-2s", -2), ("2h45m10.5s", 9910.5), ("300us", 0.0003)])
def test_go_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["90", "1x", "", "1h 2m", "m", "1.2.3s"])
def test_not_a_go_duration(text):
    with pytest.raises(DurationError):
        parse_duration(text)


@pytest.mark.parametrize("seconds, text", [(45, "45s"), (119, "119s"), (330, "5m30s"), (600, "10m"), (5400, "90m"),
                                           (19800, "5h30m"), (129600, "36h"), (273600, "3d4h"), (1728000, "20d")])
def test_durations_humanized_as_kubectl(seconds, text):
    assert human_duration(seconds) == text


def write_kubeconfig(tmp_path):
    path = tmp_path / "kc.yaml"
    path.write_text("""
apiVersion: v1
kind: Config
current-context: dev
contexts:
- {name: dev, context: {cluster: dev, user: dev, namespace: team}}
clusters:
- {name: dev, cluster: {server: "https://dev:6443", insecure-skip-tls-verify: true}}
- {name: prod, cluster: {server: "https://prod:6443", insecure-skip-tls-verify: true}}
users:
- {name: dev, user: {token: dev-token}}
- {name: ops, user: {token: ops-token}}
""")
    return str(path)


@pytest.mark.parametrize("overrides, host, authorization", [
    ({}, "https://dev:6443", "Bearer dev-token"),
    ({"cluster": "prod"}, "https://prod:6443", "Bearer dev-token"),
    ({"user": "ops"}, "https://dev:6443", "Bearer ops-token"),
    ({"server": "https://other:443"}, "https://other:443", "Bearer dev-token"),
    ({"token": "flag-token", "user": "ops"}, "https://dev:6443", "Bearer flag-token"),
], ids=["context", "cluster-flag", "user-flag", "server-flag", "token-flag-wins"])
def test_connection_flags_override_the_context(tmp_path, monkeypatch, overrides, host, authorization):
    for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(v, raising=False)
    ep = resolve(write_kubeconfig(tmp_path), None, overrides)
    assert (ep.host, ep.authorization, ep.namespace) == (host, authorization, "team")


def test_connection_flag_naming_an_unknown_cluster_is_one_clear_error(tmp_path):
    with pytest.raises(OverrideError, match=r'cluster "nope" \(--cluster\) is not defined in the kubeconfig'):
        resolve(write_kubeconfig(tmp_path), None, {"cluster": "nope"})


def test_server_and_token_flags_work_without_a_kubeconfig(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none.yaml"))
    ep = resolve(None, None, {"server": "https://k:6443", "token": "t", "insecure_skip_tls_verify": True})
    assert (ep.host, ep.authorization, ep.verify) == ("https://k:6443", "Bearer t", False)


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("tty, no_color, coloured", [(True, None, True), (True, "1", False), (False, None, False)],
                         ids=["terminal", "terminal-no-color", "pipe"])
def test_alarm_cells_are_red_only_on_a_terminal_without_no_color(monkeypatch, tty, no_color, coloured):
    from kubectl_safety.printable import SafeStream

    stream = Terminal() if tty else io.StringIO()
    monkeypatch.delenv("TERM", raising=False)
    if no_color:
        monkeypatch.setenv("NO_COLOR", no_color)
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    SafeStream(stream).write(render.table([["blocked", "web"], ["evict", "api"]], ["action", "pod"]))
    out = stream.getvalue()
    assert ("\033[31mblocked\033[0m" in out) is coloured
    assert re.sub(r"\033\[\d+m", "", out) == "ACTION    POD\nblocked   web\nevict     api\n"


def test_live_status_line_is_ended_before_the_report(monkeypatch):
    err = Terminal()
    p = progress.Progress(err)
    p.status("waiting: budget", 70)
    p.status("waiting: budget", 68)
    progress.end_live_line(err)
    p.line(progress.object_line("node", "n1", "drained"))
    assert err.getvalue() == "\r\033[Kwaiting: budget, 70s left\r\033[Kwaiting: budget, 68s left\nnode/n1 drained\n"


def test_status_without_a_terminal_prints_only_changes():
    err = io.StringIO()
    p = progress.Progress(err)
    for left in (70, 68, 66):
        p.status("waiting: budget", left)
    p.status("waiting: other", 60)
    assert err.getvalue() == "waiting: budget, 70s left\nwaiting: other, 60s left\n"


@pytest.mark.parametrize("event, line", [
    ({"event": "cordon", "pod": "n1", "message": "cordoned"}, "node/n1 cordoned"),
    ({"event": "cordon", "pod": "n1", "message": "already cordoned"}, "node/n1 already cordoned"),
    ({"event": "evicted", "pod": "shop/web-1"}, "pod/web-1 evicted"),
    ({"event": "drained", "pod": "n1"}, "node/n1 drained"),
    ({"event": "gone", "pod": "shop/web-1"}, "pod/web-1 already gone"),
], ids=["cordoned", "already-cordoned", "evicted", "drained", "gone"])
def test_drain_progress_lines_read_as_kubectl(event, line):
    from kubectl_safety.cli.drain_progress import event_line as _event_line

    assert _event_line(event) == line


@pytest.mark.parametrize("event, line", [
    ({"event": "done", "pod": "shop/web-1"}, "pod/web-1 evicted\n"),
    ({"event": "gone", "pod": "shop/web-1"}, "pod/web-1 already gone\n"),
    ({"event": "evicting", "pod": "shop/web-1"}, ""),
    ({"event": "retrying", "pod": "shop/web-1", "result": "pdb-blocked", "message": "budget", "retryIn": 5,
      "timeLeft": 90}, "cannot evict pod/web-1 yet (pdb-blocked): budget (retry in 5s), 90s left\n"),
], ids=["evicted", "gone", "evicting-is-silent", "retry-with-countdown"])
def test_rebalance_progress_lines_read_as_kubectl(monkeypatch, event, line):
    from kubectl_safety.cli.views import rebalance

    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    progress.SHARED.last_status = None
    rebalance.progress(event)
    assert err.getvalue() == line


class RecordingTransport:
    host = "https://k:6443"

    def __init__(self):
        self.headers = None

    def auth_headers(self):
        return {}

    def request(self, method, url, headers, body, timeout):
        self.headers = dict(headers)
        return 200, b'{"gitVersion": "v1.36.3"}'


@pytest.mark.parametrize("verbosity, logged", [(0, False), (5, False), (6, True)])
def test_v6_logs_each_request_and_as_uid_impersonates(monkeypatch, verbosity, logged):
    from kubectl_safety.cluster.live import Connection

    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    transport = RecordingTransport()
    conn = Connection(as_user="alice", as_uid="1234", verbosity=verbosity, _transport=transport)
    assert conn.server_version() == "v1.36.3"
    assert transport.headers["Impersonate-Uid"] == "1234" and transport.headers["Impersonate-User"] == "alice"
    assert bool(re.fullmatch(r"GET https://k:6443/version 200 in \d+ milliseconds\n", err.getvalue())) is logged


NO_CONTAINERS = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: jobs}\nspec: {containers: []}\n"


@pytest.mark.parametrize("mode, code, stderr", [
    ("strict", 1, r"checking only apiVersion, kind, metadata.name and containers \(--validate=strict\)[^\n]*\n"
                  r"error: -: invalid Pod: containers must be a non-empty list"),
    ("true", 1, r"error: -: invalid Pod"),
    ("warn", 0, r"warning: -: invalid Pod: .*\(--validate=warn: previewed anyway\)"),
    ("ignore", 0, r"^$"),
    ("false", 0, r"^$"),
], ids=["strict", "true-is-strict", "warn", "ignore", "false-is-ignore"])
def test_validate_without_kubernetes_validate_falls_back(monkeypatch, mode, code, stderr):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "kubernetes_validate" else find_spec(name, *a))
    got, out, err = run_cli(["preemption", "-f", "-", f"--validate={mode}", *CLOCK], input=NO_CONTAINERS)
    assert got == code, err
    assert re.search(stderr, err), err
