"""controlplane/build.sh and controlplane/prometheus/build.sh share one build step (controlplane/lib.sh):
with every binary already in the versioned caches the tests read, they build nothing. controlplane/build-stages.sh
runs them in stages and says when each ends, failed or not."""

import hashlib
import os
import subprocess
from pathlib import Path

from controlplane import cluster, node
from tests import engine_oracles, oracle, promstack

REPO = Path(__file__).resolve().parents[3]
FAKE_GO = """#!/bin/sh
case "$1" in version) echo "go version go1.26.8 linux/amd64" ;; *) echo "go $*: called" >&2; exit 1 ;; esac
"""


def _testapp_hash() -> str:
    sources = REPO / "controlplane" / "go" / "testapp"
    digest = hashlib.sha256()
    for name in sorted([p.name for p in sources.glob("*.go")] + ["go.mod"]):
        digest.update((sources / name).read_bytes())
    return digest.hexdigest()[:16]


def _executable(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _fake_cache(cache: Path) -> dict[str, list[str]]:
    """Every binary the build scripts make, as an empty executable where the tests look for it."""
    tag = _testapp_hash()
    names = {
        cluster.VERSIONS: [*cluster.BINARIES, f"oracle-{oracle.source_hash()}"],
        node.NODE_VERSIONS: [*node.NODE_BINARIES, f"testapp-{tag}"],
        engine_oracles.VERSIONS: [f"{e}-drain-{engine_oracles.source_hash(e)}" for e in ("capi", "karpenter")],
        promstack.VERSIONS: ["prometheus", "pushgateway"],
    }
    for versions, binaries in names.items():
        for name in binaries:
            _executable(cache / versions / "bin" / name)
    for image in ("testapp", "pause"):
        (cache / node.NODE_VERSIONS / "bin" / f"{image}-{tag}.tar").write_text("image")
    return names


def _env(tmp_path: Path, cache: Path) -> dict[str, str]:
    """Build scripts' environment: the cache given, and a go that only says its version."""
    _executable(tmp_path / "tools" / "go", FAKE_GO)
    return dict(os.environ, KUBECTL_SAFETY_CACHE=str(cache), PATH=f"{tmp_path / 'tools'}:{os.environ['PATH']}",
                KUBECTL_SAFETY_BUILD_STATUS=str(tmp_path / "status"), KUBECTL_SAFETY_BUILD_LOG=str(tmp_path / "log"))


def test_with_every_binary_cached_the_build_scripts_build_nothing(tmp_path):
    cache = tmp_path / "cache"
    names = _fake_cache(cache)
    env = _env(tmp_path, cache)
    logs = []
    for script in (["controlplane/build.sh", "--engines"], ["controlplane/prometheus/build.sh"]):
        run = subprocess.run(["bash", *script], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        logs.append(run.stderr)
    log = "".join(logs)
    assert "called" not in log and "building" not in log
    every = [name.split("/")[-1] for binaries in names.values() for name in binaries]
    assert sorted(line.split("up to date: ")[1] for line in log.splitlines() if "up to date: " in line) == sorted(every)
    assert "prometheus/build.sh: up to date: prometheus" in log


def test_the_build_stages_each_say_when_they_end_and_the_chain_says_it_ended(tmp_path):
    _fake_cache(tmp_path / "cache")
    run = subprocess.run(["bash", "controlplane/build-stages.sh"], cwd=REPO, env=_env(tmp_path, tmp_path / "cache"),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (tmp_path / "log").read_text()
    assert {f.name: f.read_text() for f in tmp_path.glob("status*") if f.name != "status.times"} == {
        "status": "0\n", "status.controlplane": "0\n", "status.engines": "0\n", "status.prometheus": "0\n"}
    stages = [line.split()[0] for line in (tmp_path / "status.times").read_text().splitlines()]
    assert stages == ["start", "controlplane", "engines", "prometheus"]


def test_a_failed_stage_ends_the_chain_at_once_with_its_exit_code(tmp_path):
    run = subprocess.run(["bash", "controlplane/build-stages.sh"], cwd=REPO, env=_env(tmp_path, tmp_path / "empty"),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert (tmp_path / "status").read_text() == "1\n"
    assert (tmp_path / "status.controlplane").read_text() == "1\n"
    assert not (tmp_path / "status.engines").exists()
    assert "go build failed for kube-apiserver" in (tmp_path / "log").read_text()
