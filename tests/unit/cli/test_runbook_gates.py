"""What a maintenance runbook relies on: pool-scoped gates, exit codes, plans that name their cause."""

import json

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW]
RUNBOOK = ["--ignore-daemonsets", "--delete-emptydir-data"]  # check plans with drain's defaults otherwise
A1 = ["-l", "kubernetes.io/hostname=node-a1"]


def check(*flags):
    code, out, err = run_cli(["check", "-o", "json", *RUNBOOK, *flags] + OFFLINE)
    return code, json.loads(out), err


# -- item 1: check -l POOL is a pool gate -----------------------------------------------------------
def test_check_l_pool_gates_on_what_the_pool_touches():
    code, report, err = check(*A1)
    assert code == 0, err
    assert report["summary"]["scope"] == "pool" and report["summary"]["ready"]
    other = {f["code"]: f["reason"] for f in report["otherFindings"]}
    assert other["PDB_NEVER_ALLOWS"] == "outside"  # shop/db has no pod on node-a1
    assert "PDB_NEVER_ALLOWS" not in {f["code"] for f in report["findings"]}
    touched = {(o["kind"], o["name"]) for f in report["findings"] for o in f["objects"]}
    assert ("Deployment", "web") in touched  # web runs on node-a1: its finding stays in the gate


def test_check_scope_cluster_gates_on_every_finding():
    code, report, _ = check(*A1, "--scope", "cluster")
    assert code == 3 and report["summary"]["scope"] == "cluster" and report["otherFindings"] == []
    assert "PDB_NEVER_ALLOWS" in {f["code"] for f in report["findings"]}


def test_check_text_reports_the_rest_apart():
    code, out, _ = run_cli(["check", *RUNBOOK, *A1] + OFFLINE)
    assert code == 0
    assert "Elsewhere in the cluster (not gating; --scope cluster gates on them):" in out
    assert out.index("Elsewhere") < out.index("READY")


def test_check_fail_on_none_gates_on_nodes_only():
    code, report, _ = check("-l", "topology.kubernetes.io/zone=eu-west-1a", "--fail-on", "none")
    assert report["summary"]["failOn"] == "none" and report["summary"]["failing"] == 0
    assert code == (0 if report["summary"]["notDrainable"] == 0 else 3)
    code, report, _ = check(*A1, "--scope", "cluster", "--fail-on", "none")
    assert code == 0 and report["findings"]


def test_check_ignore_finding_keeps_a_code_from_gating():
    code, report, _ = check(*A1, "--scope", "cluster", "--ignore-finding", "PDB_NEVER_ALLOWS",
                            "--ignore-finding", "BOTTOM_UP_ROLLOUT_RISK,NODE_NOT_READY")
    assert code == 0, report["findings"]
    assert {f["code"] for f in report["otherFindings"] if f["reason"] == "ignored"} >= {"PDB_NEVER_ALLOWS"}


def test_check_ignore_finding_refuses_what_is_not_a_code():
    code, _, err = run_cli(["check", "--ignore-finding", "not a code"] + OFFLINE)
    assert code == 2 and err.startswith("error: --ignore-finding")


# -- item 3: blocked nodes go last; --skip-blocked ---------------------------------------------------
DEMO_POOL = ["node-a1", "node-a2", "node-b1", "node-b2", "node-c1", "node-c2"]
ROLLOUT = ["rollout", *DEMO_POOL, "--dry-run", "--no-precordon", "--ignore-daemonsets", "-o", "json"] + OFFLINE


def test_rollout_puts_blocked_nodes_last():
    code, out, _ = run_cli(ROLLOUT)
    plan = json.loads(out)
    assert code == 3
    verdicts = [b["safe"] for b in plan["batches"]]
    assert verdicts[:2] == [True, True] and not any(verdicts[2:]), verdicts  # what can go goes first
    assert plan["stopsAtBatch"] == 3
    assert sorted(plan["leftNodes"]) == sorted(n for b in plan["batches"][2:] for n in b["nodes"])


def test_rollout_skip_blocked_plan_names_the_nodes_left():
    code, out, _ = run_cli(ROLLOUT + ["--skip-blocked"])
    plan = json.loads(out)
    assert code == 3 and plan["options"]["skipBlocked"]
    assert set(plan["leftNodes"]) == {n for b in plan["batches"] if not b["safe"] for n in b["nodes"]}
    code, text, _ = run_cli([a for a in ROLLOUT + ["--skip-blocked"] if a not in ("-o", "json")])
    assert "Left unmaintained: 4 node(s): " in text and "would be left (--skip-blocked); exit 3" in text


