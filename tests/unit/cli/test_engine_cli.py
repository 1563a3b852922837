"""``--engine NAME`` on drain, rollout and check: text, JSON (kind EnginePlan) and exit codes, on the demo dump."""

import json

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

DUMP = ["--snapshot", DEMO, "--as-of", DEMO_NOW]


def engine_json(*args):
    code, out, err = run_cli([*args, *DUMP, "-o", "json"])
    assert out, err
    return code, json.loads(out)["engine"]


def test_rollout_with_an_engine_that_completes_exits_0():
    code, e = engine_json("rollout", "-l", "pool=blue", "--dry-run", "--engine", "eks")
    assert code == 0 and e["verdict"] == "COMPLETES" and e["order"] == "random"
    assert [(n["name"], n["outcome"]) for n in e["nodes"]] == [
        ("node-a1", "COMPLETES"), ("node-b1", "COMPLETES"), ("node-c2", "COMPLETES")]
    assert [b["nodes"] for b in e["batches"]] == [["node-a1"], ["node-b1"], ["node-c2"]]
    assert {"name": "maxUnavailable", "value": "1", "source": "default", "origin": ""} in e["settings"]


def test_pdb_that_never_allows_under_kured_stalls_and_exits_3():
    code, e = engine_json("drain", "node-a2", "--dry-run", "--engine", "kured")
    assert code == 3 and e["verdict"] == "STALLS" and e["seconds"] is None
    node = e["nodes"][0]
    assert node["outcome"] == "STALLS" and "shop/db-0" in node["reason"]
    assert [(p["name"], p["action"], p["code"]) for p in node["pods"] if p["action"] == "blocked"] == [
        ("db-0", "blocked", "PDB_NEVER_ALLOWS")]


def test_engine_setting_is_shown_with_its_source():
    code, e = engine_json("drain", "node-a2", "--dry-run", "--engine", "aks", "--engine-setting",
                          "drainTimeoutInMinutes=5", "--engine-setting", "undrainableNodeBehavior=Cordon")
    assert code == 3 and e["nodes"][0]["outcome"] == "FAILS" and e["nodes"][0]["atSeconds"] == 300
    assert "Quarantined" in e["nodes"][0]["leaves"] and e["haltsAfter"] is None
    settings = {s["name"]: (s["value"], s["source"]) for s in e["settings"]}
    assert settings["drainTimeoutInMinutes"] == ("5", "flag") and settings["maxSurge"] == ("1", "default")


def test_kubectl_engine_takes_drains_own_flags_as_its_settings():
    code, e = engine_json("drain", "node-a2", "--dry-run", "--engine", "kubectl", "--timeout", "5m",
                          "--ignore-daemonsets")
    settings = {s["name"]: (s["value"], s["source"]) for s in e["settings"]}
    assert settings["timeout"] == ("5m", "flag") and settings["ignore-daemonsets"] == ("true", "flag")
    assert settings["force"] == ("false", "default")
    assert code == 3 and e["nodes"][0]["atSeconds"] in (0, 300)


def test_check_with_an_engine_predicts_every_selected_node():
    code, e = engine_json("check", "-l", "pool=green", "--engine", "gke")
    assert code == 3 and e["verdict"] == "FORCES"
    assert sorted(n["name"] for n in e["nodes"]) == ["node-a2", "node-b2", "node-c1"]
    forced = [n for n in e["nodes"] if n["outcome"] == "FORCES"]
    assert forced and all(n["atSeconds"] == 3600 and n["availability"] for n in forced)


