"""One real node (kubelet + containerd + runc + CNI bridge) joined to a test cluster.

Machine-wide state (cgroups under ``kubepods``, mounts, network namespaces, a bridge, the
kubelet's port) means one real node per machine: ``up()`` takes a lock, refuses a node that
another live cluster owns, and first wipes whatever a crashed run left. The node registers
with the taint ``kubectl-safety/real-node:NoSchedule`` and the label
``kubectl-safety/real-node=true``, so only pods that tolerate and select it land there.

This machine kind has cgroup v1 only and refuses negative ``oom_score_adj`` to root (no
CAP_SYS_RESOURCE): the kubelet runs with ``failCgroupV1: false`` and containerd clamps OOM
score adjustments at its own (``restrict_oom_score_adj``).

    python controlplane/cluster.py node up [--name N]
    python controlplane/cluster.py node down

Stdlib only: the pytest fixtures import this module.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from controlplane.cluster import Cluster, ClusterError, cache_dir, exclusive

NODE_VERSIONS = "node-k8s-v1.36.3_containerd-v2.3.7_runc-v1.5.2_cni-v1.10.0"
NODE_BINARIES = ("kubelet", "containerd", "containerd-shim-runc-v2", "ctr", "runc",
                 "cni/bridge", "cni/host-local", "cni/loopback")
TAINT_KEY = "kubectl-safety/real-node"
LABEL = f"{TAINT_KEY}=true"
IMAGE_REPO = "kubectl-safety.test"
STATE = Path("/var/lib/kubectl-safety-node")  # containerd's root, the kubelet's root dir, configs, certs
RUN = Path("/run/kubectl-safety-node")         # containerd's state and socket, CNI config and IPAM
LOCK = Path("/run/lock/kubectl-safety-node.lock")
OWNER = RUN / "owner.json"
LOGS = STATE / "logs"  # host dir the test pods mount at /log
BRIDGE = "ksafety0"
POD_SUBNET = "10.244.77.0/24"
KUBELET_PORT = 10250
KUBELET_HEALTHZ_PORT = 10248
CGROUP_ROOT = Path("/sys/fs/cgroup")


def node_bin_dir() -> Path:
    """Where build.sh puts the node's binaries and test images."""
    return cache_dir("controlplane") / NODE_VERSIONS / "bin"


def missing_node_binaries(bin_dir: Path | None = None) -> list[str]:
    bin_dir = Path(bin_dir or node_bin_dir())
    missing = [b for b in NODE_BINARIES if not os.access(bin_dir / b, os.X_OK)]
    return missing + [f"{i} image" for i in ("testapp", "pause") if not list(bin_dir.glob(f"{i}-*.tar"))]


def image_tag(bin_dir: Path | None = None) -> str:
    """The test images' tag (the hash of testapp's sources, as build.sh names the tarballs)."""
    tarballs = sorted(Path(bin_dir or node_bin_dir()).glob("testapp-*.tar"))
    if not tarballs:
        raise ClusterError("no test image: build it with controlplane/build.sh")
    return tarballs[-1].name[len("testapp-"):-len(".tar")]


def testapp_image(bin_dir: Path | None = None) -> str:
    return f"{IMAGE_REPO}/testapp:{image_tag(bin_dir)}"