def test_rollout_that_blocks_at_the_first_batch_says_which_nodes_would_be_left():
    code, out, _ = run_cli([a for a in ROLLOUT if a != "--no-precordon"])
    plan = json.loads(out)
    stop = plan["stopsAtBatch"]
    assert code == 3 and plan["leftNodes"] == [n for b in plan["batches"][stop - 1:] for n in b["nodes"]]


# -- item 2: rollout verdicts name their cause; repeated risks grouped; no list cut silently ----------
def _plan(*objects, **options):
    from kubectl_safety.analysis.drain import DrainOptions
    from kubectl_safety.analysis.rollout_plan import RolloutOptions, plan_rollout
    from tests.builders import NOW, snapshot

    from kubectl_safety.cli.published import published

    names = [o["metadata"]["name"] for o in objects if o["kind"] == "Node" and "pool" in o["metadata"]["labels"]]
    return published(plan_rollout(snapshot(*objects), names, RolloutOptions(drain=DrainOptions(), **options), NOW))


def _pool(count, zones="abc"):
    from tests.builders import make_node, make_pod

    nodes = [make_node(f"{z}{i}", zone=f"zone-{z}", cpu="2", labels={"pool": "x"}) for z in zones
             for i in range(1, count + 1)]
    pods = [make_pod(f"w-{n['metadata']['name']}", node=n["metadata"]["name"], labels={"app": "web"}, cpu="100m")
            for n in nodes]
    return nodes + pods


def test_rollout_names_pre_cordoning_as_the_cause_of_replacement_unplaceable():
    from kubectl_safety.cli.views.rollout import render_plan

    plan = _plan(*_pool(2))  # no node outside the pool: pre-cordoned, the first batch's pods fit nowhere
    assert not plan["safe"] and plan["stopsAtBatch"] == 1
    cause, = plan["causes"]
    assert cause["code"] == "PRECORDON" and cause["batch"] == 1 and cause["safeWithout"]
    assert any("--no-precordon" in a for a in cause["alternatives"]) and "moves once" in cause["buys"]
    text = render_plan(plan)
    assert "Cause: pre-cordoning the pool causes REPLACEMENT_UNPLACEABLE at batch 1" in text
    assert "the cause and its alternatives are above" in text
    assert _plan(*_pool(2), precordon=False)["causes"] == []


def test_rollout_groups_repeated_risks_by_workload():
    code, out, _ = run_cli(["rollout", "-l", "topology.kubernetes.io/zone=eu-west-1a", "--no-precordon",
                            "--dry-run"] + OFFLINE)
    assert code == 3
    risks = out.split("\nRisks")[1]
    daemonset = [line for line in risks.splitlines() if "cannot delete DaemonSet-managed Pods" in line]
    assert len(daemonset) == 1 and "2 batches (1-2)" in daemonset[0] and "2 times" in daemonset[0], risks
    wide = run_cli(["rollout", "-l", "topology.kubernetes.io/zone=eu-west-1a", "--no-precordon", "--dry-run",
                    "-o", "wide"] + OFFLINE)[1]
    assert "POD_NOT_EVICTABLE: batch 1: cannot delete DaemonSet-managed Pods" in wide
    assert "POD_NOT_EVICTABLE: batch 2: cannot delete DaemonSet-managed Pods" in wide


def test_rollout_per_node_breakdown_says_how_many_nodes_it_leaves_out():
    from kubectl_safety.cli.views.rollout import render_plan

    plan = _plan(*_pool(9))  # 27 nodes: the unplaceable replacement's reasons list 20
    risk = next(r for r in plan["risks"] if r["code"] == "REPLACEMENT_UNPLACEABLE")
    assert len(risk["nodes"]) == 20 and risk["nodesNotListed"] == 7  # 27 nodes, the drained one too
    assert "and 22 more node(s) (-o wide, -o json)" in render_plan(plan)  # 5 shown
    assert "and 7 more node(s)" in render_plan(plan, wide=True)


# -- item 9: one word, one code, one way of printing a duration ---------------------------------------
def test_severity_is_error_in_explain_and_check():
    explain = json.loads(run_cli(["explain", "pod", "db-0", "-n", "shop", "-o", "json"] + OFFLINE)[1])
    report = check("--scope", "cluster")[1]
    both = {f["severity"] for f in explain["findings"]} | {f["severity"] for f in report["findings"]}
    assert "critical" not in both and "error" in both
    priorities = json.loads(run_cli(["explain", "priorities", "-o", "json"] + OFFLINE)[1])
    assert {f["severity"] for f in priorities["findings"]} <= {"error", "warning", "info"}


