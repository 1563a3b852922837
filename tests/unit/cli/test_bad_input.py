"""Bad input never produces a traceback: one ``error: ...`` line naming the problem, and an exit code.

Table-driven. A case's files are written to ``tmp_path``; in args and file contents ``@TMP@``
is that directory and ``@REFUSED@``, ``@SLOW@``, ``@TLS@``, ``@TLS_NAMED@``, ``@HTTP_<n>@`` are
loopback servers started by fixtures in this module (refused port, accepts and never answers,
self-signed TLS, TLS with a certificate for another host name, plain HTTP answering status n).
Offline cases run in-process; cases that talk to a server run ``kubectl-safety`` in a
subprocess, so stray logging from the kubernetes client would show up too.
"""

import base64
import http.server
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field

import pytest

from tests.builders import exec_user, kubeconfig, make_node, make_pdb, make_pod
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli
from tests.unit.loopback import self_signed, serve

EXPLAIN = ["explain", "pod", "a", "--as-of", DEMO_NOW]


@dataclass
class Case:
    id: str
    args: list
    code: int
    message: str  # regex searched in the single stderr line
    files: dict = field(default_factory=dict)  # name -> str | bytes | callable(tmp_path) -> bytes
    stdin: object = None
    env: dict = field(default_factory=dict)
    max_seconds: float = None
    isolated: bool = False  # run in a subprocess: may crash the interpreter, or logs outside our stderr


# -- input builders ------------------------------------------------------------------------
def yaml_doc(obj) -> str:
    import yaml

    return yaml.safe_dump(obj, sort_keys=False)


def pod(**kw):
    return make_pod("a", **kw)


def with_meta(obj, **meta):
    obj["metadata"].update(meta)
    return obj


def drop(obj, *path):
    target = obj
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return obj


def huge_dump(tmp_path, tail=None) -> bytes:
    """~20 MB of valid pods in one List (plus ``tail`` appended as the last item)."""
    items = [make_pod(f"p{i:06d}", node=f"n{i % 50}", cpu="100m", memory="64Mi") for i in range(20000)]
    if tail is not None:
        items.append(tail)
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    return text.encode()


KC = ["--kubeconfig", "@TMP@/kc.yaml"]
LIVE = ["explain", "pod", "a"] + KC

