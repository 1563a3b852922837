#!/usr/bin/env python3
"""A local Kubernetes control plane for tests and demos.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler and the kwok controller are
started by ``kwokctl --runtime binary`` from the binaries that ``controlplane/build.sh``
puts in the versioned cache. Everything listens on 127.0.0.1 and lives in a private work
dir (on tmpfs when possible); ``~/.kube/config`` is never touched.

    python controlplane/cluster.py up [--demo] [--name N]
    python controlplane/cluster.py down [--name N]
    python controlplane/cluster.py status
    python controlplane/cluster.py node up|down [--name N]   # a real kubelet node (controlplane/node.py)

Stdlib only: the pytest fixtures import this module.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

VERSIONS = "k8s-v1.36.3_etcd-v3.6.16_kwok-v0.8.0"
BINARIES = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "etcd",
    "kwok",
    "kwokctl",
)
HERE = Path(__file__).resolve().parent
AUDIT_POLICY = HERE / "audit-policy.yaml"
DEMO_MANIFEST = HERE.parent / "examples" / "demo-workloads.yaml"
DEMO_LABEL = "app.kubernetes.io/part-of=kubectl-safety-demo"
DOWN_GRACE_SECONDS = 20  # after kwokctl delete, how long the cluster's processes may take to exit
# kwok only manages (heartbeats, runs pods on) nodes carrying this annotation, so a node
# without it can be made NotReady.
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"


class ClusterError(RuntimeError):
    """The control plane could not be found, started or stopped."""


BUILD_WAIT_SECONDS = 90 * 60  # the longest a cold build may take before the tests that need it give up
# scripts/test-all's build stages, in build order: what each test needs waits for its stage only
BUILD_STAGES = ("controlplane", "engines", "prometheus")


def cache_dir(stage: str | None = None) -> Path:
    """Root of the build cache (``$KUBECTL_SAFETY_CACHE``, default ``~/.cache/kubectl-safety``), once ``stage``
    (one of BUILD_STAGES; None: every stage) is built."""
    wait_for_build(stage)
    return Path(os.environ.get("KUBECTL_SAFETY_CACHE") or Path.home() / ".cache" / "kubectl-safety")


def wait_for_build(stage: str | None = None, timeout: float = BUILD_WAIT_SECONDS) -> None:
    """Wait for a stage (None: all) of the build ``scripts/test-all`` runs beside the tests that do not need it.

    ``$KUBECTL_SAFETY_BUILD_STATUS`` names a file that appears with the build chain's exit code when it ends, and
    STATUS.STAGE one per stage when that stage ends (output of all in ``$KUBECTL_SAFETY_BUILD_LOG``). A chain that
    ended without writing the stage's file failed before it. Without that variable nothing is being built: no wait.
    """
    status = os.environ.get("KUBECTL_SAFETY_BUILD_STATUS")
    if not status:
        return
    if stage is not None and stage not in BUILD_STAGES:
        raise ValueError(f"unknown build stage {stage!r} (one of {', '.join(BUILD_STAGES)})")
    stage_status = f"{status}.{stage}" if stage else status
    what = f"the {stage} build" if stage else "the build"
    deadline = time.monotonic() + timeout
    while not (os.path.exists(stage_status) or os.path.exists(status)):
        if time.monotonic() > deadline:
            raise ClusterError(f"{what} (scripts/test-all) did not finish in {timeout:.0f}s")
        time.sleep(2)
    own = os.path.exists(stage_status)
    with open(stage_status if own else status) as f:
        code = f.read().strip()
    if code != "0":
        if not own:  # the chain ended before this stage: an earlier one failed
            what = f"an earlier stage of the build, before {stage},"
        log = os.environ.get("KUBECTL_SAFETY_BUILD_LOG", "")
        tail = Path(log).read_text(errors="replace").splitlines()[-20:] if log and os.path.exists(log) else []
        raise ClusterError(f"{what} failed (exit {code}):\n" + "\n".join(tail))


def default_bin_dir() -> Path:
    """Where build.sh puts the binaries for the pinned versions."""
    return cache_dir("controlplane") / VERSIONS / "bin"


def run_root() -> Path:
    """Parent of cluster work dirs: ``$KUBECTL_SAFETY_RUN_DIR``, else tmpfs, else the cache."""
    if os.environ.get("KUBECTL_SAFETY_RUN_DIR"):
        return Path(os.environ["KUBECTL_SAFETY_RUN_DIR"])
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return shm / f"kubectl-safety-{os.getuid()}"
    return cache_dir("controlplane") / "run"


def missing_binaries(bin_dir: Path) -> list[str]:
    """Names of the required binaries that are not executable files in ``bin_dir``."""
    return [b for b in BINARIES if not os.access(bin_dir / b, os.X_OK)]


def _tail(path: Path, lines: int = 6, width: int = 400) -> str:
    try:
        return "\n".join(line[:width] for line in path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


class Cluster:
    """One kwokctl cluster: ``up()``, ``down()`` and a ``kubectl()`` runner."""

    def __init__(self, name: str = "dev", bin_dir: Path | None = None, root: Path | None = None):
        self.name = name
        self.bin_dir = Path(bin_dir or default_bin_dir())
        self.workdir = Path(root or run_root()) / name
        self.kubeconfig = self.workdir / "kubeconfig"
        self.cluster_dir = self.workdir / "clusters" / name
        self.audit_log = self.cluster_dir / "logs" / "audit.log"

    # -- running commands -------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """Environment for kwokctl/kubectl: our binaries first on PATH, our work dir."""
        env = dict(os.environ)
        env["PATH"] = f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["KWOK_WORKDIR"] = str(self.workdir)
        env["KUBECONFIG"] = str(self.kubeconfig)
        return env

    def _run(self, cmd: list[str], check: bool, input: str | None, timeout: float):
        proc = subprocess.run(
            cmd, input=input, capture_output=True, text=True, env=self.env(), timeout=timeout
        )
        if check and proc.returncode != 0:
            stderr = "\n".join(proc.stderr.strip().splitlines()[-10:])
            raise ClusterError(f"{' '.join(cmd)} failed ({proc.returncode}): {stderr}")
        return proc

    def kwokctl(self, *args: str, check: bool = True, timeout: float = 300):
        """Run the built kwokctl for this cluster."""
        cmd = [str(self.bin_dir / "kwokctl"), "--name", self.name, *args]
        return self._run(cmd, check, None, timeout)

    def kubectl(
        self,
        *args: str,
        as_user: str | None = None,
        as_groups: tuple[str, ...] = (),
        input: str | None = None,
        check: bool = True,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess:
        """Run the built kubectl against this cluster, optionally impersonating a user."""
        cmd = [str(self.bin_dir / "kubectl"), "--kubeconfig", str(self.kubeconfig)]
        if as_user:
            cmd += [f"--as={as_user}", *(f"--as-group={g}" for g in as_groups)]
        return self._run(cmd + list(args), check, input, timeout)

    def apply(self, manifest: str | dict | list) -> None:
        """``kubectl apply`` a YAML/JSON string, one object (dict) or a list of objects."""
        if not isinstance(manifest, str):
            items = manifest if isinstance(manifest, list) else [manifest]
            manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        self.kubectl("apply", "-f", "-", input=manifest)

    # -- lifecycle ------------------------------------------------------------------------

    def is_up(self) -> bool:
        """True when this cluster's API server answers /readyz."""
        if not self.kubeconfig.exists():
            return False
        try:
            out = self.kubectl("get", "--raw", "/readyz", "--request-timeout=5s", check=False, timeout=10)
        except subprocess.TimeoutExpired:
            return False
        return out.returncode == 0 and out.stdout.strip() == "ok"

    def up(self, timeout: float = 180) -> float:
        """Start the cluster (restarting a stale one) and wait until it works; returns seconds."""
        missing = missing_binaries(self.bin_dir)
        if missing:
            raise ClusterError(
                f"missing control-plane binaries in {self.bin_dir}: {', '.join(missing)}; "
                "build them with controlplane/build.sh (10-25 min cold)"
            )
        if self.is_up():
            return 0.0
        if self.workdir.exists():
            self.down()
        self.workdir.mkdir(parents=True)
        config = self.workdir / "kwokctl.yaml"
        config.write_text(json.dumps(self._kwokctl_config(), indent=2))
        # kwokctl picks free ports when it creates a cluster: one creation at a time.
        with exclusive(self.workdir.parent / ".create.lock"):
            start = time.monotonic()
            try:
                self._create(config, deadline=start + timeout)
                self.wait_ready(deadline=start + timeout)
            except (ClusterError, subprocess.TimeoutExpired) as err:
                logs = self._log_tails()
                self.down()
                raise ClusterError(f"cluster {self.name!r} did not start: {err}\n{logs}") from err
        return time.monotonic() - start

    def _create(self, config: Path, deadline: float) -> None:
        """Run ``kwokctl create cluster``, stopping it early if a component dies."""
        log = self.workdir / "kwokctl.log"
        cmd = [str(self.bin_dir / "kwokctl"), "--name", self.name, "create", "cluster",
               "--config", str(config), "--kubeconfig", str(self.kubeconfig)]
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env())
        try:
            self._wait(lambda: proc.poll() is not None, deadline, "kwokctl create cluster")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if proc.returncode != 0:
            raise ClusterError(f"kwokctl create cluster failed ({proc.returncode}):\n{_tail(log, 10)}")

    def _kwokctl_config(self) -> dict:
        """KwokctlConfiguration (JSON is YAML): loopback only, RBAC, admission, audit, our binaries."""
        b = self.bin_dir
        return {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
            "kind": "KwokctlConfiguration",
            "options": {
                "runtime": "binary",
                "bindAddress": "127.0.0.1",
                "kubeAuthorization": True,
                "kubeAdmission": True,
                "kubeAuditPolicy": str(AUDIT_POLICY),
                "kubeApiserverBinary": str(b / "kube-apiserver"),
                "kubeControllerManagerBinary": str(b / "kube-controller-manager"),
                "kubeSchedulerBinary": str(b / "kube-scheduler"),
                "kubectlBinary": str(b / "kubectl"),
                "kwokControllerBinary": str(b / "kwok"),
                "etcdBinary": str(b / "etcd"),
            },
            "componentsPatches": [
                _patch("etcd", {"unsafe-no-fsync": "true"}),
                _patch("kube-apiserver", {"advertise-address": "127.0.0.1"}),
                _patch(
                    "kwok-controller",
                    {"manage-nodes-with-annotation-selector": f"{KWOK_NODE_ANNOTATION}=fake"},
                    override={"manage-all-nodes": "false"},
                ),
            ],
        }

    def wait_ready(self, deadline: float) -> None:
        """Wait for the API, the controller-manager, the scheduler and kwok to do their jobs."""
        self._wait(self.is_up, deadline, "API server /readyz")
        # The serviceaccount controller (controller-manager) creates this one.
        self._wait(lambda: self._output("get", "serviceaccount", "default", "-n", "default", "-o", "name"),
                   deadline, "the default ServiceAccount (kube-controller-manager)")
        # A pod gets scheduled (kube-scheduler) onto a kwok node and runs (kwok); then both go.
        self.apply([_probe_node(), _probe_pod()])
        phase = ("get", "pod/kwok-probe", "-n", "default", "-o", "jsonpath={.status.phase}")
        self._wait(lambda: self._output(*phase) == "Running", deadline, "a probe pod to be scheduled and run")
        self.kubectl("delete", "-n", "default", "pod/kwok-probe", "--grace-period=0", "--force")
        self.kubectl("delete", "node/kwok-probe")

    def _output(self, *args: str) -> str:
        """kubectl's stdout, or "" when it fails."""
        out = self.kubectl(*args, check=False)
        return out.stdout.strip() if out.returncode == 0 else ""

    def _wait(self, check, deadline: float, what: str) -> None:
        """Poll ``check`` until true; fail at once if a component process has exited."""
        while not check():
            dead = self.dead_components()
            if dead:
                raise ClusterError(f"{', '.join(dead)} exited while waiting for {what}")
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out waiting for {what}")
            time.sleep(0.5)

    def dead_components(self) -> list[str]:
        """Components whose process (from kwokctl's pid files) is gone."""
        pid_files = sorted((self.cluster_dir / "pids").glob("*.pid"))
        return [f.stem for f in pid_files if not _alive(f.read_text().strip())]

    def down(self) -> float:
        """Stop its real node, delete the cluster, make sure none of its processes survive, remove the work dir."""
        start = time.monotonic()
        real_node = _real_node_module()
        if real_node.owned_by(self):
            real_node.Node(self).down()
        if self.cluster_dir.exists():
            self.kwokctl("delete", "cluster", "--kubeconfig", str(self.kubeconfig), check=False)
        deadline = time.monotonic() + DOWN_GRACE_SECONDS  # a loaded machine stops components slowly
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.5)
        leftovers = {pid: _cmdline(pid) for pid in self.processes()}
        for pid in leftovers:
            _kill(pid)
        shutil.rmtree(self.workdir, ignore_errors=True)
        if leftovers:  # cleaned up, but say what outlived the cluster (a component, or a client a test left)
            print(f"warning: {self.name}: killed processes that outlived the cluster by {DOWN_GRACE_SECONDS}s: "
                  + "; ".join(f"{pid} {cmd[:120]}" for pid, cmd in leftovers.items()), file=sys.stderr)
        return time.monotonic() - start

    def processes(self) -> list[int]:
        """PIDs of processes whose command line mentions this cluster's work dir."""
        out = subprocess.run(["pgrep", "-f", re.escape(str(self.workdir) + "/")],
                             capture_output=True, text=True)
        return [int(p) for p in out.stdout.split() if int(p) != os.getpid()]

    def _log_tails(self) -> str:
        logs = sorted((self.cluster_dir / "logs").glob("*.log"))
        return "\n".join(f"--- {p.name}\n{_tail(p)}" for p in logs if p.name != "audit.log")

    # -- demo -----------------------------------------------------------------------------

    def load_demo(self, timeout: float = 180) -> None:
        """Apply examples/demo-workloads.yaml (nodes first) and wait for every workload to roll out."""
        nodes, rest = _split_nodes(DEMO_MANIFEST.read_text())
        self.apply(nodes)
        self.kubectl("wait", "node", "-l", DEMO_LABEL, "--for=condition=Ready", f"--timeout={int(timeout)}s",
                     timeout=timeout + 30)
        self.apply(rest)
        names = self.kubectl("get", "deployments,statefulsets,daemonsets", "-A", "-l", DEMO_LABEL, "-o",
                             "jsonpath={range .items[*]}{.metadata.namespace} {.kind}/{.metadata.name}{\"\\n\"}{end}")
        for line in names.stdout.split("\n"):
            if line.strip():
                namespace, name = line.split()
                self.kubectl("rollout", "status", "-n", namespace, name.lower(), f"--timeout={int(timeout)}s",
                             timeout=timeout + 30)