def test_an_unknown_node_is_node_unreachable_in_explain_and_check():
    pod = json.loads(run_cli(["explain", "pod", "legacy-0", "-n", "shop", "-o", "json"] + OFFLINE)[1])
    node = json.loads(run_cli(["explain", "node", "node-d1", "-o", "json"] + OFFLINE)[1])
    report = check()[1]
    codes = [{f["code"] for f in r["findings"]} for r in (pod, node, report)]
    assert all("NODE_UNREACHABLE" in c and "NODE_NOT_READY" not in c for c in codes), codes


def test_durations_print_one_way():
    from kubectl_safety.analysis.force_delete import _age
    from kubectl_safety.analysis.node_health import node_health
    from tests.builders import NOW, make_node
    from kubectl_safety.model.nodes import Node
    from datetime import timedelta

    node = Node(make_node("n1", ready="Unknown"))
    assert node_health(node, NOW + timedelta(seconds=1200))["message"] == "Unknown, last heartbeat 20m ago (Ready condition)"
    assert _age(3900) == "65m"  # kubectl's HumanDuration, as every other age


def test_a_stale_snapshot_is_not_called_heartbeating():
    code, out, _ = run_cli(["explain", "node", "node-a1", "--snapshot", DEMO, "--as-of", "2026-11-25T19:00:00Z"])
    assert "Ready, heartbeat 3d10h ago (Ready condition; a stale snapshot? --as-of TIME sets when the dump was taken)" in out
    code, out, _ = run_cli(["delete", "pod", "db-0", "-n", "shop", "--force", "--dry-run", "--snapshot", DEMO,
                            "--as-of", "2026-11-25T19:00:00Z"])
    assert "heartbeating" not in out and "its last heartbeat is 3d10h old (a stale snapshot?" in out
    code, out, _ = run_cli(["delete", "pod", "db-0", "-n", "shop", "--force", "--dry-run"] + OFFLINE)
    assert "is Ready and heartbeating" in out


def test_multi_context_check_errors_go_to_stderr(tmp_path):
    config = tmp_path / "config"
    config.write_text("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n"
                      "users:\n- name: u\n  user: {token: t}\ncontexts:\n"
                      "- name: east\n  context: {cluster: c, user: u}\n"
                      "- name: west\n  context: {cluster: c, user: u}\ncurrent-context: east\n")
    code, out, err = run_cli(["check", "--all-contexts", "--kubeconfig", str(config), "--request-timeout", "2s"])
    assert code == 1
    assert "error: context east: " in err and "error: context west: " in err
    assert "error:" not in out and "=== context east ===" in out


# -- item 10: help for a newcomer ---------------------------------------------------------------------
NOTE = "Use 'kubectl safety options' for a list of global command-line options"


@pytest.mark.parametrize("args", [["drain", "--help"], ["check", "--help"], ["explain", "pod", "--help"],
                                  ["help", "rollout"], ["--help"]])
def test_help_lists_global_flags_once_and_points_to_options(args):
    code, out, _ = run_cli(args)
    assert code == 0 and " ".join(out.split()).count(NOTE) == 1
    assert "--kubeconfig" not in out and "--certificate-authority" not in out and "--snapshot" in out


def test_drain_help_is_shorter_than_a_screen_of_global_flags():
    assert len(run_cli(["drain", "--help"])[1].splitlines()) <= 85


def test_options_lists_every_global_flag():
    code, out, _ = run_cli(["options"])
    assert code == 0
    for flag in ("--kubeconfig", "--context", "--token", "-n, --namespace", "-A, --all-namespaces", "--as-of",
                 "-v, --v LEVEL", "--request-timeout"):
        assert flag in out, flag
    assert "[x>=0]" not in out and "--now" not in out


def test_top_level_examples_include_check_and_rollout():
    out = run_cli(["--help"])[1]
    assert "kubectl safety check -l pool=blue" in out and "kubectl safety rollout -l pool=blue --dry-run" in out


def test_click_ranges_do_not_show_in_help():
    for args in (["--help"], ["options"], ["drain", "--help"]):
        assert "[x>=0]" not in run_cli(args)[1]


def test_now_is_deprecated_with_a_warning():
    code, _, err = run_cli(["check", "--snapshot", DEMO, "--now", DEMO_NOW])
    assert code == 3 and "warning: flag --now has been deprecated, use --as-of instead" in err
    assert "deprecated" not in run_cli(["check"] + OFFLINE)[2]


# -- item 8: a suggestion for a mistyped command ------------------------------------------------------
@pytest.mark.parametrize("args, hint", [
    (["dran", "node-a1"], 'unknown command "dran" for "kubectl safety"; did you mean drain?'),
    (["chek"], "did you mean check"),
    (["explain", "pdo", "x"], 'unknown command "pdo" for "kubectl safety explain"; did you mean pod?'),
])
def test_a_mistyped_command_gets_a_suggestion(args, hint):
    code, out, err = run_cli(args)
    assert code == 2 and out == "" and err.startswith("error: ") and hint in err and err.count("\n") == 1