CASES = [
    # -- malformed files ---------------------------------------------------------------------
    Case("yaml-unclosed-flow", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: invalid YAML at line \d+",
         {"d.yaml": "kind: Pod\napiVersion: v1\nmetadata: {name: a\n"}),
    Case("yaml-bad-indent", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: invalid YAML at line \d+ column \d+",
         {"d.yaml": "kind: Pod\nmetadata:\n  name: a\n labels: x\n"}),
    Case("yaml-tab-indent", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: invalid YAML",
         {"d.yaml": "kind: Pod\nmetadata:\n\tname: a\n"}),
    Case("yaml-unterminated-quote", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: invalid YAML",
         {"d.yaml": "kind: 'Pod\napiVersion: v1\n"}),
    Case("yaml-second-document-broken", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: invalid YAML at line 3\d",
         {"d.yaml": yaml_doc(pod()) + "\n---\nkind: [Pod\n"}),
    Case("json-trailing-comma", EXPLAIN + ["--snapshot", "@TMP@/d.json"], 1,
         r"d\.json: invalid JSON at line 1 column \d+", {"d.json": '{"kind": "Pod",}'}),
    Case("json-truncated", EXPLAIN + ["--snapshot", "@TMP@/d.json"], 1, r"d\.json: invalid JSON",
         {"d.json": json.dumps(pod())[:-40]}),
    Case("json-two-values", EXPLAIN + ["--snapshot", "@TMP@/d.json"], 1, r"d\.json: invalid JSON",
         {"d.json": json.dumps(pod()) + json.dumps(pod())}),
    Case("json-nested-too-deep", EXPLAIN + ["--snapshot", "@TMP@/d.json"], 1, r"d\.json: invalid JSON",
         {"d.json": "[" * 100_000}),
    Case("yaml-nested-too-deep", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: invalid YAML",
         {"d.yaml": "a: " + "[" * 100_000}, isolated=True),
    Case("yaml-anchor-bomb-ignored-kind", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: invalid YAML: aliases expand to more than \d+ nodes",
         {"d.yaml": "kind: Bomb\napiVersion: v1\nmetadata: {name: b}\na: &a [x, x, x, x, x, x, x, x, x]\n"
                    + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                              for p, c in zip("abcdefg", "bcdefgh"))}),
    Case("yaml-python-tag-refused", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: invalid YAML",
         {"d.yaml": "kind: !!python/object/apply:os.system ['true']\n"}),
    # -- not Kubernetes objects --------------------------------------------------------------
    Case("yaml-scalar-document", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: expected a Kubernetes object, got str", {"d.yaml": "hello world\n"}),
    Case("yaml-list-document", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: expected a Kubernetes object, got list", {"d.yaml": "- 1\n- 2\n"}),
    Case("json-list-of-numbers", EXPLAIN + ["--snapshot", "@TMP@/d.json"], 1,
         r"d\.json.*expected a Kubernetes object, got int", {"d.json": "[1, 2]"}),
    Case("json-number", EXPLAIN + ["--snapshot", "@TMP@/d.json"], 1,
         r"d\.json: expected a Kubernetes object, got int", {"d.json": "42"}),
    Case("list-items-not-a-list", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: 'items' of a List must be a list", {"d.yaml": "kind: List\napiVersion: v1\nitems: {a: 1}\n"}),
    Case("list-item-not-an-object", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml item 1: expected a Kubernetes object, got str",
         {"d.yaml": yaml_doc({"kind": "List", "apiVersion": "v1", "items": [pod(), "oops"]})}),
    Case("wrong-kind-only", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r'pod "a" not found in namespace "default"',
         {"d.yaml": "kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\ndata: {k: v}\n"}),
    Case("wrong-kind-for-node", ["explain", "node", "a", "--snapshot", "@TMP@/d.yaml"], 1, r'node "a" not found',
         {"d.yaml": yaml_doc(pod())}),
    # -- empty, binary, encodings, paths -----------------------------------------------------
    Case("empty-file", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: empty file", {"d.yaml": ""}),
    Case("whitespace-file", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: empty file",
         {"d.yaml": "\n  \n\t\n"}),
    Case("only-comments-and-separators", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: no Kubernetes objects found", {"d.yaml": "# nothing\n---\n---\n# here\n"}),
    Case("empty-list", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: no Kubernetes objects found",
         {"d.yaml": "kind: List\napiVersion: v1\nitems: []\n"}),
    Case("binary-garbage", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: not a text file",
         {"d.yaml": bytes(range(256)) * 64}),
    Case("gzip-file", EXPLAIN + ["--snapshot", "@TMP@/d.yaml.gz"], 1, r"d\.yaml\.gz: not (a text file|UTF-8)",
         {"d.yaml.gz": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(range(1, 200))}),
    Case("latin-1-text", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: not UTF-8 text \(byte 3\)",
         {"d.yaml": b"caf\xe9: 1\n"}),
    Case("utf-16-text", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: not (a text file|UTF-8)",
         {"d.yaml": "kind: Pod\n".encode("utf-16")}),
    Case("missing-file", EXPLAIN + ["--snapshot", "@TMP@/nope.yaml"], 1, r"nope\.yaml: no such file or directory"),
    Case("directory-without-dumps", EXPLAIN + ["--snapshot", "@TMP@/dir"], 1,
         r"dir: directory has no \.yaml, \.yml or \.json files", {"dir/readme.txt": "hello"}),
    Case("empty-directory", EXPLAIN + ["--snapshot", "@TMP@/dir"], 1, r"dir: directory has no", {"dir/": None}),
    Case("unreadable-special-file", EXPLAIN + ["--snapshot", "/dev/null"], 1, r"/dev/null: not a regular file"),
    Case("stdin-garbage", EXPLAIN + ["--snapshot", "-"], 1, r"-: invalid YAML", stdin="kind: [Pod\n"),
    Case("stdin-empty", EXPLAIN + ["--snapshot", "-"], 1, r"-: empty file", stdin=""),
    Case("stdin-binary", EXPLAIN + ["--snapshot", "-"], 1, r"-: not a text file", stdin=b"\x00\x01\x02"),
    Case("huge-file-pod-missing", EXPLAIN + ["--snapshot", "@TMP@/big.json"], 1,
         r'pod "a" not found in namespace "default"', {"big.json": huge_dump}),
    Case("huge-file-bad-last-item", EXPLAIN + ["--snapshot", "@TMP@/big.json"], 1,
         r"big\.json item 20000: Pod is missing 'metadata\.name'",
         {"big.json": lambda t: huge_dump(t, tail={"kind": "Pod", "apiVersion": "v1", "metadata": {}})}),
    Case("huge-single-line-garbage", EXPLAIN + ["--snapshot", "@TMP@/big.yaml"], 1,
         r"big\.yaml: expected a Kubernetes object, got str", {"big.yaml": b"x" * 30_000_000}),
    # -- missing or malformed fields -----------------------------------------------------------
    Case("missing-kind", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: missing 'kind'",
         {"d.yaml": yaml_doc(drop(pod(), "kind"))}),
    Case("kind-not-a-string", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: missing 'kind'",
         {"d.yaml": yaml_doc({**pod(), "kind": 5})}),
    Case("missing-apiVersion", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"d\.yaml: Pod is missing 'apiVersion'",
         {"d.yaml": yaml_doc(drop(pod(), "apiVersion"))}),
    Case("missing-metadata", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: Pod is missing 'metadata\.name'", {"d.yaml": yaml_doc(drop(pod(), "metadata"))}),
    Case("missing-metadata-name", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml: Pod is missing 'metadata\.name'", {"d.yaml": yaml_doc(drop(pod(), "metadata", "name"))}),
    Case("empty-metadata-name", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"Pod is missing 'metadata\.name'", {"d.yaml": yaml_doc(with_meta(pod(), name=""))}),
    Case("numeric-metadata-name", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"Pod is missing 'metadata\.name'", {"d.yaml": yaml_doc(with_meta(pod(), name=7))}),
    Case("labels-not-a-map", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"Pod a: 'metadata\.labels' must be a map",
         {"d.yaml": yaml_doc(with_meta(pod(), labels=["app=a"]))}),
    Case("spec-not-a-map", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"Pod a: 'spec' must be a map",
         {"d.yaml": yaml_doc({**pod(), "spec": "nope"})}),
    Case("containers-not-a-list", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"Pod a: 'spec\.containers' must be a list",
         {"d.yaml": yaml_doc({**pod(), "spec": {"containers": {"name": "c"}}})}),
    Case("container-not-a-map", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"Pod a\b.*container",
         {"d.yaml": yaml_doc({**pod(), "spec": {"nodeName": "n1", "containers": [5]}})}),
    Case("owner-references-not-a-list", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"Pod a\b.*ownerReferences",
         {"d.yaml": yaml_doc(with_meta(pod(), ownerReferences=5))}),
    Case("priority-not-a-number", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"Pod a\b.*priority",
         {"d.yaml": yaml_doc(pod(priority="high"))}),
    Case("grace-period-not-a-number", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"Pod a\b.*terminationGracePeriodSeconds",
         {"d.yaml": yaml_doc(pod(terminationGracePeriodSeconds="thirty"))}),
    Case("invalid-timestamp", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"Pod a: 'metadata.deletionTimestamp' must be an RFC 3339 time with a time zone, got 'yesterday'",
         {"d.yaml": yaml_doc(with_meta(pod(), deletionTimestamp="yesterday"))}),
    # -- quantities and selectors ----------------------------------------------------------------
    Case("invalid-cpu-quantity", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"invalid quantity 'lots'",
         {"d.yaml": yaml_doc(pod(cpu="lots"))}),
    Case("invalid-memory-unit", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"invalid quantity '1GB'",
         {"d.yaml": yaml_doc(pod(memory="1GB"))}),
    Case("boolean-quantity", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"invalid quantity True",
         {"d.yaml": yaml_doc(pod(cpu=True))}),
    Case("quantity-names-the-pod", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"Pod default/a.*invalid quantity 'lots'", {"d.yaml": yaml_doc(pod(cpu="lots"))}),
    Case("node-allocatable-invalid", ["explain", "node", "n1", "--snapshot", "@TMP@/d.yaml"], 1,
         r"invalid quantity '4 cores'", {"d.yaml": yaml_doc(make_node("n1", cpu="4 cores"))}),
    Case("pdb-selector-bad-operator", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"invalid label selector operator 'Like'",
         {"d.yaml": yaml_doc(pod()) + "\n---\n" + yaml_doc(
             {**make_pdb("b"), "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Like"}]}}})}),
    Case("pdb-selector-in-without-values", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"label selector operator In on 'app' needs values",
         {"d.yaml": yaml_doc(pod()) + "\n---\n" + yaml_doc(
             {**make_pdb("b"), "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}})}),
    Case("priority-class-value-not-a-number", ["explain", "priorities", "--snapshot", "@TMP@/d.yaml"], 1,
         r"PriorityClass high\b.*value",
         {"d.yaml": "kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: high}\nvalue: lots\n"}),
    # -- duplicates --------------------------------------------------------------------------------
    Case("duplicate-pod-one-file", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1,
         r"d\.yaml document 2: duplicate Pod default/a \(first in .*d\.yaml document 1\)",
         {"d.yaml": yaml_doc(pod()) + "\n---\n" + yaml_doc(pod())}),
    Case("duplicate-pod-two-files", EXPLAIN + ["--snapshot", "@TMP@/a.yaml", "--snapshot", "@TMP@/b.yaml"], 1,
         r"b\.yaml: duplicate Pod default/a \(first in .*a\.yaml\)",
         {"a.yaml": yaml_doc(pod()), "b.yaml": yaml_doc(pod())}),
    Case("duplicate-file-given-twice", EXPLAIN + ["--snapshot", DEMO, "--snapshot", DEMO], 1,
         r"duplicate Node node-a1"),
    Case("duplicate-node-in-list", ["explain", "node", "n1", "--snapshot", "@TMP@/d.json"], 1,
         r"d\.json item 1: duplicate Node n1 \(first in .*item 0\)",
         {"d.json": json.dumps({"kind": "List", "apiVersion": "v1", "items": [make_node("n1"), make_node("n1")]})}),
    Case("duplicate-default-namespace", EXPLAIN + ["--snapshot", "@TMP@/d.yaml"], 1, r"duplicate Pod default/a",
         {"d.yaml": yaml_doc(pod()) + "\n---\n" + yaml_doc(pod(namespace=None))}),
    # -- unknown names --------------------------------------------------------------------------
    Case("unknown-pod", ["explain", "pod", "nope", "-n", "shop", "--snapshot", DEMO], 1,
         r'pod "nope" not found in namespace "shop"'),
    Case("unknown-namespace", ["explain", "pod", "web-5d8f7c-0x0", "-n", "nowhere", "--snapshot", DEMO], 1,
         r'pod "web-5d8f7c-0x0" not found in namespace "nowhere"'),
    Case("unknown-node", ["explain", "node", "node-z9", "--snapshot", DEMO], 1, r'node "node-z9" not found'),
    # -- flags -----------------------------------------------------------------------------------
    Case("unknown-command", ["frobnicate"], 2, r"unknown command \"frobnicate\" for \"kubectl safety\""),
    Case("unknown-subcommand", ["explain", "deployment", "x"], 2,
         r"unknown command \"deployment\" for \"kubectl safety explain\""),
    Case("unknown-flag", ["explain", "pod", "a", "--bogus"], 2, r"No such option '--bogus'"),
    Case("missing-pod-name", ["explain", "pod"], 2, r"Missing argument 'NAME'"),
    Case("extra-argument", ["explain", "pod", "a", "b", "--snapshot", DEMO], 2, r"unexpected extra argument"),
    Case("bad-output-format", ["explain", "priorities", "-o", "xml", "--snapshot", DEMO], 2,
         r"Invalid value for '-o' / '--output'"),
    Case("bad-now", ["explain", "priorities", "--as-of", "tomorrow", "--snapshot", DEMO], 2,
         r"'tomorrow' is not an RFC 3339 time"),
    Case("flag-missing-value", ["explain", "priorities", "--snapshot"], 2, r"'--snapshot' requires an argument"),
    Case("all-namespaces-with-pod-name", ["explain", "pod", "web-5d8f7c-0x0", "-A", "--snapshot", DEMO], 2,
         r"(-A|--all-namespaces)"),
    Case("bad-request-timeout", LIVE + ["--request-timeout", "soon"], 2, r"invalid --request-timeout 'soon'",
         {"kc.yaml": kubeconfig()}),
    Case("negative-request-timeout", LIVE + ["--request-timeout", "-5s"], 2, r"invalid --request-timeout '-5s'",
         {"kc.yaml": kubeconfig()}),
    # -- kubeconfig --------------------------------------------------------------------------------
    Case("kubeconfig-missing-file", LIVE[:3] + ["--kubeconfig", "@TMP@/none.yaml"], 1,
         r"kubeconfig .*none\.yaml: no such file"),
    Case("kubeconfig-env-missing-file", LIVE[:3], 1, r"no kubeconfig found",
         env={"KUBECONFIG": "@TMP@/none.yaml", "HOME": "@TMP@"}),
    Case("no-kubeconfig-anywhere", LIVE[:3], 1, r"no kubeconfig found.*--snapshot", env={"HOME": "@TMP@"}),
    Case("kubeconfig-empty", LIVE, 1, r"invalid kubeconfig .*kc\.yaml: the file is empty", {"kc.yaml": ""}),
    Case("kubeconfig-garbage", LIVE, 1, r"kubeconfig", {"kc.yaml": b"\x00\x01\x02garbage"}),
    Case("kubeconfig-a-list", LIVE, 1, r"invalid kubeconfig", {"kc.yaml": "- a\n- b\n"}),
    Case("kubeconfig-bad-yaml", LIVE, 1, r"kubeconfig.*kc\.yaml", {"kc.yaml": "clusters: [\n"}),
    Case("kubeconfig-no-current-context", LIVE, 1, r"invalid kubeconfig: .*current-context",
         {"kc.yaml": kubeconfig(current=None)}),
    Case("kubeconfig-unknown-context-flag", LIVE + ["--context", "nope"], 1,
         r"invalid kubeconfig: .*nope", {"kc.yaml": kubeconfig()}),
    Case("kubeconfig-context-unknown-cluster", LIVE, 1, r"invalid kubeconfig: .*nowhere",
         {"kc.yaml": kubeconfig(cluster_ref="nowhere")}),
    Case("kubeconfig-context-unknown-user", LIVE, 1, r"user.*nobody",
         {"kc.yaml": kubeconfig(user_ref="nobody")}),
    Case("kubeconfig-missing-ca-file", LIVE, 1, r"kubeconfig.*ca\.crt",
         {"kc.yaml": kubeconfig().replace('"server"', '"certificate-authority": "/nonexistent/ca.crt", "server"')}),
    Case("kubeconfig-bad-ca-data", LIVE, 1, r"(certificate|kubeconfig)",
         {"kc.yaml": kubeconfig("@TLS@", cluster={"certificate-authority-data": base64.b64encode(b"not a certificate").decode()})}),
    Case("exec-plugin-fails", LIVE, 1, r"(exec|plugin|credential).*(returned 1|failed)",
         {"kc.yaml": kubeconfig(user=exec_user("/bin/false"))}, isolated=True),
    Case("exec-plugin-missing", LIVE, 1, r"(exec|plugin|credential).*nonexistent",
         {"kc.yaml": kubeconfig(user=exec_user("/nonexistent/plugin"))}, isolated=True),
    Case("exec-plugin-garbage-output", LIVE, 1, r"(exec|plugin|credential)",
         {"kc.yaml": kubeconfig(user=exec_user("/bin/echo", "not json"))}, isolated=True),
    # -- servers -----------------------------------------------------------------------------------
    Case("server-refused", LIVE, 1, r"unable to connect to the server https://127\.0\.0\.1:1: connection refused",
         {"kc.yaml": kubeconfig()}),
    Case("server-refused-node", ["explain", "node", "n1"] + KC, 1, r"unable to connect .*connection refused",
         {"kc.yaml": kubeconfig()}),
    Case("server-refused-priorities", ["explain", "priorities"] + KC, 1, r"unable to connect .*connection refused",
         {"kc.yaml": kubeconfig()}),
    Case("server-slow-request-timeout", LIVE + ["--request-timeout", "1s"], 1,
         r"did not answer within --request-timeout=1s", {"kc.yaml": kubeconfig("@SLOW@")}, max_seconds=4),
    Case("server-slow-tls-handshake", LIVE + ["--request-timeout", "1s"], 1,
         r"did not answer within --request-timeout=1s",
         {"kc.yaml": kubeconfig("@SLOW_TLS@")}, max_seconds=4),
    Case("tls-self-signed", LIVE, 1, r"TLS error talking to https://127\.0\.0\.1:\d+: .*certificate.*verification stays on",
         {"kc.yaml": kubeconfig("@TLS@")}),
    Case("tls-wrong-host-name", LIVE, 1, r"TLS error .*(hostname|match|certificate)",
         {"kc.yaml": kubeconfig("@TLS_NAMED@", cluster={"certificate-authority-data": "@TLS_NAMED_CA@"})}),
    Case("tls-skip-verify-reaches-server", LIVE + ["--insecure-skip-tls-verify"], 1,
         r'pod "a" not found in namespace "default"', {"kc.yaml": kubeconfig("@TLS@")}),
    Case("plain-http-to-tls-server", LIVE, 1, r"(unable to connect|Error from server|TLS)",
         {"kc.yaml": kubeconfig("@TLS_AS_HTTP@")}),
    Case("server-401-expired-token", LIVE, 1, r"Unauthorized", {"kc.yaml": kubeconfig("@HTTP_401@")}),
    Case("server-403-forbidden", LIVE, 1, r"Forbidden.*cannot get resource", {"kc.yaml": kubeconfig("@HTTP_403@")}),
    Case("server-500-html", LIVE, 1, r"Error from server \(500\)", {"kc.yaml": kubeconfig("@HTTP_500@")}),
    Case("server-429-throttled", LIVE, 1, r"(429|TooManyRequests|throttl)", {"kc.yaml": kubeconfig("@HTTP_429@")}),
    Case("server-200-not-an-object", LIVE, 1, r"(server|API).*(unexpected|not an object|invalid)",
         {"kc.yaml": kubeconfig("@HTTP_200@")}),
]


# -- drain, delete, rebalance: included only when the command exists --------------------------------------
def command_exists(name) -> bool:
    import importlib.util

    return importlib.util.find_spec(f"kubectl_safety.cli.commands.{name}") is not None


OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW]
MUTATING_CASES = {
    "drain": [
        Case("drain-selector-unclosed", ["drain", "-l", "a in (b", "--dry-run", *OFFLINE], 2, r"'?a in \(b'?"),
        Case("drain-pod-selector-unclosed", ["drain", "node-a1", "--pod-selector", "a in (b", "--dry-run", *OFFLINE],
             2, r"--pod-selector.*a in \(b"),
        Case("drain-pod-selector-empty-key", ["drain", "node-a1", "--pod-selector", "=x", "--dry-run", *OFFLINE],
             2, r"--pod-selector"),
        Case("drain-unknown-node", ["drain", "node-zz", "--dry-run", *OFFLINE], 1, r'node "node-zz" not found'),
        Case("drain-no-node", ["drain", "--dry-run", *OFFLINE], 2, r"NODE"),
        Case("drain-node-and-selector", ["drain", "node-a1", "-l", "pool=x", "--dry-run", *OFFLINE], 2,
             r"both a node name and a --selector"),
        Case("drain-selector-matches-nothing", ["drain", "-l", "nothing=here", "--dry-run", *OFFLINE], 1,
             r"no node matches the selector nothing=here"),
        Case("drain-bad-timeout", ["drain", "node-a1", "--dry-run", "--timeout", "soon", *OFFLINE], 2,
             r"invalid --timeout 'soon'"),
        Case("drain-bad-grace-period", ["drain", "node-a1", "--dry-run", "--grace-period", "abc", *OFFLINE], 2,
             r"--grace-period"),
        Case("drain-snapshot-without-dry-run", ["drain", "node-a1", *OFFLINE], 2, r"needs a live cluster"),
        Case("drain-refused-server", ["drain", "node-a1", "--dry-run"] + KC, 1, r"unable to connect .*refused",
             {"kc.yaml": kubeconfig()}),
        Case("drain-slow-server", ["drain", "node-a1", "--dry-run", "--request-timeout", "1s"] + KC, 1,
             r"did not answer within --request-timeout=1s", {"kc.yaml": kubeconfig("@SLOW@")}, max_seconds=4),
    ],
    "delete": [
        Case("delete-unknown-pod", ["delete", "pod", "nope", "-n", "shop", "--force", *OFFLINE], 1,
             r'pod "nope" not found in namespace "shop"'),
        Case("delete-no-name", ["delete", "pod", "-n", "shop", *OFFLINE], 2, r"NAME"),
        Case("delete-name-and-selector", ["delete", "pod", "x", "-l", "app=web", "-n", "shop", *OFFLINE], 2,
             r"not both"),
        Case("delete-selector-unclosed", ["delete", "pod", "-l", "app in (web", "-n", "shop", *OFFLINE], 2,
             r"invalid label selector 'app in \(web'"),
        Case("delete-grace-below-minus-one", ["delete", "pod", "web-5d8f7c-0x0", "-n", "shop", "--grace-period", "-5",
                                              *OFFLINE], 2, r"--grace-period"),
        Case("delete-force-with-grace", ["delete", "pod", "web-5d8f7c-0x0", "-n", "shop", "--force", "--grace-period",
                                         "30", "--dry-run", *OFFLINE], 2, r"--force.*--grace-period"),
        Case("delete-bad-timeout-dry-run", ["delete", "pod", "web-5d8f7c-0x0", "-n", "shop", "--wait", "--timeout",
                                            "forever", "--dry-run", *OFFLINE], 2, r"--timeout.*forever"),
        Case("delete-force-confirm-on-snapshot", ["delete", "pod", "web-5d8f7c-0x0", "-n", "shop", "--force",
                                                  "--confirm", *OFFLINE], 2, r"needs a live cluster"),
        Case("delete-refused-server", ["delete", "pod", "a", "--dry-run"] + KC, 1, r"unable to connect .*refused",
             {"kc.yaml": kubeconfig()}),
    ],
    "rebalance": [
        Case("rebalance-unknown-workload", ["rebalance", "deployment/nope", "-n", "shop", "--dry-run", *OFFLINE], 1,
             r'deployment "nope" not found in namespace "shop"'),
        Case("rebalance-unknown-namespace", ["rebalance", "deployment/web", "-n", "nowhere", "--dry-run", *OFFLINE],
             1, r'not found in namespace "nowhere"'),
        Case("rebalance-bad-workload-kind", ["rebalance", "widget/web", "-n", "shop", "--dry-run", *OFFLINE], 2,
             r"invalid WORKLOAD 'widget/web'"),
        Case("rebalance-workload-and-selector", ["rebalance", "deployment/web", "-l", "app=web", "-n", "shop",
                                                 "--dry-run", *OFFLINE], 2, r"not both"),
        Case("rebalance-selector-unclosed", ["rebalance", "-l", "a in (", "-n", "shop", "--dry-run", *OFFLINE], 2,
             r"invalid label selector 'a in \('"),
        Case("rebalance-negative-max-evictions", ["rebalance", "deployment/web", "-n", "shop", "--max-evictions",
                                                  "-1", "--dry-run", *OFFLINE], 2, r"--max-evictions"),
        Case("rebalance-workload-with-all-namespaces", ["rebalance", "deployment/web", "-n", "shop", "-A",
                                                        "--dry-run", *OFFLINE], 2, r"drop -A"),
        Case("rebalance-snapshot-without-dry-run", ["rebalance", "deployment/web", "-n", "shop", *OFFLINE], 2,
             r"needs a live cluster"),
    ],
}
CASES += [case for name, cases in MUTATING_CASES.items() if command_exists(name) for case in cases]


# -- loopback servers ------------------------------------------------------------------------------
BODIES = {
    401: {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "Unauthorized",
          "reason": "Unauthorized", "code": 401},
    403: {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
          "message": 'pods "a" is forbidden: User "u" cannot get resource "pods" in API group "" '
                     'in the namespace "default"'},
    404: {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
          "message": 'pods "a" not found'},
    429: {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "TooManyRequests", "code": 429,
          "message": "Too many requests, please try again later."},
}


class Handler(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the server's fixed status and body."""

    def do_GET(self):
        status = self.server.status
        if status == 500:
            body, ctype = b"<html>\n<body>\nInternal error\n</body>\n</html>\n", "text/html"
        elif status == 200:
            body, ctype = b"[1, 2, 3]", "application/json"
        else:
            body, ctype = json.dumps(BODIES[status]).encode(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def tls_context(cert_path, key_path):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_path, key_path)
    return ctx


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Placeholder -> value for the loopback servers (all stopped at the end of the module)."""
    tmp = tmp_path_factory.mktemp("certs")
    started, values = [], {"@REFUSED@": "https://127.0.0.1:1"}
    for status in (200, 401, 403, 429, 500):
        server, url = serve(Handler, status=status)
        started.append(server)
        values[f"@HTTP_{status}@"] = url
    cert, key, _ = self_signed(tmp, ["127.0.0.1"])
    server, values["@TLS@"] = serve(Handler, tls_context(cert, key), status=404)
    started.append(server)
    cert, key, pem = self_signed(tmp, ["kubernetes.example"])
    server, values["@TLS_NAMED@"] = serve(Handler, tls_context(cert, key), status=404)
    values["@TLS_NAMED_CA@"] = base64.b64encode(pem).decode()
    started.append(server)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # accepts (the kernel completes the handshake) and never answers
    values["@SLOW@"] = f"http://127.0.0.1:{silent.getsockname()[1]}"
    values["@SLOW_TLS@"] = values["@SLOW@"].replace("http:", "https:")
    values["@TLS_AS_HTTP@"] = values["@TLS@"].replace("https:", "http:")
    yield values
    silent.close()
    for server in started:
        server.shutdown()
        server.server_close()


# -- running -----------------------------------------------------------------------------------------
def substitute(value, table):
    for key, replacement in table.items():
        if isinstance(value, bytes):
            value = value.replace(key.encode(), replacement.encode())
        else:
            value = value.replace(key, replacement)
    return value


def write_files(case, tmp_path, table):
    for name, content in case.files.items():
        path = tmp_path / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content = content(tmp_path)
        content = substitute(content, table)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


def run_subprocess(args, env, stdin=None):
    full_env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBECTL_SAFETY_DEBUG")}
    full_env.update(env)
    proc = subprocess.run([sys.executable, "-m", "kubectl_safety", *args], capture_output=True, env=full_env,
                          input=stdin if isinstance(stdin, (bytes, type(None))) else stdin.encode(), timeout=60)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


def run_case(case, tmp_path, servers):
    table = {"@TMP@": str(tmp_path), **servers}
    write_files(case, tmp_path, table)
    args = [substitute(a, table) for a in case.args]
    env = {k: substitute(v, table) for k, v in case.env.items()}
    start = time.monotonic()
    if not case.isolated and not env:
        code, out, err = run_cli(args, input=case.stdin)
    else:
        code, out, err = run_subprocess(args, env, case.stdin)
    return code, out, err, time.monotonic() - start


def assert_one_line_error(err: str, pattern: str):
    """stderr is one ``error: ...`` line (no traceback, no internal error) matching pattern.

    The tool's own one-line ``warning: ...`` lines may precede it.
    """
    assert "Traceback" not in err, err
    lines = [line for line in err.strip("\n").split("\n") if not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0], f"expected one line on stderr, got {len(lines)}:\n{err}"
    line = lines[0]
    assert line.startswith("error: "), line
    assert "internal error" not in line, line
    assert re.search(pattern, line), f"{pattern!r} not in {line!r}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path, servers):
    code, out, err, seconds = run_case(case, tmp_path, servers)
    assert_one_line_error(err, case.message)
    assert code == case.code, f"exit {code}, expected {case.code}: {err}"
    if code != 3:  # a refusal may first show its assessment
        assert out == "", f"nothing on stdout for an error, got {out[:200]!r}"
    if case.max_seconds:
        assert seconds < case.max_seconds, f"took {seconds:.1f}s"


def test_corpus_is_large_and_ids_unique():
    assert len(CASES) >= 100
    assert len({c.id for c in CASES}) == len(CASES)


def test_tls_verification_on_by_default_off_only_when_asked(tmp_path, servers):
    """The same self-signed server: refused without the flag, reached with it."""
    (tmp_path / "kc.yaml").write_text(substitute(kubeconfig("@TLS@"), servers))
    base = ["explain", "pod", "a", "--kubeconfig", str(tmp_path / "kc.yaml")]
    verified = run_subprocess(base, {})
    skipped = run_subprocess(base + ["--insecure-skip-tls-verify"], {})
    assert "TLS error" in verified[2] and "TLS error" not in skipped[2]
    assert "not found" in skipped[2]


def test_unknown_priority_class_is_a_finding_not_an_error(tmp_path):
    """A pod naming a PriorityClass that does not exist: exit 0, a PRIORITY_CLASS_MISSING finding."""
    (tmp_path / "d.yaml").write_text(yaml_doc(pod(priority_class="gone")))
    code, out, err = run_cli(EXPLAIN + ["--snapshot", str(tmp_path / "d.yaml"), "-o", "json"])
    assert code == 0, err
    assert "PRIORITY_CLASS_MISSING" in {f["code"] for f in json.loads(out)["findings"]}
