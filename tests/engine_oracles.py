"""The upgrade engines' drain oracles (controlplane/engines/<engine>): their own code, run on the test
control plane.

``run(engine, *args)`` runs the binary ``controlplane/build.sh --engines`` built from the current
sources (its name carries their hash, as build.sh computes it) and returns its JSON answer;
``available(engine)`` says why it cannot run, or None.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
SOURCES = REPO / "controlplane" / "engines"
VERSIONS = "engines-capi-v1.14.2_karpenter-v1.14.1"  # build.sh's ENGINES_BIN


def source_hash(engine: str) -> str:
    """sha256 of the engine oracle's sources (*.go, go.mod, go.sum in name order), as build.sh."""
    src = SOURCES / engine
    names = sorted([p.name for p in src.glob("*.go")] + ["go.mod", "go.sum"])
    digest = hashlib.sha256()
    for name in names:
        digest.update((src / name).read_bytes())
    return digest.hexdigest()[:16]


def binary(engine: str) -> Path:
    from controlplane.cluster import cache_dir

    return cache_dir("engines") / VERSIONS / "bin" / f"{engine}-drain-{source_hash(engine)}"


def available(engine: str):
    """None when the engine's oracle can run, else the reason."""
    path = binary(engine)
    if not os.access(path, os.X_OK):
        return f"no {engine} drain oracle at {path} (run controlplane/build.sh --engines)"
    return None


def run(engine: str, *args: str, timeout: float = 300) -> dict:
    """The oracle's answer (its stdout, one JSON object); its stderr is in the error when it fails."""
    done = subprocess.run([str(binary(engine)), *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{engine} oracle exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)