def _real_node_module():
    """controlplane/node.py (imported late: it imports this module)."""
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    from controlplane import node

    return node


def _patch(component: str, args: dict[str, str], override: dict[str, str] | None = None) -> dict:
    extra = [{"key": k, "value": v} for k, v in args.items()]
    extra += [{"key": k, "value": v, "override": True} for k, v in (override or {}).items()]
    return {"name": component, "extraArgs": extra}


def _probe_node() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "kwok-probe",
            "labels": {"kubernetes.io/hostname": "kwok-probe"},
            "annotations": {KWOK_NODE_ANNOTATION: "fake"},
        },
        "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"},
                   "capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}},
    }


def _probe_pod() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "kwok-probe", "namespace": "default"},
        "spec": {"containers": [{"name": "probe", "image": "probe"}],
                 "nodeSelector": {"kubernetes.io/hostname": "kwok-probe"},
                 "tolerations": [{"operator": "Exists"}]},
    }


def _split_nodes(manifest: str) -> tuple[str, str]:
    """Split a multi-document YAML string into (Node documents, the other documents)."""
    docs = [d for d in re.split(r"^---\s*$", manifest, flags=re.M) if d.strip()]
    nodes = [d for d in docs if re.search(r"^kind:\s*Node\s*$", d, flags=re.M)]
    rest = [d for d in docs if d not in nodes]
    return "---\n".join(nodes), "---\n".join(rest)


