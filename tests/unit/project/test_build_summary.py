"""scripts/test-all ends with what the build beside the tests did (controlplane/buildlog.py), in CI's log tail."""

import pytest

from controlplane import buildlog

COLD = """build.sh: go version go1.26.8 linux/amd64; cache /c/k8s/bin
build.sh: building kube-apiserver from k8s.io/kubernetes/cmd/kube-apiserver (module controlplane/go/k8s) ...
build.sh: built kube-apiserver in 312s
build.sh: up to date: etcd
go: downloading k8s.io/api v0.36.3
build.sh: built karpenter-drain-0123456789abcdef in 48s
/c/k8s/bin
prometheus/build.sh: up to date: pushgateway
prometheus/build.sh: built prometheus in 996s
"""


@pytest.mark.parametrize("scenario, log, expected", [
    ("a cold build: each component built with its seconds or up to date, in build order", COLD,
     [("kube-apiserver", 312), ("etcd", None), ("karpenter-drain-0123456789abcdef", 48), ("pushgateway", None),
      ("prometheus", 996)]),
    ("a build that failed before logging anything", "build.sh: error: go not found on PATH\n", []),
    ("a go error quoting a built line is not a component", "main.go:3: build.sh: built x in 1s\n", []),
])
def test_the_build_log_names_what_was_built_and_what_was_up_to_date(scenario, log, expected):
    assert buildlog.components(log) == expected


def test_a_component_a_later_stage_finds_up_to_date_is_listed_once_as_built():
    log = "build.sh: built kubectl in 5s\nbuild.sh: up to date: kubectl\nbuild.sh: built capi-drain-0a in 40s\n"
    assert buildlog.components(log) == [("kubectl", 5), ("capi-drain-0a", 40)]


TIMES = "start 1030\ncontrolplane 1400 0\nengines 1900 0\nprometheus 2400 0\n"


@pytest.mark.parametrize("scenario, times, stages_line, chain_line", [
    ("every stage built: when each ended, and how long the chain took", TIMES,
     "build stages ended (after test-all started): controlplane at 400s, engines at 900s, prometheus at 1400s",
     "the build chain took 1370s; pytest ended at 2000s"),
    ("the engines failed: the stages after them never ran", "start 1030\ncontrolplane 1400 0\nengines 1500 1\n",
     "build stages ended (after test-all started): controlplane at 400s, engines at 500s (failed, exit 1)",
     "the build chain took 470s; pytest ended at 2000s"),
    ("no times written (the chain never started)", "",
     "build stages ended (after test-all started): none",
     "the build chain ended no stage; pytest ended at 2000s"),
])
def test_the_summary_says_what_each_component_cost_and_when_each_stage_ended(scenario, times, stages_line,
                                                                             chain_line):
    lines = buildlog.summary(COLD, times, started=1000, pytest_ended=3000).splitlines()
    assert "  kube-apiserver                    built in 312s" in lines
    assert "  etcd                              up to date" in lines
    assert "test-all: 3 built (1356s of compiling), 2 up to date" in lines
    assert lines[-2:] == [f"test-all: {stages_line}", f"test-all: {chain_line}"]


def test_test_all_prints_the_summary_from_its_log_and_times_files(tmp_path, capsys):
    log, times = tmp_path / "log", tmp_path / "times"
    log.write_text(COLD)
    times.write_text(TIMES)
    assert buildlog.main([str(log), str(times), "1000", "3000"]) == 0
    assert "prometheus at 1400s" in capsys.readouterr().out
