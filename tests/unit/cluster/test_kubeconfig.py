"""Kubeconfig resolution without the kubernetes client: what it serves, and what it leaves to the client."""

import base64
import json
import os
import stat
from dataclasses import dataclass, field

import pytest

from kubectl_safety.cluster import kubeconfig
from kubectl_safety.errors import ClusterError


def config(user=None, cluster=None, context=None, current="x", name="x", user_name="u", cluster_name="c") -> dict:
    cfg = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": cluster_name, "cluster": {"server": "https://10.0.0.1:6443/", **(cluster or {})}}],
           "users": [{"name": user_name, "user": user if user is not None else {"token": "t0k"}}],
           "contexts": [{"name": name, "context": {"cluster": cluster_name, "user": user_name, **(context or {})}}]}
    if current:
        cfg["current-context"] = current
    return cfg


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@dataclass
class Case:
    id: str
    files: dict  # file name -> config dict or text
    expect: dict = None  # Endpoint fields, or None: left to the kubernetes client
    context: str = None
    env: dict = field(default_factory=dict)
    kubeconfig_env: list = None  # file names for $KUBECONFIG (else --kubeconfig first file)
    error: str = None  # regex of the ClusterError


CASES = [
    Case("token", {"a": config()}, {"host": "https://10.0.0.1:6443", "authorization": "Bearer t0k"}),
    Case("token-file-relative-to-its-kubeconfig", {"a": config({"tokenFile": "tok"}), "tok": "from-file\n"},
         {"authorization": "Bearer from-file"}),
    Case("token-wins-over-token-file", {"a": config({"token": "tok-inline-3", "tokenFile": "tok"}), "tok": "file"},
         {"authorization": "Bearer tok-inline-3"}),
    Case("basic-auth", {"a": config({"username": "ann", "password": "pw"})},
         {"authorization": "Basic " + b64("ann:pw")}),
    Case("client-certificate-files", {"a": config({"client-certificate": "c.crt", "client-key": "c.key"}),
                                      "c.crt": "CERT", "c.key": "KEY"},
         {"cert_file": "@MEM@CERT", "key_file": "@MEM@KEY", "authorization": None}),
    Case("ca-file-and-namespace", {"a": config(cluster={"certificate-authority": "ca.crt"}, context={"namespace": "shop"}),
                                   "ca.crt": "-----BEGIN CERTIFICATE-----\nCA"},
         {"ca_data": "-----BEGIN CERTIFICATE-----\nCA", "namespace": "shop"}),
    Case("ca-data", {"a": config(cluster={"certificate-authority-data": b64("-----BEGIN CERTIFICATE-----\nx\n")})},
         {"ca_data": "-----BEGIN CERTIFICATE-----\nx\n", "ca_file": None}),
    Case("insecure-and-tls-server-name", {"a": config(cluster={"insecure-skip-tls-verify": True,
                                                               "tls-server-name": "api.internal"})},
         {"verify": False, "tls_server_name": "api.internal"}),
    Case("plain-http-ignores-tls-fields", {"a": config(cluster={"server": "http://127.0.0.1:8080",
                                                                "certificate-authority": "missing.crt"})},
         {"host": "http://127.0.0.1:8080", "ca_file": None}),
    Case("impersonation-from-the-user", {"a": config({"token": "t0k", "as": "bob", "as-groups": ["g1", "g2"],
                                                      "as-uid": "u-1"})},
         {"impersonate": "bob", "impersonate_groups": ("g1", "g2"), "impersonate_uid": "u-1"}),
    Case("context-flag", {"a": config(name="other", current="x")}, {"host": "https://10.0.0.1:6443"}, context="other"),
    Case("merge-first-file-wins", {"a": config({"token": "tok-first-1"}, current="x"), "b": config({"token": "tok-second-2"}, current="y")},
         {"authorization": "Bearer tok-first-1"}, kubeconfig_env=["a", "b"]),
    Case("merge-current-context-from-a-later-file", {"a": config({"token": "tok-first-1"}, current=None),
                                                      "b": config({"token": "tok-second-2"}, current="x")},
         {"authorization": "Bearer tok-first-1"}, kubeconfig_env=["a", "b"]),
    Case("merge-skips-missing-files", {"a": config()}, {"authorization": "Bearer t0k"}, kubeconfig_env=["none", "a"]),
    Case("exec-plugin", {"a": config({"exec": {"command": "/bin/sh", "apiVersion": "client.authentication.k8s.io/v1",
                                               "args": ["-c", "echo '{\"status\": {\"token\": \"ex\"}}'"]}})},
         {"authorization": "Bearer ex"}),
    Case("exec-plugin-gets-cluster-info", {"a": config({"exec": {
        "command": "/bin/sh", "apiVersion": "client.authentication.k8s.io/v1", "provideClusterInfo": True,
        "args": ["-c", "printf '{\"status\": {\"token\": \"%s\"}}' \"$(echo $KUBERNETES_EXEC_INFO | "
                 "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"spec\"][\"cluster\"][\"server\"])')\""]}})},
         {"authorization": "Bearer https://10.0.0.1:6443"}),
    # left to the kubernetes client: auth-provider plugins and proxies
    Case("auth-provider", {"a": config({"auth-provider": {"name": "oidc"}})}),
    Case("proxy-url", {"a": config(cluster={"proxy-url": "http://proxy:3128"})}),
    Case("proxy-environment", {"a": config()}, env={"HTTPS_PROXY": "http://proxy:3128"}),
    # errors, worded as kubectl words them
    Case("no-current-context", {"a": config(current=None)}, error="no current-context"),
    Case("unknown-context", {"a": config()}, context="nope", error='context "nope" not found'),
    Case("unknown-user", {"a": config(context={"user": "nobody"})}, error='user "nobody" of context "x" is not defined'),
    Case("missing-ca-file", {"a": config(cluster={"certificate-authority": "none.crt"})}, error="none.crt: no such file"),
    Case("ca-data-not-pem", {"a": config(cluster={"certificate-authority-data": b64("garbage")})}, error="not a PEM"),
    Case("ca-data-not-base64", {"a": config(cluster={"certificate-authority-data": "%%%"})}, error="not valid base64"),
    Case("not-yaml", {"a": "clusters: [\n"}, error="not valid YAML"),
    Case("a-list", {"a": "- a\n- b\n"}, error="the file must be a map, not a list"),
    Case("no-server", {"a": config(cluster={"server": ""})}, error='cluster "c" has no server'),
    # typed as client-go's clientcmd/api/v1 types them (kubectl rejects these files)
    Case("insecure-as-a-string", {"a": config(cluster={"insecure-skip-tls-verify": "false"})},
         error=r"clusters\[0\].cluster.insecure-skip-tls-verify must be true or false, not a string"),
    Case("insecure-as-a-number", {"a": config(cluster={"insecure-skip-tls-verify": 0})}, error="must be true or false"),
    Case("server-as-a-number", {"a": config(cluster={"server": 443})}, error="server must be a string, not a number"),
    Case("token-as-a-number", {"a": config({"token": 12345})}, error="token must be a string, not a number"),
    Case("token-as-a-map", {"a": config({"token": {"a": 1}})}, error="token must be a string, not a map"),
    Case("clusters-as-a-map", {"a": {**config(), "clusters": {"c": {}}}}, error="clusters must be a list"),
    Case("exec-args-not-strings", {"a": config({"exec": {"command": "x", "args": [1]}})}, error="args must be a list of strings"),
    Case("client-key-data-not-base64", {"a": config({"client-key-data": "!!"})}, error="not valid base64"),
    Case("namespace-as-a-list", {"a": config(context={"namespace": ["a"]})}, error="namespace must be a string"),
    Case("entry-without-name", {"a": {**config(), "users": [{"user": {"token": "t"}}]}}, error="has no name"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_resolve(case, tmp_path, monkeypatch):
    for name, content in case.files.items():
        (tmp_path / name).write_text(json.dumps(content) if isinstance(content, dict) else content)
    for var in kubeconfig.PROXY_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    path = None
    if case.kubeconfig_env:
        monkeypatch.setenv("KUBECONFIG", os.pathsep.join(str(tmp_path / n) for n in case.kubeconfig_env))
    else:
        path = str(tmp_path / "a")
    if case.error:
        with pytest.raises(ClusterError, match=case.error):
            kubeconfig.resolve(path, case.context)
        return
    endpoint = kubeconfig.resolve(path, case.context)
    if case.expect is None:
        assert endpoint is None
        return
    assert endpoint is not None
    for key, value in case.expect.items():
        if isinstance(value, str) and value.startswith("@MEM@"):  # an in-memory file with this content
            assert open(getattr(endpoint, key)).read() == value[5:], key
            continue
        assert getattr(endpoint, key) == value, key


def test_inline_client_key_stays_off_disk(tmp_path):
    path = tmp_path / "a"
    path.write_text(json.dumps(config({"client-certificate-data": b64("CERT"), "client-key-data": b64("KEY")})))
    endpoint = kubeconfig.resolve(str(path))
    for file, content in ((endpoint.cert_file, "CERT"), (endpoint.key_file, "KEY")):
        assert file.startswith("/proc/self/fd/")  # an anonymous memory file
        assert open(file).read() == content


def test_loading_the_same_credentials_again_opens_no_new_descriptor(tmp_path):
    path = tmp_path / "a"
    path.write_text(json.dumps(config({"client-certificate-data": b64("CERT-again"),
                                       "client-key-data": b64("KEY-again")})))
    first = kubeconfig.resolve(str(path))
    opened = len(os.listdir("/proc/self/fd"))
    again = [kubeconfig.resolve(str(path)) for _ in range(20)]
    assert len(os.listdir("/proc/self/fd")) == opened
    assert {(e.cert_file, e.key_file) for e in again} == {(first.cert_file, first.key_file)}


def test_without_memory_files_keys_go_to_a_private_directory(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "memfd_create")
    path = tmp_path / "a"
    path.write_text(json.dumps(config({"client-certificate-data": b64("CERT-on-disk"),
                                       "client-key-data": b64("KEY-on-disk")})))
    endpoint = kubeconfig.resolve(str(path))
    for file, content in ((endpoint.cert_file, "CERT-on-disk"), (endpoint.key_file, "KEY-on-disk")):
        assert open(file).read() == content
        assert stat.S_IMODE(os.stat(file).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.dirname(file)).st_mode) == 0o700
    kubeconfig.forget_private_files()
    assert not os.path.exists(os.path.dirname(endpoint.key_file))


def test_default_location_is_used_without_flag_or_environment(tmp_path, monkeypatch):
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(json.dumps(config({"token": "home"})))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert kubeconfig.resolve().authorization == "Bearer home"