# -- item 7: published schemas ------------------------------------------------------------------------
def test_schema_command_publishes_every_kind():
    code, out, _ = run_cli(["schema"])
    assert code == 0 and {"ClusterCheck", "RolloutPlan", "DrainPlan"} <= set(out.split())
    code, out, _ = run_cli(["schema", "clustercheck"])
    schema = json.loads(out)
    assert code == 0 and schema["title"] == "ClusterCheck"
    assert {"summary", "nodes", "findings", "otherFindings"} <= set(schema["required"])
    severity = schema["properties"]["findings"]["items"]["properties"]["severity"]
    assert severity["enum"][:3] == ["error", "warning", "info"]
    code, _, err = run_cli(["schema", "Nope"])
    assert code == 1 and "the kinds are: " in err


# -- item 7: scripting --------------------------------------------------------------------------------
def test_check_table_headers_are_the_json_names():
    out = run_cli(["check", *RUNBOOK] + OFFLINE)[1]
    header = out.split("What blocks a rolling upgrade of all nodes:\n")[1].splitlines()[0].split()
    report = check()[1]
    assert header == ["OBJECT", "BLOCKS", "CODES", "NODES"]
    assert {"object", "blocks", "codes", "nodes"} == set(report["blockers"][0])


@pytest.mark.parametrize("args, expected", [
    (["check", "-l", "topology.kubernetes.io/zone=eu-west-1a"], ["node/node-a1", "node/node-a2"]),
    (["rollout", "node-a1", "node-b1", "--dry-run", "--no-precordon", "--ignore-daemonsets"],
     ["node/node-a1", "node/node-b1"]),
])
def test_o_name_works_for_cluster_check_and_rollout_plan(args, expected):
    code, out, err = run_cli(args + ["-o", "name"] + OFFLINE)
    assert out.split() == expected, err


def test_custom_columns_over_a_report_iterate_its_items_and_show_none():
    code, out, _ = run_cli(["check", *RUNBOOK, "-o", "custom-columns=NODE:.name,DRAINABLE:.drainable,STATE:.stateMessage"]
                           + OFFLINE)
    rows = [line.split(None, 2) for line in out.splitlines()]
    assert rows[0] == ["NODE", "DRAINABLE", "STATE"] and len(rows) == 8  # a row per node, as kubectl over a List
    assert rows[1] == ["node-a1", "true", "<none>"]  # null is <none>, as kubectl prints a missing value


# -- item 8: kubectl habits ---------------------------------------------------------------------------
def test_delete_pod_field_selector_assesses_each_pod_of_a_dead_node():
    code, out, err = run_cli(["delete", "pod", "-A", "--field-selector", "spec.nodeName=node-d1", "--force",
                              "-o", "json"] + OFFLINE)
    report = json.loads(out)
    assert code == 3 and "needs --confirm" in err  # the same confirmation rules as by name
    assert sorted(p["name"] for p in report["pods"]) == ["legacy-0", "node-exporter-d1"]
    assert all(p["action"] == "refused" and p["risks"] for p in report["pods"])


@pytest.mark.parametrize("selector, expected", [
    ("spec.nodeName=node-a1,status.phase=Running", {"web-5d8f7c-0x0", "web-5d8f7c-2x2", "api-7c9b4-0q0"}),
    ("spec.nodeName=node-a1,status.phase!=Running", set()),
    ("spec.nodeName!=node-a1,metadata.name==db-0", {"db-0"}),
])
def test_delete_pod_field_selector_terms(selector, expected):
    code, out, _ = run_cli(["delete", "pod", "-n", "shop", "--field-selector", selector, "--dry-run", "-o", "name"]
                           + OFFLINE)
    assert code == 0 and {n.split("/")[1] for n in out.split()} == expected


def test_delete_pod_all_selects_every_pod_of_the_namespace():
    code, out, _ = run_cli(["delete", "pod", "--all", "-n", "shop", "--dry-run", "-o", "name"] + OFFLINE)
    assert code == 0 and len(out.split()) == 11 and "pod/db-0" in out.split()


@pytest.mark.parametrize("args, message", [
    (["web", "--all"], "give pod NAMEs or -l/--field-selector/--all, not both"),
    (["--all", "-l", "app=web"], "--all cannot be used with -l or --field-selector"),
    (["--field-selector", "spec.nodename=x"], 'field label not supported: "spec.nodename"'),
    (["--field-selector", "spec.nodeName"], "expected FIELD=VALUE"),
])
def test_delete_pod_selection_usage_errors(args, message):
    code, _, err = run_cli(["delete", "pod", "-n", "shop", "--dry-run"] + args + OFFLINE)
    assert code == 2 and message in err


