"""Kubeconfig (and in-cluster) resolution without importing the kubernetes client.

Importing the kubernetes client costs ~0.4 s, several times what a node-scoped command needs.
Kubeconfigs whose user holds a token, a token file, a client certificate, a username/password
or an exec plugin, and pods' in-cluster config, are resolved here; auth-provider plugins and
proxies return ``None`` and the kubernetes client handles them.

Every file is checked against the types of client-go's ``clientcmd/api/v1`` first, as kubectl
decodes it: ``insecure-skip-tls-verify: "false"`` (a string) is an error, not a true value.
Rules as kubectl applies them: files of ``KUBECONFIG`` are merged, the first file defining a
name (or ``current-context``) wins; relative paths are relative to the file that names them;
inline ``*-data`` wins over the file; ``token`` wins over ``tokenFile``. Credentials are
registered with ``printable.register_secret`` so no message shows them; key material goes to an
anonymous in-memory file (Linux), else to a 0600 file in a private directory removed as soon as
the TLS context holds it, and at exit.
"""

import base64
import os
from dataclasses import field

from kubectl_safety.cluster.files import read_limited
from kubectl_safety.errors import ClusterError
from kubectl_safety.printable import register_secret
from kubectl_safety.record import record

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
MAX_FILE = 16 * 1024 * 1024  # a kubeconfig, CA bundle, certificate or token file
EXEC_TIMEOUT = 60.0  # seconds an exec credential plugin may take (KUBECTL_SAFETY_EXEC_TIMEOUT)
MAX_EXEC_OUTPUT = 1024 * 1024

# client-go clientcmd/api/v1 field types (YAML is decoded as JSON into these Go structs).
S, B, BYTES, STRS = "string", "boolean", "base64 data", "list of strings"
CLUSTER = {"server": S, "tls-server-name": S, "insecure-skip-tls-verify": B, "certificate-authority": S,
           "certificate-authority-data": BYTES, "proxy-url": S, "disable-compression": B, "extensions": list}
EXEC = {"command": S, "args": STRS, "env": [{"name": S, "value": S}], "apiVersion": S, "installHint": S,
        "provideClusterInfo": B, "interactiveMode": S}
USER = {"client-certificate": S, "client-certificate-data": BYTES, "client-key": S, "client-key-data": BYTES,
        "token": S, "tokenFile": S, "as": S, "as-uid": S, "as-groups": STRS, "as-user-extra": dict,
        "username": S, "password": S, "auth-provider": {"name": S, "config": dict}, "exec": EXEC,
        "extensions": list}
CONTEXT = {"cluster": S, "user": S, "namespace": S, "extensions": list}
CONFIG = {"kind": S, "apiVersion": S, "preferences": dict, "current-context": S, "extensions": list,
          "clusters": [{"name": S, "cluster": CLUSTER}], "users": [{"name": S, "user": USER}],
          "contexts": [{"name": S, "context": CONTEXT}]}


@record(frozen=False, slots=False)
class Endpoint:
    """Where the API server is and how to authenticate."""

    host: str
    namespace: str = None
    verify: bool = True
    ca_file: str = None
    ca_data: str = None  # PEM text
    cert_file: str = None
    key_file: str = None
    tls_server_name: str = None
    authorization: str = field(default=None, repr=False)  # the Authorization header value
    impersonate: str = None  # the user's ``as``, ``as-groups``, ``as-uid`` (flags override them)
    impersonate_groups: tuple = ()
    impersonate_uid: str = None
    refresh: object = field(default=None, repr=False)  # () -> a new Authorization value (exec plugins)


def kubeconfig_paths(path=None) -> list:
    """The files to merge: ``--kubeconfig``, else ``$KUBECONFIG`` (existing ones), else ``~/.kube/config``."""
    if path:
        return [path]
    env = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if env:
        return [p for p in env if os.path.exists(p)]
    default = os.path.expanduser("~/.kube/config")
    return [default] if os.path.exists(default) else []


