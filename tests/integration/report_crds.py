"""The report CRDs of the pinned modules (controlplane/reports/crds.sh) installed on the control plane."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPENREPORTS = ("openreports.io_clusterreports.yaml", "openreports.io_reports.yaml")
WGPOLICY = ("wgpolicyk8s.io_clusterpolicyreports.yaml", "wgpolicyk8s.io_policyreports.yaml")


def crd_dir() -> Path:
    out = subprocess.run([str(ROOT / "controlplane" / "reports" / "crds.sh")], check=True, capture_output=True,
                         text=True).stdout
    return Path(out.strip().splitlines()[-1])


def _names(files) -> list:
    return [f"crd/{f.split('_', 1)[1].removesuffix('.yaml')}.{f.split('_', 1)[0]}" for f in files]


def uninstall(cluster, files) -> None:
    """Delete the CRDs (and every report of them) and wait until they are gone."""
    cluster.kubectl("delete", "--ignore-not-found", "--wait=true", "--timeout=60s", *_names(files))


def install(cluster, files) -> None:
    """Apply the CRDs and wait until they are served."""
    paths = [str(crd_dir() / f) for f in files]
    for path in paths:
        cluster.kubectl("apply", "--server-side", "-f", path)
    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s", *_names(files))
