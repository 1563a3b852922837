"""scripts/test-all builds beside the unit tests; the tests that need the build wait for it (wait_for_build)."""

import threading

import pytest

from controlplane import cluster


@pytest.mark.parametrize("scenario, written, error", [
    ("no build going: no wait", None, None),
    ("the build ends well after a moment", "0\n", None),
    ("the build failed: its log's end is the error", "2\n", "exit 2"),
])
def test_a_test_needing_the_build_waits_for_it(tmp_path, monkeypatch, scenario, written, error):
    status, log = tmp_path / "status", tmp_path / "log"
    log.write_text("go: some module failed\n")
    if written is not None:
        monkeypatch.setenv("KUBECTL_SAFETY_BUILD_STATUS", str(status))
        monkeypatch.setenv("KUBECTL_SAFETY_BUILD_LOG", str(log))
        threading.Timer(0.3, status.write_text, [written]).start()
    else:
        monkeypatch.delenv("KUBECTL_SAFETY_BUILD_STATUS", raising=False)
    if error:
        with pytest.raises(cluster.ClusterError, match=error) as err:
            cluster.wait_for_build(timeout=10)
        assert "some module failed" in str(err.value)
    else:
        cluster.wait_for_build(timeout=10)
        assert written is None or status.exists()


def test_a_build_that_never_ends_fails_the_tests_that_need_it(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECTL_SAFETY_BUILD_STATUS", str(tmp_path / "never"))
    with pytest.raises(cluster.ClusterError, match="did not finish"):
        cluster.wait_for_build(timeout=0.1)


@pytest.mark.parametrize("scenario, written, stage, error", [
    ("the control plane is built while the engines still build: its tests go on",
     {"status.controlplane": "0\n"}, "controlplane", None),
    ("the engines' stage failed: its tests fail with the log", {"status.controlplane": "0\n", "status.engines": "1\n"},
     "engines", "the engines build failed \\(exit 1\\)"),
    ("the chain failed before Prometheus's stage: its tests fail at once",
     {"status.controlplane": "2\n", "status": "2\n"}, "prometheus",
     "an earlier stage of the build, before prometheus, failed \\(exit 2\\)"),
])
def test_a_test_waits_only_for_the_build_stage_it_needs(tmp_path, monkeypatch, scenario, written, stage, error):
    monkeypatch.setenv("KUBECTL_SAFETY_BUILD_STATUS", str(tmp_path / "status"))
    monkeypatch.setenv("KUBECTL_SAFETY_BUILD_LOG", str(tmp_path / "log"))
    (tmp_path / "log").write_text("go: some module failed\n")
    for name, code in written.items():
        (tmp_path / name).write_text(code)
    if error:
        with pytest.raises(cluster.ClusterError, match=error):
            cluster.wait_for_build(stage, timeout=10)
    else:
        cluster.wait_for_build(stage, timeout=10)


def test_a_stage_still_building_keeps_its_tests_waiting(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECTL_SAFETY_BUILD_STATUS", str(tmp_path / "status"))
    (tmp_path / "status.controlplane").write_text("0\n")
    with pytest.raises(cluster.ClusterError, match="the engines build .* did not finish"):
        cluster.wait_for_build("engines", timeout=0.1)