def resolve(path=None, context=None, overrides=None, request_timeout=0.0):
    """The ``Endpoint`` of the chosen context (or in-cluster), or None when the kubernetes client must decide.

    ``overrides``: kubectl's connection flags (``cluster user server token certificate_authority
    client_certificate client_key tls_server_name insecure_skip_tls_verify``), applied after the
    context is resolved, as kubectl's ConfigOverrides are. ``request_timeout`` (seconds, 0: none)
    also bounds an exec credential plugin's run. An invalid kubeconfig raises
    ``ClusterError`` naming the file and the field.
    """
    paths = kubeconfig_paths(path)
    if not paths and not overrides:
        return in_cluster() if os.environ.get("KUBERNETES_SERVICE_HOST") else None
    merged = _merge(paths) if paths else None
    if any(os.environ.get(v) for v in PROXY_VARIABLES):
        return None
    if overrides:
        return _overridden(merged, context, overrides, request_timeout)
    return _endpoint(merged, context, request_timeout)


def context_names(path=None) -> list:
    """The context names of the kubeconfig files kubectl would merge (read bounded, like every kubeconfig)."""
    paths = kubeconfig_paths(path)
    return list(_merge(paths)["contexts"]) if paths else []


def context_name(path=None, context=None):
    """The context a connection uses: ``context`` (--context), else the kubeconfig's current-context
    (None without a kubeconfig, as in a pod)."""
    if context:
        return context
    paths = kubeconfig_paths(path)
    return _merge(paths)["current-context"] if paths else None


def context_user(path=None, context=None):
    """The user name of ``context`` (else of the current context) in the merged kubeconfig files;
    None without a kubeconfig or a user."""
    paths = kubeconfig_paths(path)
    if not paths:
        return None
    merged = _merge(paths)
    entry = merged["contexts"].get(context) or merged["contexts"].get(merged["current-context"])
    return (entry[0] if entry else {}).get("user") or None