def test_surge_with_an_engine_says_what_a_surge_ahead_keeps_whole_and_exits_as_the_engine_alone():
    code, e = engine_json("rollout", "-l", "pool=green", "--dry-run", "--engine", "gke", "--surge")
    assert code == 3 and e["verdict"] == "FORCES"
    w = e["withSurge"]
    assert w["verdict"] == "FORCES" and w["runFirst"] == "kubectl safety drain NODE --surge"
    a2 = next(n for n in w["nodes"] if n["name"] == "node-a2")
    assert (a2["outcome"], a2["changes"], a2["keptWhole"]) == ("FORCES", False, [])
    assert a2["notKept"] == [{"what": "shop/db-0", "reason": "StatefulSet shop/db is never surged (stable identity "
                                                              "and claims): it is unavailable while the pod moves"}]
    _, out, _ = run_cli(["drain", "node-a2", "--dry-run", "--engine", "kured", "--surge", *DUMP])
    assert "With --surge: STALLS. The engine does not surge: run kubectl safety drain NODE --surge on each node " \
           "before the engine's window" in out
    assert "node-a2: --surge cannot keep shop/db-0: StatefulSet shop/db is never surged" in out
    assert "A surge ahead changes no node's outcome here: nothing it can surge holds a node." in out
    _, e = engine_json("drain", "node-a2", "--dry-run", "--engine", "kured")
    assert e["withSurge"] is None


def test_text_has_one_line_per_node_then_details_and_settings():
    code, out, _ = run_cli(["drain", "node-a2", "--dry-run", "--engine", "suc", "--engine-setting", "concurrency=1",
                            *DUMP])
    assert code == 3
    lines = out.splitlines()
    assert lines[0] == "Engine suc (system-upgrade-controller Plan): FAILS"
    assert lines[2].split()[:4] == ["NODE", "BATCH", "OUTCOME", "AT"]
    assert lines[3].split()[:4] == ["node-a2", "1", "FAILS", "10m"]
    assert "leaves: the node cordoned and the Job failed; the Plan stops until it is updated" in out
    assert "concurrency" in out and "jobActiveDeadlineSecs" in out and "Settings:" in out


USAGE = [
    ("engine-without-dry-run", ["drain", "node-a2", "--engine", "eks"], "--engine needs --dry-run"),
    ("engine-with-server-dry-run", ["drain", "node-a2", "--dry-run=server", "--engine", "eks"],
     "--engine needs --dry-run"),
    ("setting-without-engine", ["drain", "node-a2", "--dry-run", "--engine-setting", "force=true"],
     "--engine-setting needs --engine"),
    ("unknown-engine", ["rollout", "node-a2", "--dry-run", "--engine", "nomad"], "unknown engine 'nomad'"),
    ("unknown-setting", ["check", "--engine", "eks", "--engine-setting", "drainTimeout=5"], "has no such setting"),
    ("bad-value", ["drain", "node-a2", "--dry-run", "--engine", "kured", "--engine-setting", "drain-timeout=soon"],
     "invalid drain-timeout 'soon'"),
    ("drain-flag-with-another-engine", ["drain", "node-a2", "--dry-run", "--engine", "eks", "--ignore-daemonsets"],
     "--ignore-daemonsets has no effect with --engine eks"),
    ("surge-limit-without-surge-with-an-engine", ["drain", "node-a2", "--dry-run", "--engine", "kured",
                                                  "--surge-limit", "2"], "--surge-limit needs --surge"),
    ("check-flag-with-an-engine", ["check", "--engine", "aks", "--fail-on", "warning"],
     "--fail-on has no effect with --engine aks"),
    ("suc-concurrency-unset", ["drain", "node-a2", "--dry-run", "--engine", "suc"], "selects no node"),
]


@pytest.mark.parametrize("name,args,message", USAGE, ids=[u[0] for u in USAGE])
def test_engine_usage_errors(name, args, message):
    code, _, err = run_cli([*args, *DUMP])
    assert code == 2 and message in err, err


def test_the_engine_flag_help_names_every_profile_module():
    """--help imports no analysis, so the names are written in the flag's help: a new profile adds its name."""
    from kubectl_safety.analysis import profiles
    from kubectl_safety.cli.engine_flags import ENGINE_HELP

    named = ENGINE_HELP.split(":", 1)[1].strip(" .").split(", ")
    assert sorted(named) == profiles.engines()