@pytest.mark.parametrize("flag, code", [("--dry-run", 0), ("--dry-run=client", 0), ("--dry-run=server", 2)])
def test_rebalance_dry_run_takes_kubectl_modes(flag, code):
    got, _, err = run_cli(["rebalance", "deploy/web", "-n", "shop", flag] + OFFLINE)
    assert got == code, err
    if code == 2:  # the server's answer needs a live cluster
        assert "--dry-run=server needs a live cluster" in err
    assert run_cli(["rebalance", "--dry-run", "deploy/web", "-n", "shop"] + OFFLINE)[0] == 0  # bare, then WORKLOAD


# -- item 10: the README for a newcomer; a hint for a large YAML dump -----------------------------------
def _readme():
    from pathlib import Path

    return (Path(__file__).resolve().parents[3] / "README.md").read_text()


def test_readme_says_what_the_tool_is_first_and_keeps_the_new_machine_commands_near_the_top():
    lines = _readme().splitlines()
    assert lines[2].startswith("A kubectl plugin (`kubectl safety`)")
    block = lines.index("```sh")
    assert block < 15 and lines[block + 1].startswith("python3 -m venv .venv") and \
        lines[block + 2].startswith("scripts/test-all")
    contents = next(i for i, line in enumerate(lines) if line.startswith("Contents: "))
    assert contents < 20 and "docs/deviations.md" in " ".join(lines[contents:contents + 3])


def test_readme_dump_recipe_uses_json_and_lists_schemas_and_options():
    text = _readme()
    assert "-A -o json > cluster.json`" in text and "-A -o yaml > cluster.yaml`" not in text
    assert "`kubectl safety schema KIND`" in text and "`kubectl safety options`" in text


def test_a_large_yaml_dump_gets_a_one_line_hint(tmp_path):
    from kubectl_safety.cli.session import YAML_HINT_BYTES

    big = tmp_path / "cluster.yaml"
    demo = open(DEMO).read()
    big.write_text(demo + "\n#" + "#" * YAML_HINT_BYTES + "\n")
    err = run_cli(["explain", "priorities", "--snapshot", str(big)])[2]
    assert err.count("\n") == 1 and "is a large YAML dump" in err and "-o json > cluster.json" in err
    small = tmp_path / "small.yaml"
    small.write_text(demo)
    assert "YAML" not in run_cli(["explain", "priorities", "--snapshot", str(small)])[2]
    as_json = tmp_path / "cluster.json"
    import yaml

    docs = [d for d in yaml.safe_load_all(demo) if d]
    as_json.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}) + " " * YAML_HINT_BYTES)
    assert "YAML" not in run_cli(["explain", "priorities", "--snapshot", str(as_json)])[2]


@pytest.mark.parametrize("kind", ["PodExplanation", "NodeExplanation", "PriorityAudit", "PreemptionPreview",
                                  "ClusterCheck"])
def test_finding_severities_are_an_enum_in_the_schemas(kind):
    schema = json.loads(run_cli(["schema", kind])[1])
    findings = schema["properties"]["findings"]["items"]["properties"]["severity"]
    assert [s for s in findings["enum"] if s] == ["error", "warning", "info"]


def test_rollout_groups_workloads_that_share_a_cause():
    from kubectl_safety.cli.views.rollout import render_plan
    from tests.builders import make_node, make_pod

    nodes = [make_node(f"a{i}", zone="zone-a", cpu="2", labels={"pool": "x"}) for i in (1, 2)]
    pods = [make_pod(f"{app}-{n}", node=n, labels={"app": app}, cpu="100m", owner=("ReplicaSet", f"{app}-rs"))
            for app in ("web", "api") for n in ("a1", "a2")]
    plan = _plan(*nodes, *pods)  # pre-cordoned, nowhere to go: the same cause for both workloads
    text = render_plan(plan)
    lines = [line for line in text.splitlines() if line.startswith("  REPLACEMENT_UNPLACEABLE")]
    assert len(lines) == 1 and "2 workloads (" in lines[0], text


# -- item 4: exit codes that mean one thing each ------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["drain", "node-a1", "--ignore-daemonsets"],
    ["drain", "node-a1", "--dry-run=server"],
    ["rollout", "node-a1", "--ignore-daemonsets", "--yes"],
    ["delete", "pod", "db-0", "-n", "shop", "--dry-run=server"],
    ["delete", "pod", "db-0", "-n", "shop"],
    ["rebalance", "deploy/web", "-n", "shop", "--yes"],
], ids=["drain", "drain-server-dry-run", "rollout", "delete-server-dry-run", "delete", "rebalance"])
def test_exit_code_usage_refusals_are_2_not_3(args):
    code, _, err = run_cli(args + OFFLINE)
    assert code == 2 and err.startswith("error: ") and "needs a live cluster" in err, (code, err)


