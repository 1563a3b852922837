"""The upstream oracle (controlplane/go/oracle) as a Python object: one long-lived process.

``Oracle().ask("qos", pod=...)`` sends one JSON line and reads one back. The binary is the one
``controlplane/build.sh`` built from the current sources (its name carries their hash), so a
stale oracle is never used. ``available()`` says why it cannot run, or None.
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
SOURCES = REPO / "controlplane" / "go" / "oracle"


class OracleError(Exception):
    """The oracle answered with an error (a bad question, or upstream code failed)."""


def source_hash() -> str:
    """sha256 of the oracle's sources (*.go, go.mod, go.sum concatenated in name order), as build.sh."""
    names = sorted([p.name for p in SOURCES.glob("*.go")] + ["go.mod", "go.sum"])
    digest = hashlib.sha256()
    for name in names:
        digest.update((SOURCES / name).read_bytes())
    return digest.hexdigest()[:16]


def binary() -> Path:
    from controlplane.cluster import default_bin_dir  # the control plane's versioned cache

    return Path(os.environ.get("KUBECTL_SAFETY_ORACLE") or default_bin_dir() / f"oracle-{source_hash()}")


def available():
    """None when the oracle can run, else the reason (build it with controlplane/build.sh)."""
    path = binary()
    if not os.access(path, os.X_OK):
        return f"no oracle binary at {path} (run controlplane/build.sh)"
    return None


class Oracle:
    """One oracle process; questions are answered in order (not thread-safe)."""

    def __init__(self, path=None):
        self.path = Path(path or binary())
        self.proc = subprocess.Popen([str(self.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.asked = 0

    def ask(self, question: str, **args):
        """The answer to one question (arguments use the oracle's field names, objects as dicts)."""
        self.proc.stdin.write(json.dumps({"q": question, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise OracleError(f"oracle exited (code {self.proc.poll()}) on {question}")
        self.asked += 1
        reply = json.loads(line)
        if "error" in reply:
            raise OracleError(reply["error"])
        return reply["ok"]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
