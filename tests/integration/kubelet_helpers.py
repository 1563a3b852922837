"""Helpers for tests on the real kubelet node (controlplane/node.py): test-app pods, their
processes found in /proc, signal logs and exit times measured on this machine's monotonic clock."""

from __future__ import annotations

import json
import os
import select
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cluster_helpers import REPO, wait_until  # noqa: F401  (REPO puts the repo on sys.path)

from controlplane.node import LABEL, LOGS, TAINT_KEY, testapp_image

TOLERANCE = 0.5  # seconds: the kubelet's reaction times vary; these are correctness checks, not benchmarks


def app_container(namespace: str, pod: str, name: str, *, on_term: str = "ignore", term_delay: float = 0,
                  hold_mib: int = 0, pre_stop_sleep: float | None = None, requests: dict | None = None,
                  limits: dict | None = None, sidecar: bool = False) -> dict:
    """A container running ``testapp run`` that logs its signals to /log/<pod>.<name>.log."""
    ident = container_id(namespace, pod, name)
    args = ["run", "--id", ident, "--log", f"/log/{pod}.{name}.log", "--on-term", on_term,
            "--term-delay", f"{term_delay}s", "--hold-mib", str(hold_mib)]
    c = {"name": name, "image": testapp_image(), "imagePullPolicy": "Never", "command": ["/testapp"], "args": args,
         "volumeMounts": [{"name": "log", "mountPath": "/log"}]}
    if pre_stop_sleep is not None:
        c["lifecycle"] = {"preStop": {"exec": {"command": [
            "/testapp", "prestop", "--id", ident, "--log", f"/log/{pod}.{name}.log", "--sleep", f"{pre_stop_sleep}s"]}}}
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    if resources:
        c["resources"] = resources
    if sidecar:
        c["restartPolicy"] = "Always"
    if "$(POD_NAME)" in pod:  # a controller's pods: their names come from the downward API
        c["env"] = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    return c


def app_pod(namespace: str, name: str, *, grace: int | None = 30, containers: list[dict] | None = None,
            sidecars: list[dict] | None = None, priority_class: str | None = None, **container) -> dict:
    """A pod for the real node (tolerates its taint and memory pressure, selects its label)."""
    spec = {
        "containers": containers or [app_container(namespace, name, "app", **container)],
        "nodeSelector": dict([LABEL.split("=")]),
        "tolerations": [{"key": TAINT_KEY, "operator": "Exists"},
                        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists"}],
        "volumes": [{"name": "log", "hostPath": {"path": str(LOGS / namespace), "type": "DirectoryOrCreate"}}],
        "enableServiceLinks": False,
        "automountServiceAccountToken": False,
    }
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if sidecars:
        spec["initContainers"] = sidecars
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}}, "spec": spec}


def container_id(namespace: str, pod: str, name: str) -> str:
    return f"{namespace}.{pod}.{name}"


def find_pid(ident: str) -> int | None:
    """The host PID of the ``testapp run --id ident`` process, if it runs."""
    needle = b"\0--id\0" + ident.encode() + b"\0"
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"/testapp\0run\0") and needle in cmdline:
                return int(proc.name)
    return None


@dataclass
class Event:
    at: float  # CLOCK_MONOTONIC seconds, as time.monotonic()
    what: str


def events(namespace: str, pod: str, name: str) -> list[Event]:
    """What the container logged: ``start pid=..``, ``signal SIGTERM``, ``prestop-start``, ``exit ...``."""
    path = LOGS / namespace / f"{pod}.{name}.log"
    out = []
    for line in path.read_text().splitlines() if path.exists() else []:
        mono, _wall, _ident, what = line.split(" ", 3)
        out.append(Event(int(mono) / 1e9, what))
    return out


def first(evs: list[Event], what: str) -> float | None:
    return next((e.at for e in evs if e.what == what), None)


@dataclass
class ExitWatch:
    """Exit times (time.monotonic()) of processes, from their pidfds, on a background thread."""

    pids: dict[str, int]
    exits: dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        self._fds = {os.pidfd_open(pid): key for key, pid in self.pids.items()}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        poller = select.poll()
        for fd in self._fds:
            poller.register(fd, select.POLLIN)
        while len(self.exits) < len(self._fds):
            for fd, _ in poller.poll(100):
                if self._fds[fd] not in self.exits:
                    self.exits[self._fds[fd]] = time.monotonic()
                    poller.unregister(fd)

    def wait(self, timeout: float) -> dict[str, float]:
        self._thread.join(timeout)
        for fd in self._fds:
            os.close(fd)
        assert len(self.exits) == len(self.pids), f"still running after {timeout}s: {set(self.pids) - set(self.exits)}"
        return self.exits


def running_pids(cluster, namespace: str, containers: list[tuple[str, str]], timeout: float = 90) -> dict:
    """Wait until every (pod, container) runs its test app; their host PIDs keyed ``pod.container``."""
    def found():
        pids = {f"{p}.{c}": find_pid(container_id(namespace, p, c)) for p, c in containers}
        return pids if all(pids.values()) else None
    pids = wait_until(found, timeout=timeout, what="the test containers to start", interval=0.3)
    # A "start" line means the signal handlers are installed.
    wait_until(lambda: all(any(e.what.startswith("start") for e in events(namespace, p, c)) for p, c in containers),
               timeout=30, what="the test apps' start lines", interval=0.2)
    return pids


def pod_json(cluster, namespace: str, name: str) -> dict | None:
    out = cluster.kubectl("get", "pod", name, "-n", namespace, "-o", "json", check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None