@contextlib.contextmanager
def exclusive(lock_file: Path):
    """Hold an exclusive lock on ``lock_file`` (blocks other processes using the same file)."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _alive(pid: str) -> bool:
    """True if the process exists and is not a zombie (kwokctl reaps its children late)."""
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except (ValueError, OSError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def _kill(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        time.sleep(2)


def _status() -> int:
    root = run_root()
    clusters = sorted(p.name for p in root.glob("[!.]*") if p.is_dir()) if root.is_dir() else []
    if not clusters:
        print(f"no clusters under {root}")
    for name in clusters:
        c = Cluster(name)
        print(f"{name}: {'up' if c.is_up() else 'DOWN'}  KUBECONFIG={c.kubeconfig}  audit={c.audit_log}")
    missing = missing_binaries(default_bin_dir())
    print(f"binaries: {default_bin_dir()}" + (f" (missing: {', '.join(missing)})" if missing else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start a cluster and print its KUBECONFIG")
    up.add_argument("--demo", action="store_true", help="load examples/demo-workloads.yaml")
    up.add_argument("--name", default="dev")
    down = sub.add_parser("down", help="delete a cluster")
    down.add_argument("--name", default="dev")
    sub.add_parser("status", help="list clusters")
    node = sub.add_parser("node", help="start or stop the real kubelet node of a running cluster (root)")
    node.add_argument("action", choices=("up", "down"))
    node.add_argument("--name", default="dev")
    args = parser.parse_args(argv)

    if args.command == "status":
        return _status()
    cluster = Cluster(args.name)
    if args.command == "node":
        real_node = _real_node_module()
        try:
            if args.action == "down":
                print(f"real node stopped in {real_node.Node(cluster).down():.1f}s", file=sys.stderr)
                return 0
            if not cluster.is_up():
                raise ClusterError(f"cluster {args.name!r} is not up: start it with `cluster.py up --name {args.name}`")
            n = real_node.Node(cluster)
            print(f"real node {n.name!r} Ready in {n.up():.1f}s (taint and label {real_node.LABEL})", file=sys.stderr)
            return 0
        except (ClusterError, real_node.ClusterError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
    try:
        if args.command == "down":
            print(f"cluster {args.name!r} deleted in {cluster.down():.1f}s", file=sys.stderr)
            return 0
        print(f"cluster {args.name!r} ready in {cluster.up():.1f}s", file=sys.stderr)
        if args.demo:
            start = time.monotonic()
            cluster.load_demo()
            print(f"demo workloads running in {time.monotonic() - start:.1f}s", file=sys.stderr)
        print(f"audit log: {cluster.audit_log}", file=sys.stderr)
        print(f"export KUBECONFIG={cluster.kubeconfig}")
        return 0
    except ClusterError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