def test_exit_code_no_yes_without_a_terminal_is_usage(monkeypatch):
    from kubectl_safety.cli.interaction import confirm
    from kubectl_safety.cli.report import ExitCode, Report

    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    report = Report()
    with pytest.raises(Exception) as raised:
        confirm("Drain?", False, "drain")
    assert report.failed(raised.value).startswith("error: stdin is not a terminal: add --yes")
    assert report.exit_code == ExitCode.USAGE == 2


def test_exit_code_a_declined_prompt_has_its_own_code(monkeypatch):
    import click

    from kubectl_safety.cli import interaction
    from kubectl_safety.cli.report import ExitCode, Report

    class Terminal:
        def isatty(self):
            return True

    monkeypatch.setattr(interaction.sys, "stdin", Terminal())
    monkeypatch.setattr(click, "confirm", lambda *a, **k: False)
    report = Report()
    with pytest.raises(Exception) as raised:
        interaction.confirm("Drain?", False, "drain")
    assert report.failed(raised.value) == "error: not confirmed; nothing was changed"
    assert report.exit_code == ExitCode.DECLINED == 5


def test_exit_code_3_stays_for_unsafe_plans_refusals_for_safety_and_a_held_lease():
    from kubectl_safety.cli.report import ExitCode, Report
    from kubectl_safety.errors import RefusedError

    assert run_cli(["drain", "node-a2", "--dry-run", "--ignore-daemonsets"] + OFFLINE)[0] == 3
    assert run_cli(["delete", "pod", "db-0", "-n", "shop", "--force"] + OFFLINE)[0] == 3  # force without --confirm
    report = Report()
    report.failed(RefusedError("rollout x is held by someone (Lease kube-system/x)"))
    assert report.exit_code == ExitCode.UNSAFE == 3


@pytest.mark.parametrize("outcomes, worst", [
    ([], 0), ([0], 0), ([3], 3), ([3, 4], 4), ([4, 3], 4), ([5, 3], 5), ([3, 1], 1), ([1, 130], 130), ([2, 4], 2),
])
def test_exit_code_of_a_report_is_its_worst_outcome(outcomes, worst):
    from kubectl_safety.cli.report import Report

    report = Report()
    for code in outcomes:
        report.done(code)
    assert report.exit_code == worst


def _help_pages():
    from tests.unit.cli.test_packaging_help import COMMANDS

    return [list(path) for path, _ in COMMANDS] + [[]]


def test_exit_code_table_is_one_table_in_every_help_and_the_readme():
    from kubectl_safety.cli.report import EXIT_CODES, ExitCode, markdown_table

    table = " ".join(EXIT_CODES.split())
    for path in _help_pages():
        out = " ".join(run_cli(path + ["--help"])[1].split())
        assert out.count(table) == 1 and out.count("Exit codes") == 1, path
    readme = _readme()
    assert readme.count(markdown_table()) == 1 and readme.count("| code | meaning |") == 1
    assert [c.value for c in ExitCode] == [0, 1, 2, 3, 4, 5, 130]


@pytest.mark.parametrize("script", ["examples/rollout-pool.sh", "examples/pool-gate.sh"])
def test_exit_code_every_documented_code_has_a_branch_in_the_runbook_scripts(script):
    import re
    from pathlib import Path

    from kubectl_safety.cli.report import ExitCode

    text = (Path(__file__).resolve().parents[3] / script).read_text()
    arms = {int(c) for arm in re.findall(r"^\s*([0-9|]+)\)", text, re.M) for c in arm.split("|")}
    assert {c.value for c in ExitCode} <= arms, sorted(arms)


# -- item 5: every unsafe verdict names a risk; a refused cordon says the node was not cordoned ---------
FROZEN = "pods \"{name}\" is forbidden: ValidatingAdmissionPolicy 'freeze' with binding 'freeze' denied request: " \
         "evictions are frozen"


class _AdmissionApi:
    """An API server whose admission policy refuses every eviction (and, with ``refuse_cordon``, the cordon)."""

    def __init__(self, refuse_cordon=False):
        self.refuse_cordon = refuse_cordon

    def request(self, method, path, query=None, body=None):
        name = path.split("/")[-2 if path.endswith("/eviction") else -1]
        denied = {"kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422,
                  "message": FROZEN.format(name=name)}
        if method == "GET":
            return 200, {"metadata": {"name": name}, "spec": {}}
        if method == "PATCH":
            return (422, dict(denied, message=f'nodes "{name}" is forbidden: cordons are frozen')) \
                if self.refuse_cordon else (200, {})
        return 422, denied