def in_cluster():
    """A pod's config: the service account token and CA, ``KUBERNETES_SERVICE_HOST``/``_PORT``."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port.isdigit():
        raise ClusterError("in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")
    token = _read(os.path.join(SERVICE_ACCOUNT_DIR, "token"), "in-cluster token").strip()
    if not token:
        raise ClusterError(f"in-cluster config: {SERVICE_ACCOUNT_DIR}/token is empty")
    register_secret(token)
    ca = _read(os.path.join(SERVICE_ACCOUNT_DIR, "ca.crt"), "in-cluster CA")
    ns_file = os.path.join(SERVICE_ACCOUNT_DIR, "namespace")
    namespace = _read(ns_file, "in-cluster namespace").strip() if os.path.exists(ns_file) else None
    server = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"
    return Endpoint(host=server, namespace=namespace or None, ca_data=ca, authorization=f"Bearer {token}")


def _read(path, what) -> str:
    try:
        return read_limited(path, MAX_FILE).decode("utf-8")
    except UnicodeDecodeError:
        raise ClusterError(f"{what} {path}: not UTF-8 text") from None
    except OSError as e:
        raise ClusterError(f"{what} {path}: {e.strerror or e}") from None


def _merge(paths):
    """Named entries (first definition wins, with the file it came from) and current-context."""
    import yaml

    from kubectl_safety.cluster.dump import safe_yaml

    merged = {"clusters": {}, "users": {}, "contexts": {}, "current-context": None}
    empty = []
    for p in paths:
        text = _read(p, "kubeconfig")
        try:
            doc = safe_yaml(text)
        except (yaml.YAMLError, ValueError, RecursionError) as e:
            mark = getattr(e, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark else ""
            raise ClusterError(f"invalid kubeconfig {p}: not valid YAML{where}") from None
        if doc is None:
            empty.append(p)
            continue
        _check(doc, CONFIG, "", p)
        base = os.path.dirname(os.path.abspath(p))
        for section, key in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            for entry in doc.get(section) or []:
                name = entry.get("name")
                if not name:
                    raise ClusterError(f"invalid kubeconfig {p}: an entry of {section} has no name")
                if name not in merged[section]:
                    merged[section][name] = (entry.get(key) or {}, base, p)
        if not merged["current-context"] and doc.get("current-context"):
            merged["current-context"] = doc["current-context"]
    if len(empty) == len(paths):
        raise ClusterError(f"invalid kubeconfig {', '.join(paths)}: the file is empty")
    for _, user in ((n, u) for n, (u, _b, _p) in merged["users"].items()):
        register_secret(user.get("token"))
        register_secret(user.get("password"))
    return merged


# -- kubectl's connection flags (ConfigOverrides) ---------------------------------------------------

class OverrideError(Exception):
    """A connection flag names something the kubeconfig does not define (one line for the user)."""


def _overridden(merged, context, o, request_timeout=0.0):
    """The context with ``--cluster``/``--user`` swapped in, then the other flags on top."""
    merged = merged or {"clusters": {}, "users": {}, "contexts": {}, "current-context": None}
    for section, key in (("clusters", "cluster"), ("users", "user")):
        if o.get(key) and o[key] not in merged[section]:
            raise OverrideError(f'{key} "{o[key]}" (--{key}) is not defined in the kubeconfig')
    name = context or merged["current-context"]
    ctx, base, where = merged["contexts"].get(name, ({}, "", "")) if name else ({}, "", "")
    ctx = dict(ctx, **{k: o[k] for k in ("cluster", "user") if o.get(k)})
    cluster_entry = merged["clusters"].get(ctx.get("cluster"), ({}, "", ""))
    cluster = dict(cluster_entry[0])
    user_entry = merged["users"].get(ctx.get("user"), ({}, "", ""))
    user = dict(user_entry[0])
    if o.get("server"):
        cluster["server"] = o["server"]
    if o.get("certificate_authority"):
        cluster.pop("certificate-authority-data", None)
        cluster["certificate-authority"] = os.path.abspath(o["certificate_authority"])
    if o.get("tls_server_name"):
        cluster["tls-server-name"] = o["tls_server_name"]
    if o.get("insecure_skip_tls_verify"):
        cluster["insecure-skip-tls-verify"] = True
    for flag, key in (("client_certificate", "client-certificate"), ("client_key", "client-key")):
        if o.get(flag):
            user.pop(key + "-data", None)
            user[key] = os.path.abspath(o[flag])
    if o.get("token"):
        user = {k: v for k, v in user.items() if k not in ("tokenFile", "exec", "auth-provider", "username", "password")}
        user["token"] = o["token"]
        register_secret(o["token"])
    one = {"clusters": {"c": (cluster, *cluster_entry[1:])}, "users": {"u": (user, *user_entry[1:])},
           "contexts": {"x": ({"cluster": "c", "user": "u", "namespace": ctx.get("namespace")}, base, where)},
           "current-context": "x"}
    return _endpoint(one, "x", request_timeout)


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "a list", dict: "a map"}.get(type(value), type(value).__name__)


def _check(value, schema, where, path):
    """Raise ClusterError where ``value`` is not of the Go type ``schema`` (null is the zero value)."""
    if value is None:
        return
    if isinstance(schema, dict) or schema is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            _bad(where, "a map", value, path)
        for key, sub in (schema.items() if isinstance(schema, dict) else ()):
            if key in value:
                _check(value[key], sub, f"{where}.{key}" if where else key, path)
    elif isinstance(schema, list) or schema is list:
        if not isinstance(value, list):
            _bad(where, "a list", value, path)
        for i, item in enumerate(value if isinstance(schema, list) else ()):
            _check(item, schema[0], f"{where}[{i}]", path)
    elif schema == S and not isinstance(value, str):
        _bad(where, "a string", value, path)
    elif schema == B and not isinstance(value, bool):
        _bad(where, "true or false", value, path)
    elif schema == STRS and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        _bad(where, "a list of strings", value, path)
    elif schema == BYTES:
        if not isinstance(value, str):
            _bad(where, "base64 data (a string)", value, path)
        try:
            base64.b64decode(value, validate=True)
        except ValueError:
            raise ClusterError(f"invalid kubeconfig {path}: {where} is not valid base64 data") from None


def _bad(where, wanted, value, path):
    raise ClusterError(f"invalid kubeconfig {path}: {where or 'the file'} must be {wanted}, not {_kind(value)}")


def _endpoint(merged, context, request_timeout=0.0):
    name = context or merged["current-context"]
    if not name:
        raise ClusterError("invalid kubeconfig: no current-context is set: pass --context NAME")
    if name not in merged["contexts"]:
        raise ClusterError(f'invalid kubeconfig: context "{name}" not found')
    ctx, _, _ = merged["contexts"][name]
    for section, key in (("clusters", "cluster"), ("users", "user")):
        wanted = ctx.get(key)
        if wanted and wanted not in merged[section]:
            raise ClusterError(f'invalid kubeconfig: {key} "{wanted}" of context "{name}" is not defined')
    if not ctx.get("cluster"):
        raise ClusterError(f'invalid kubeconfig: context "{name}" names no cluster')
    cluster, cluster_base, cluster_path = merged["clusters"][ctx["cluster"]]
    user, user_base, _ = merged["users"].get(ctx.get("user"), ({}, "", ""))
    if user.get("auth-provider") or cluster.get("proxy-url"):
        return None  # the kubernetes client's plugins and proxies
    if not cluster.get("server"):
        raise ClusterError(f'invalid kubeconfig {cluster_path}: cluster "{ctx["cluster"]}" has no server')
    host = cluster["server"].rstrip("/")
    if not host.startswith(("https://", "http://")):
        host = "https://" + host  # client-go's default scheme
    ep = Endpoint(host=host, namespace=ctx.get("namespace") or None,
                  verify=not cluster.get("insecure-skip-tls-verify", False),
                  tls_server_name=cluster.get("tls-server-name") or None,
                  impersonate=user.get("as") or None, impersonate_groups=tuple(user.get("as-groups") or ()),
                  impersonate_uid=user.get("as-uid") or None)
    if host.startswith("https"):  # files are read here (regular files, bounded), never handed to ssl by name
        ep.ca_data = _data(cluster, "certificate-authority-data")
        ca_file = None if ep.ca_data else _file(cluster, "certificate-authority", cluster_base)
        if ca_file:
            ep.ca_data = _read(ca_file, "certificate-authority")
        if ep.ca_data and "-----BEGIN CERTIFICATE-----" not in ep.ca_data:
            raise ClusterError(f"invalid kubeconfig {cluster_path}: the certificate authority is not a PEM certificate")
        ep.cert_file = _file_or_data(user, "client-certificate", user_base)
        ep.key_file = _file_or_data(user, "client-key", user_base)
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = _read(_file(user, "tokenFile", user_base), "token file").strip()
        register_secret(token)
    if token:
        ep.authorization = f"Bearer {token}"
    elif user.get("exec"):
        from kubectl_safety.cluster.exec_plugin import run

        def refresh():
            info = _cluster_info(cluster, host) if user["exec"].get("provideClusterInfo") else None
            timeout = min(exec_timeout(), request_timeout) if request_timeout else exec_timeout()
            credential = run(user["exec"], user_base, timeout, MAX_EXEC_OUTPUT, info)
            if credential.get("clientCertificateData") and host.startswith("https"):
                ep.cert_file = in_memory_file(credential["clientCertificateData"].encode())
                ep.key_file = in_memory_file((credential.get("clientKeyData") or "").encode())
            return f"Bearer {credential['token']}" if credential.get("token") else None

        ep.authorization, ep.refresh = refresh(), refresh
    elif "username" in user and "password" in user:
        basic = base64.b64encode(f"{user['username']}:{user['password']}".encode()).decode()
        register_secret(basic)
        ep.authorization = f"Basic {basic}"
    return ep


def _cluster_info(cluster, host) -> dict:
    """The ``spec.cluster`` an exec plugin asked for (``provideClusterInfo``), as client-go fills it."""
    info = {"server": host, "tls-server-name": cluster.get("tls-server-name"),
            "insecure-skip-tls-verify": bool(cluster.get("insecure-skip-tls-verify")),
            "certificate-authority-data": cluster.get("certificate-authority-data"), "proxy-url": cluster.get("proxy-url")}
    for extension in cluster.get("extensions") or []:
        if isinstance(extension, dict) and extension.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = extension.get("extension")
    return {k: v for k, v in info.items() if v not in (None, "")}


def exec_timeout() -> float:
    text = os.environ.get("KUBECTL_SAFETY_EXEC_TIMEOUT", "")
    try:
        value = float(text) if text else EXEC_TIMEOUT
    except ValueError:
        raise ClusterError(f"KUBECTL_SAFETY_EXEC_TIMEOUT={text!r}: not a number of seconds") from None
    return value if value > 0 and value == value else EXEC_TIMEOUT


def _data(section, key):
    value = section.get(key)
    if not value:
        return None
    try:
        return base64.b64decode(value, validate=True).decode()
    except UnicodeDecodeError:
        raise ClusterError(f"invalid kubeconfig: {key} is not PEM text") from None


def _file(section, key, base):
    value = section.get(key)
    if not value:
        return None
    path = value if os.path.isabs(value) else os.path.join(base, value)
    if not os.path.exists(path):
        raise ClusterError(f"invalid kubeconfig: {key} {path}: no such file")
    return path


def _file_or_data(section, key, base):
    """A path for a certificate or key, inline or read from its file: an in-memory (else private) file."""
    data = section.get(key + "-data")
    if data:
        content = base64.b64decode(data, validate=True)
        if key == "client-key":
            register_secret(data)
    else:
        path = _file(section, key, base)
        if not path:
            return None
        content = _read(path, key).encode()
    if key == "client-key":
        register_secret(content.decode("utf-8", "replace"))
    return in_memory_file(content)


_KEEP = {}  # content -> its file; in-memory files stay open (their /proc/self/fd path) until the process ends


def in_memory_file(content: bytes) -> str:
    """A path whose file holds ``content``: an anonymous memory file, else 0600 in a private directory.
    The same content is one file, however many times a kubeconfig is loaded in the process."""
    if content in _KEEP:
        return _KEEP[content]
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        try:
            fd = os.memfd_create("kubectl-safety", 0)
        except OSError:
            fd = None
        if fd is not None:
            os.write(fd, content)
            _KEEP[content] = f"/proc/self/fd/{fd}"
            return _KEEP[content]
    import tempfile

    fd, path = tempfile.mkstemp(dir=_private_dir(), suffix=".pem")  # mode 0600
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    _KEEP[content] = path
    return path


def forget_private_files():
    """Remove the private directory (when the TLS context holds the keys, and at exit)."""
    if not _PRIVATE:  # the usual case (keys are passed as /proc/self/fd files): shutil not imported
        return
    import shutil

    for content in [c for c, path in _KEEP.items() if not path.startswith("/proc/self/fd/")]:
        del _KEEP[content]  # its file goes with the directory

    while _PRIVATE:
        shutil.rmtree(_PRIVATE.pop(), True)


_PRIVATE = []


def _private_dir():
    if not _PRIVATE:
        import atexit
        import tempfile

        _PRIVATE.append(tempfile.mkdtemp(prefix="kubectl-safety-"))  # mode 0700
        atexit.register(forget_private_files)
    return _PRIVATE[0]