class Node:
    """The real node of one cluster: ``up()``, ``down()``, ``restart_kubelet(**config)``."""

    def __init__(self, cluster: Cluster, bin_dir: Path | None = None):
        self.cluster = cluster
        self.bin_dir = Path(bin_dir or node_bin_dir())
        self.name = socket.gethostname().lower()
        self.kubelet_config: dict = {}
        self.kubelet_proc: subprocess.Popen | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def up(self, timeout: float = 120, wait_for_other: float = 0, **kubelet_config) -> float:
        """Start the node (after wiping any leftovers) and wait until it is Ready; returns seconds.

        ``wait_for_other``: how long to wait while another live cluster's node holds the machine."""
        missing = missing_node_binaries(self.bin_dir)
        if missing:
            raise ClusterError(f"missing node binaries in {self.bin_dir}: {', '.join(missing)}; "
                               "build them with controlplane/build.sh")
        if os.geteuid() != 0:
            raise ClusterError("a real node needs root (cgroups, mounts, network namespaces)")
        start = time.monotonic()
        while True:
            owner = _owner()
            if not (owner and owner.get("cluster") != str(self.cluster.workdir) and _cluster_alive(owner)):
                break
            if time.monotonic() - start > wait_for_other:
                raise ClusterError(f"the real node is in use by the cluster in {owner['cluster']}")
            time.sleep(2)
        with exclusive(LOCK):
            owner = _owner()
            if owner and owner.get("cluster") != str(self.cluster.workdir) and _cluster_alive(owner):
                raise ClusterError(f"the real node is in use by the cluster in {owner['cluster']}")
            wipe()
            try:
                self._start(start + timeout, kubelet_config)
            except (ClusterError, subprocess.TimeoutExpired, OSError) as err:
                logs = "\n".join(f"--- {p.name}\n{_tail(p)}" for p in sorted(LOGS.glob("*.log")))
                wipe()
                raise ClusterError(f"the real node did not start: {err}\n{logs}") from err
        return time.monotonic() - start

    def down(self) -> float:
        """Stop the kubelet and containerd, kill the pods' processes, wipe the node's state."""
        start = time.monotonic()
        with exclusive(LOCK):
            owner = _owner()
            if owner and owner.get("cluster") not in (None, str(self.cluster.workdir)) and _cluster_alive(owner):
                return 0.0  # another cluster's node: not ours to stop
            wipe()
        if self.cluster.is_up():
            self.cluster.kubectl("delete", "node", self.name, "--ignore-not-found", "--wait=false", check=False)
        return time.monotonic() - start

    def _start(self, deadline: float, kubelet_config: dict) -> None:
        for d in (STATE, RUN, LOGS, STATE / "pki", RUN / "cni" / "net.d"):
            d.mkdir(parents=True, exist_ok=True)
        LOGS.chmod(0o777)
        OWNER.write_text(json.dumps({"cluster": str(self.cluster.workdir),
                                     "kubeconfig": str(self.cluster.kubeconfig), "node": self.name}))
        self._write_credentials()
        self._write_containerd_config()
        self._write_cni_config()
        _spawn("containerd", [str(self.bin_dir / "containerd"), "--config", str(STATE / "containerd.toml")],
               self._env())
        self._wait(lambda: self.ctr("version", check=False).returncode == 0, deadline, "containerd", ("containerd",))
        for image in ("pause", "testapp"):
            self.ctr("images", "import", str(self.bin_dir / f"{image}-{image_tag(self.bin_dir)}.tar"))
        self.start_kubelet(deadline, **kubelet_config)

    def start_kubelet(self, deadline: float | None = None, **config) -> None:
        """(Re)start the kubelet with the base config updated by ``config``; wait until the node is Ready."""
        deadline = deadline or time.monotonic() + 90
        self.stop_kubelet()
        self.kubelet_config = config
        (STATE / "kubelet.json").write_text(json.dumps(self._kubelet_config(config), indent=2))
        self.kubelet_proc = _spawn("kubelet", [
            str(self.bin_dir / "kubelet"),
            f"--config={STATE / 'kubelet.json'}",
            f"--kubeconfig={STATE / 'kubelet.kubeconfig'}",
            f"--root-dir={STATE / 'kubelet'}",
            f"--cert-dir={STATE / 'kubelet' / 'pki'}",
            f"--hostname-override={self.name}",
            f"--node-ip={_node_ip()}",
            f"--node-labels={LABEL}",
            "--v=2",
        ], self._env())
        started = time.monotonic()
        self._wait(self._ready_since(started), deadline, f"node {self.name} Ready")

    def stop_kubelet(self) -> None:
        for pid in _pids_matching(str(STATE / "kubelet.json")):
            _kill(pid, grace=10)
        self.kubelet_proc = None

    def _ready_since(self, started: float):
        """A check: the node is Ready, with a Ready heartbeat newer than ``started`` (a restarted kubelet)."""
        wall = time.time() - (time.monotonic() - started) - 1

        def check() -> bool:
            out = self.cluster.kubectl("get", "node", self.name, "-o", "json", check=False)
            if out.returncode != 0:
                return False
            for cond in json.loads(out.stdout).get("status", {}).get("conditions", []):
                if cond["type"] == "Ready":
                    beat = time.mktime(time.strptime(cond["lastHeartbeatTime"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
                    return cond["status"] == "True" and beat >= int(wall)
            return False
        return check

    def _wait(self, check, deadline: float, what: str, components=("containerd", "kubelet")) -> None:
        while not check():
            dead = [name for name in components if not _pids_matching(_marker(name))]
            if dead:
                raise ClusterError(f"{', '.join(dead)} exited while waiting for {what}")
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out waiting for {what}")
            time.sleep(0.3)

    # -- helpers --------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env.pop("KUBECONFIG", None)
        return env

    def ctr(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        """Run the built ctr against the node's containerd, namespace k8s.io."""
        cmd = [str(self.bin_dir / "ctr"), "--address", str(RUN / "containerd" / "containerd.sock"),
               "--namespace", "k8s.io", *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=self._env())
        if check and proc.returncode != 0:
            raise ClusterError(f"ctr {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
        return proc

    def _write_credentials(self) -> None:
        """A client certificate ``system:node:<name>`` signed by the cluster's CA, and a kubeconfig."""
        pki = self.cluster.cluster_dir / "pki"
        ca_crt, ca_key = pki / "ca.crt", pki / "ca.key"
        if not ca_crt.exists() or not ca_key.exists():
            raise ClusterError(f"the cluster's CA is not in {pki}")
        out = STATE / "pki"
        key, csr, crt = out / "kubelet.key", out / "kubelet.csr", out / "kubelet.crt"
        _run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
              "-subj", f"/O=system:nodes/CN=system:node:{self.name}"])
        _run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca_crt), "-CAkey", str(ca_key),
              "-CAcreateserial", "-CAserial", str(out / "ca.srl"), "-out", str(crt), "-days", "2"])
        shutil.copy(ca_crt, out / "ca.crt")
        server = json.loads(self.cluster.kubectl("config", "view", "--raw", "-o", "json").stdout)["clusters"][0][
            "cluster"]["server"]
        (STATE / "kubelet.kubeconfig").write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "node",
            "clusters": [{"name": "test", "cluster": {"server": server, "certificate-authority": str(out / "ca.crt")}}],
            "users": [{"name": "node", "user": {"client-certificate": str(crt), "client-key": str(key)}}],
            "contexts": [{"name": "node", "context": {"cluster": "test", "user": "node"}}],
        }))

    def _write_containerd_config(self) -> None:
        cri_runtime = "plugins.'io.containerd.cri.v1.runtime'"
        (STATE / "containerd.toml").write_text(f"""version = 3
root = "{STATE / 'containerd'}"
state = "{RUN / 'containerd'}"

[grpc]
  address = "{RUN / 'containerd' / 'containerd.sock'}"

[{cri_runtime}]
  restrict_oom_score_adj = true
  enable_cdi = false
  [{cri_runtime}.containerd]
    default_runtime_name = "runc"
    [{cri_runtime}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri_runtime}.containerd.runtimes.runc.options]
        BinaryName = "{self.bin_dir / 'runc'}"
        SystemdCgroup = false
  [{cri_runtime}.cni]
    bin_dirs = ["{self.bin_dir / 'cni'}"]
    conf_dir = "{RUN / 'cni' / 'net.d'}"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "{IMAGE_REPO}/pause:{image_tag(self.bin_dir)}"

[plugins.'io.containerd.grpc.v1.cri']
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[plugins.'io.containerd.nri.v1.nri']
  disable = true
""")

    def _write_cni_config(self) -> None:
        (RUN / "cni" / "net.d" / "10-kubectl-safety.conflist").write_text(json.dumps({
            "cniVersion": "1.0.0", "name": "kubectl-safety",
            "plugins": [{"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False,
                         "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_SUBNET}]],
                                  "dataDir": str(RUN / "cni" / "ipam")}}],
        }))

    @staticmethod
    def base_eviction_hard() -> dict:
        """Hard eviction thresholds low enough that a busy shared machine does not evict test pods."""
        return {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%",
                "nodefs.inodesFree": "1%"}

    def _kubelet_config(self, overrides: dict) -> dict:
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "failCgroupV1": False,
            "failSwapOn": False,
            "cgroupDriver": "cgroupfs",
            "containerRuntimeEndpoint": f"unix://{RUN / 'containerd' / 'containerd.sock'}",
            "address": "127.0.0.1",
            "port": KUBELET_PORT,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": KUBELET_HEALTHZ_PORT,
            # The test API server has no kubelet client certificate: logs/exec reach the kubelet
            # anonymously, on 127.0.0.1 only (a throwaway test machine).
            "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False},
                               "x509": {"clientCAFile": str(STATE / "pki" / "ca.crt")}},
            "authorization": {"mode": "AlwaysAllow"},
            "registerWithTaints": [{"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}],
            "imageGCHighThresholdPercent": 100,  # the images exist only locally
            "imageGCLowThresholdPercent": 99,
            "evictionHard": self.base_eviction_hard(),
            "evictionPressureTransitionPeriod": "5s",
            "resolvConf": "",
            "serializeImagePulls": False,
            "shutdownGracePeriod": "0s",
            "localStorageCapacityIsolation": True,
        }
        config.update(overrides)
        return config


# -- machine-wide state -----------------------------------------------------------------------


def wipe() -> None:
    """Remove every trace of a real node: processes, pods' processes, mounts, netns, bridge, cgroups, state."""
    for name in ("kubelet", "containerd"):
        for pid in _pids_matching(_marker(name)):
            _kill(pid, grace=5)
    for pid in _pids_matching(str(RUN / "containerd")):  # shims
        _kill(pid, grace=0)
    _kill_cgroup_tasks()
    for mount in reversed(_mounts()):
        if mount.startswith((str(STATE), str(RUN), "/run/netns/cni-", "/var/run/netns/cni-")):
            subprocess.run(["umount", "-l", mount], capture_output=True)
    for netns in Path("/run/netns").glob("cni-*"):
        netns.unlink(missing_ok=True)
    subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)
    _remove_cgroups()
    shutil.rmtree(RUN, ignore_errors=True)
    shutil.rmtree(STATE, ignore_errors=True)


