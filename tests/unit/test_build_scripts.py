"""controlplane/build.sh and controlplane/prometheus/build.sh share one build step (controlplane/lib.sh):
with every binary already in the versioned caches the tests read, they build nothing."""

import hashlib
import os
import subprocess
from pathlib import Path

from controlplane import cluster, node
from tests import engine_oracles, oracle, promstack

REPO = Path(__file__).resolve().parents[2]
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


def test_with_every_binary_cached_the_build_scripts_build_nothing(tmp_path):
    cache, tools = tmp_path / "cache", tmp_path / "tools"
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
    _executable(tools / "go", FAKE_GO)
    env = dict(os.environ, KUBECTL_SAFETY_CACHE=str(cache), PATH=f"{tools}:{os.environ['PATH']}")
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