def _server_dry_run(api, **options):
    from kubectl_safety.analysis.drain import DrainOptions, plan_drain
    from kubectl_safety.cli.published import published
    from kubectl_safety.engine.drain import server_dry_run
    from tests.builders import NOW, make_node, make_pod, snapshot

    snap = snapshot(make_node("n1"), make_node("n2"),
                    make_pod("web-1", node="n1", cpu="100m", owner=("ReplicaSet", "web-rs"), labels={"app": "web"}))
    plan = plan_drain(snap, ["n1"], DrainOptions(**options), NOW)
    assert plan.safe
    return published(server_dry_run(api, plan, timeout=5))


@pytest.mark.parametrize("refuse_cordon, objects", [(False, ["Pod/web-1"]), (True, ["Node/n1", "Pod/web-1"])],
                         ids=["evictions-refused", "cordon-and-evictions-refused"])
def test_server_refused_is_a_risk_with_the_api_reason(refuse_cordon, objects):
    from kubectl_safety.cli.views.drain import render_plan

    plan = _server_dry_run(_AdmissionApi(refuse_cordon))
    assert not plan["safe"] and {r["code"] for r in plan["risks"]} == {"SERVER_REFUSED"}
    assert sorted(f"{o['kind']}/{o['name']}" for r in plan["risks"] for o in r["objects"]) == objects
    assert any("evictions are frozen" in r["message"] and "(422)" in r["message"] for r in plan["risks"])
    text = render_plan(plan)
    assert "NOT SAFE (SERVER_REFUSED)" in text and "(none)" not in text and "evictions are frozen" in text


def test_server_refused_can_be_accepted_by_name():
    plan = _server_dry_run(_AdmissionApi(), accept_risks=frozenset({"SERVER_REFUSED"}))
    assert plan["safe"] and [r["accepted"] for r in plan["risks"]] == [True]
    from kubectl_safety.cli.risks import accepted_risks

    assert accepted_risks(["server-refused"]) == {"SERVER_REFUSED"}


@pytest.mark.parametrize("node", ["node-a1", "node-a2", "node-b1", "node-b2", "node-c1", "node-c2", "node-d1"])
def test_server_refused_every_unsafe_verdict_names_a_risk(node):
    for flags in ([], ["--ignore-daemonsets"], ["--force", "--disable-eviction"]):
        code, out, _ = run_cli(["drain", node, "--dry-run", "-o", "json", *flags] + OFFLINE)
        plan = json.loads(out)
        assert plan["safe"] or [r for r in plan["risks"] if not r["accepted"]], (node, flags)


@pytest.mark.parametrize("outcomes, says, not_said", [
    ([("n1", "forbidden")], ["Not cordoned: n1, n2 (the cordon was refused); nothing was evicted."], ["stay cordoned",
                                                                                                    "Cordoned:"]),
    ([("n1", "done"), ("n2", "error")], ["Not cordoned: n2 (the cordon was refused)", "Cordoned: n1 (kubectl uncordon"],
     ["stay cordoned"]),
    ([("n1", "done"), ("n2", "done")], ["The nodes stay cordoned; run the same command again to resume."],
     ["Not cordoned"]),
], ids=["first-refused", "second-refused", "both-cordoned-then-stopped"])
def test_server_refused_cordon_says_the_node_was_not_cordoned(outcomes, says, not_said):
    from kubectl_safety.cli.views.drain import render_report

    report = {"nodes": ["n1", "n2"], "status": "error", "message": "unable to cordon node", "drained": False,
              "evicted": [], "elapsedSeconds": 0.1, "left": [],
              "outcomes": [{"pod": n, "action": "cordon", "result": r, "status": 200, "message": ""}
                           for n, r in outcomes]}
    text = render_report(report)
    assert all(s in text for s in says) and not any(s in text for s in not_said), text


@pytest.mark.parametrize("event", [
    {"event": "cordon", "pod": "n1", "result": "forbidden", "message": 'nodes "n1" is forbidden: frozen'},
    {"event": "uncordon", "pod": "n1", "result": "error", "message": "conflict"},
    {"event": "error", "pod": "shop/web-1", "message": "the server refused"},
    {"event": "forbidden", "pod": "shop/web-1", "message": "denied"},
], ids=["cordon-refused", "uncordon-failed", "eviction-error", "eviction-forbidden"])
def test_server_refused_error_lines_start_with_error(event):
    from kubectl_safety.cli.drain_progress import event_line

    line = event_line(event)
    assert line.startswith("error: ") and event["message"] in line, line


