"""Run a kubeconfig exec credential plugin (client.authentication.k8s.io) with a deadline.

As client-go runs it: the command with its args and extra env, ``KUBERNETES_EXEC_INFO`` set,
stdin only when interactive; its stdout must be an ``ExecCredential`` whose status has a token
or a client certificate. It gets ``timeout`` seconds and ``limit`` bytes of output; neither its
output nor its stderr is ever shown (they may hold the credential), only what went wrong.
"""

import json
import os
import subprocess

from kubectl_safety.cluster import threads
from kubectl_safety.errors import ClusterError
from kubectl_safety.printable import register_secret

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")


def run(spec: dict, base: str, timeout: float, limit: int, cluster=None) -> dict:
    """The plugin's ``status`` (token, clientCertificateData, clientKeyData); ClusterError on failure."""
    command, api_version = spec.get("command"), spec.get("apiVersion")
    if not command:
        raise ClusterError("invalid kubeconfig: exec plugin has no command")
    if api_version not in API_VERSIONS:
        raise ClusterError(f"invalid kubeconfig: exec plugin apiVersion must be one of {', '.join(API_VERSIONS)}")
    if os.sep in command and not os.path.isabs(command):
        command = os.path.join(base, command)  # client-go: relative to the kubeconfig
    env = dict(os.environ)
    env.update({e["name"]: e.get("value") or "" for e in spec.get("env") or []})
    exec_spec = {"interactive": False, **({"cluster": cluster} if cluster else {})}
    env["KUBERNETES_EXEC_INFO"] = json.dumps({"apiVersion": api_version, "kind": "ExecCredential", "spec": exec_spec})
    name = command
    try:
        proc = subprocess.Popen([command, *(spec.get("args") or [])], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    except OSError as e:
        raise ClusterError(f"exec plugin {name} failed: cannot run it: {e.strerror or e}") from None
    import threading

    box = []
    reader = threads.start(lambda: box.append(_read_output(proc.stdout, limit)), "exec-plugin")
    try:
        reader.join(min(timeout, threading.TIMEOUT_MAX))
        if reader.is_alive() or (box and len(box[0]) > limit):
            _kill(proc)
            if not box or len(box[0]) <= limit:
                raise ClusterError(f"exec plugin {name}: no answer within {timeout:g}s")
        proc.wait(max(0.1, timeout))
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise ClusterError(f"exec plugin {name}: did not exit within {timeout:g}s") from None
    except BaseException:
        _kill(proc)
        raise
    out = box[0]
    if len(out) > limit:
        raise ClusterError(f"exec plugin {name}: output larger than {limit} bytes")
    if proc.returncode != 0:
        raise ClusterError(f"exec plugin {name} failed: exited with status {proc.returncode}")
    try:
        credential = json.loads(out)
    except (ValueError, RecursionError):
        raise ClusterError(f"exec plugin {name}: the output is not an ExecCredential (not JSON)") from None
    status = credential.get("status") if isinstance(credential, dict) else None
    if not isinstance(status, dict) or not any(isinstance(status.get(k), str) and status.get(k)
                                               for k in ("token", "clientCertificateData")):
        raise ClusterError(f"exec plugin {name}: the output has no status.token or status.clientCertificateData")
    for key in ("token", "clientKeyData"):
        if not isinstance(status.get(key, ""), str):
            raise ClusterError(f"exec plugin {name}: status.{key} must be a string")
        register_secret(status.get(key))
    if status.get("token"):
        status["token"] = status["token"].strip()  # a trailing newline would break the header
        if any(c in status["token"] for c in "\r\n\0"):
            raise ClusterError(f"exec plugin {name}: status.token has line breaks")
    return status


def _read_output(pipe, limit: int) -> bytes:
    """The plugin's output until it ends, or the first ``limit + 1`` bytes: read as it comes, in pieces."""
    parts, total = [], 0
    while total <= limit:
        piece = pipe.read1(1 << 16)
        if not piece:
            break
        parts.append(piece)
        total += len(piece)
    return b"".join(parts)


def _kill(proc):
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the plugin and anything it started
    except OSError:
        proc.kill()
    proc.wait()