def _marker(component: str) -> str:
    """The command-line argument that identifies our ``component`` process."""
    return str(STATE / ("containerd.toml" if component == "containerd" else "kubelet.json"))


def _kubepods_dirs() -> list[Path]:
    dirs = []
    for hierarchy in CGROUP_ROOT.iterdir() if CGROUP_ROOT.is_dir() else []:
        top = hierarchy / "kubepods"
        if top.is_dir():
            dirs += sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [top]
    return dirs


def _kill_cgroup_tasks() -> None:
    for _ in range(10):
        pids = set()
        for d in _kubepods_dirs():
            with contextlib.suppress(OSError):
                pids |= {int(p) for p in (d / "cgroup.procs").read_text().split()}
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.3)


def _remove_cgroups() -> None:
    for d in _kubepods_dirs():
        with contextlib.suppress(OSError):
            d.rmdir()


def _mounts() -> list[str]:
    mounts = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mounts.append(line.split()[4].replace("\\040", " "))
    return mounts


def _pids_matching(marker: str) -> list[int]:
    """PIDs of processes with ``marker`` in their command line (not this process)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            pids.append(int(proc.name))
    return pids


def _kill(pid: int, grace: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM if grace else signal.SIGKILL)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                return
            if state == "Z":
                return
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)


def _spawn(name: str, cmd: list[str], env: dict) -> subprocess.Popen:
    """Start a daemon in its own session, logging to LOGS/<name>.log; it outlives this process."""
    with open(LOGS / f"{name}.log", "a") as log:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, cwd=STATE)


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ClusterError(f"{cmd[0]} failed: {proc.stderr.strip()[-500:]}")


def _node_ip() -> str:
    """An IPv4 address of this machine that is not loopback (the kubelet refuses a loopback --node-ip)."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        addr = line.split()[3].split("/")[0]
        if not ipaddress.ip_address(addr).is_loopback and not ipaddress.ip_address(addr) in ipaddress.ip_network(
                POD_SUBNET):
            return addr
    raise ClusterError("no non-loopback IPv4 address for the node's InternalIP")


def owned_by(cluster: Cluster) -> bool:
    """True when the real node on this machine belongs to ``cluster``."""
    return _owner().get("cluster") == str(cluster.workdir)


def _owner() -> dict:
    try:
        return json.loads(OWNER.read_text())
    except (OSError, ValueError):
        return {}


def _cluster_alive(owner: dict) -> bool:
    """True when the cluster that owns the node still answers."""
    kubeconfig = Path(owner.get("kubeconfig", ""))
    return kubeconfig.is_file() and bool(_pids_matching(_marker("kubelet")))


def _tail(path: Path, lines: int = 8, width: int = 300) -> str:
    try:
        return "\n".join(line[:width] for line in path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
