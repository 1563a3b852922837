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


def test_the_summary_says_what_each_component_cost_and_when_the_build_chain_ended():
    text = buildlog.summary(COLD, started=1000, build_started=1030, finished=2400, pytest_ended=3000, exit_code="0")
    lines = text.splitlines()
    assert "kube-apiserver                    built in 312s" in text
    assert "  etcd                              up to date" in lines
    assert "3 built (1356s of compiling), 2 up to date" in text
    assert lines[-1] == ("test-all: the build chain took 1370s (exit 0) and ended 1400s after test-all started; "
                         "pytest ended at 2000s")


def test_the_summary_of_a_build_still_running_says_so(tmp_path, capsys):
    log = tmp_path / "log"
    log.write_text(COLD)
    assert buildlog.main([str(log), "1000", "1030", "", "3000", ""]) == 0
    assert "the build chain was still running when pytest ended (2000s)" in capsys.readouterr().out
