"""A real Pushgateway and Prometheus for the tests (built by controlplane/prometheus/build.sh).

Prometheus scrapes the Pushgateway every second (``honor_labels``) and evaluates one rule every
second: ``RolloutTestAlert`` fires while the gauge ``kubectl_safety_test_alert`` pushed to the
Pushgateway is above 0, so a test raises and clears an alert on demand (``Stack.alert``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from controlplane.cluster import cache_dir

VERSIONS = "prometheus-v0.316.0_pushgateway-v1.11.1"
ALERT = "RolloutTestAlert"
RULES = f"""groups:
- name: test
  interval: 1s
  rules:
  - alert: {ALERT}
    expr: kubectl_safety_test_alert > 0
    labels: {{severity: page}}
"""


def bin_dir() -> Path:
    return Path(os.environ.get("KUBECTL_SAFETY_PROMETHEUS_BIN") or cache_dir("prometheus") / VERSIONS / "bin")


def unavailable(name: str):
    """None when ``name`` (prometheus, pushgateway) is built, else the reason."""
    path = bin_dir() / name
    return None if os.access(path, os.X_OK) else f"no {name} at {path} (run controlplane/prometheus/build.sh)"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(url, proc, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready within {seconds}s")


class Stack:
    """A Pushgateway, and with ``prometheus=True`` a Prometheus scraping it; ``close()`` stops them."""

    def __init__(self, work: Path, prometheus: bool):
        self.procs = []
        port = _port()
        self.pushgateway = f"http://127.0.0.1:{port}"
        self._start([bin_dir() / "pushgateway", f"--web.listen-address=127.0.0.1:{port}"], work / "pushgateway.log",
                    self.pushgateway)
        self.prometheus = None
        if prometheus:
            port = _port()
            self.prometheus = f"http://127.0.0.1:{port}"
            (work / "rules.yml").write_text(RULES)
            (work / "prometheus.yml").write_text(json.dumps({
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(work / "rules.yml")],
                "scrape_configs": [{"job_name": "pushgateway", "honor_labels": True,
                                    "static_configs": [{"targets": [self.pushgateway[len("http://"):]]}]}]}))
            self._start([bin_dir() / "prometheus", f"--config.file={work / 'prometheus.yml'}",
                         f"--storage.tsdb.path={work / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
                        work / "prometheus.log", self.prometheus)

    def _start(self, argv, log, url):
        with open(log, "wb") as out:
            proc = subprocess.Popen([str(a) for a in argv], stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        _wait_ready(url, proc)

    def metrics(self) -> str:
        """The Pushgateway's own /metrics (what Prometheus would scrape from it)."""
        with urllib.request.urlopen(self.pushgateway + "/metrics", timeout=10) as r:
            return r.read().decode()

    def alert(self, on: bool):
        """Push the gauge the test rule fires on (1) or clears on (0)."""
        body = f"kubectl_safety_test_alert {1 if on else 0}\n".encode()
        req = urllib.request.Request(self.pushgateway + "/metrics/job/alert-switch", data=body, method="PUT")
        with urllib.request.urlopen(req, timeout=10):
            pass

    def firing(self) -> list[str]:
        with urllib.request.urlopen(self.prometheus + "/api/v1/alerts", timeout=10) as r:
            alerts = json.load(r)["data"]["alerts"]
        return [a["labels"]["alertname"] for a in alerts if a["state"] == "firing"]

    def close(self):
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