# -- item 8: rebalance --dry-run=server ----------------------------------------------------------------
class _EvictionApi(_AdmissionApi):
    """An API server that accepts dry-run evictions, or (``refuse``) refuses them by admission policy."""

    def __init__(self, refuse=False):
        super().__init__()
        self.refuse, self.sent = refuse, []

    def request(self, method, path, query=None, body=None):
        self.sent.append((method, path, (body or {}).get("deleteOptions", {}).get("dryRun")))
        return super().request(method, path, query, body) if self.refuse else (201, {"kind": "Status",
                                                                                      "status": "Success"})


def _rebalance_server_dry_run(api, accepted=frozenset()):
    from kubectl_safety.analysis.rebalance import RebalanceOptions, plan_rebalance
    from kubectl_safety.cluster.source import load_snapshot
    from kubectl_safety.cli.published import published
    from kubectl_safety.engine.rebalancer import first_round, server_dry_run
    from kubectl_safety.model.meta import parse_time

    snap = load_snapshot(snapshot_paths=[DEMO], now=parse_time(DEMO_NOW))
    plan = plan_rebalance(snap, [snap.workload("Deployment", "shop", "web")], RebalanceOptions(), snap.taken_at)
    assert plan.safe and first_round(plan)
    answered = published(server_dry_run(api, snap, plan, accepted=accepted, timeout=5))
    first = {(e.namespace, e.name) for e in first_round(plan)}
    return [e for e in answered["evictions"] if (e["namespace"], e["name"]) in first], answered


def test_rebalance_dry_run_server_sends_the_first_round_with_dry_run_all():
    api = _EvictionApi()
    first, plan = _rebalance_server_dry_run(api)
    assert plan["safe"] and plan["serverDryRun"] == {"sent": len(first), "refused": 0}
    assert [e["serverDryRun"]["result"] for e in first] == ["done"] * len(first)
    assert api.sent and all(m == "POST" and dry == ["All"] for m, _, dry in api.sent)  # evictions only, dry run
    assert len(api.sent) == len(first)


def test_rebalance_dry_run_server_refusal_is_a_risk():
    from kubectl_safety.cli.views.rebalance import render

    first, plan = _rebalance_server_dry_run(_EvictionApi(refuse=True))
    assert not plan["safe"] and plan["serverDryRun"]["refused"] == len(first)
    assert {r["code"] for r in plan["risks"]} == {"SERVER_REFUSED"}
    assert all("evictions are frozen" in r["message"] for r in plan["risks"])
    plan["scope"] = {"namespace": "shop", "selector": None, "workload": "Deployment/web"}
    text = render(plan)
    assert "NOT SAFE (SERVER_REFUSED)" in text and "SERVER" in text.split("Evictions")[1].splitlines()[1]
    assert _rebalance_server_dry_run(_EvictionApi(refuse=True), frozenset({"SERVER_REFUSED"}))[1]["safe"]


# -- item 9, leftover: one severity vocabulary in every report -----------------------------------------
def _severities(node) -> set:
    if isinstance(node, dict):
        found = {node["severity"]} if isinstance(node.get("severity"), str) else set()
        return found.union(*(_severities(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_severities(v) for v in node))
    return set()


@pytest.mark.parametrize("args", [
    ["drain", "node-a2", "--dry-run"], ["drain", "node-c2", "--dry-run", "--force", "--disable-eviction"],
    ["rollout", "node-a1", "node-a2", "node-b2", "--dry-run"], ["explain", "pod", "db-0", "-n", "shop"],
    ["delete", "pod", "legacy-0", "-n", "shop", "--force", "--dry-run"], ["check", "--scope", "cluster"],
], ids=["drain-blocked", "drain-disable-eviction", "rollout", "explain", "delete", "check"])
def test_severity_is_one_vocabulary_in_drain_rollout_explain_and_check(args):
    code, out, err = run_cli(args + ["-o", "json"] + OFFLINE)
    found = _severities(json.loads(out))
    assert found and found <= {"error", "warning", "info"}, (found, err)


@pytest.mark.parametrize("kind", ["DrainPlan", "RolloutPlan", "ForceDeleteAssessment", "DeleteReport",
                                  "PodExplanation"])
def test_severity_is_one_vocabulary_in_the_schemas(kind):
    schema = run_cli(["schema", kind])[1]
    enums = {tuple(s for s in e if s) for e in _enums(json.loads(schema), "severity")}
    assert enums == {("error", "warning", "info")}, enums


def _enums(node, key):
    if isinstance(node, dict):
        here = [node["properties"][key].get("enum") or ()] if key in (node.get("properties") or {}) else []
        return here + [e for v in node.values() for e in _enums(v, key)]
    if isinstance(node, list):
        return [e for v in node for e in _enums(v, key)]
    return []
