"""The hostile corpus: inputs an attacker (or an unlucky day) would send, each with its exit code.

Every case checks the same properties of stdout+stderr: no terminal escape (ESC, C1 controls,
bidi overrides), no credential, no traceback, no "internal error", at most one ``error:`` line,
and a bounded run time. Cases are generated per class from tables; ``CLASSES`` counts them
(``python -m tests.unit.cli.test_hostile`` prints the counts). ``@TMP@`` is the case's directory,
``@SRV@`` the misbehaving loopback server of ``hostile_servers``, ``@REFUSED@`` a closed port.
"""

import base64
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import partial

import pytest

from kubectl_safety.model import schema
from tests import builders
from tests.builders import make_node, make_pdb, make_pod
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli
from tests.unit.hostile_servers import hostile_server  # noqa: F401 - fixture

TOKEN = "hostile-token-0123456789abcdef"
PASSWORD = "hunter2-password-xyz"
URL_PASSWORD = "urlpass-5555-secret"
ACCESS_TOKEN = "accesstoken-7777-secret"
EXEC_TOKEN = "exec-token-abcdef123456"
KEY_LINE = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg"
SECRETS = [TOKEN, PASSWORD, URL_PASSWORD, ACCESS_TOKEN, EXEC_TOKEN, KEY_LINE,
           base64.b64encode(f"ann:{PASSWORD}".encode()).decode()]
FORBIDDEN_OUTPUT = re.compile("[\x1b\x80-\x9f\u202a-\u202e\u2066-\u2069\x07\x08\x7f\u2028\u2029]")


@dataclass
class Case:
    id: str
    cls: str
    args: list
    code: object  # the exit code, or a tuple of the acceptable ones
    files: dict = field(default_factory=dict)  # name -> text | bytes | special ("fifo")
    expect: str = None  # regex searched in stderr
    env: dict = field(default_factory=dict)
    subprocess: bool = False
    stdin: object = None
    max_seconds: float = 20
    stdout: str = None  # None | "closed" | "full"
    sigterm_after: float = None


CASES = []


def add(*cases):
    CASES.extend(cases)


def dump(*objects) -> str:
    return json.dumps({"kind": "List", "apiVersion": "v1", "items": list(objects)}, allow_nan=False)


kubeconfig = partial(builders.kubeconfig, token=TOKEN)
exec_user = partial(builders.exec_user, "/bin/sh", "-c")  # a user whose exec plugin runs a shell script


def credential(token) -> str:
    return json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                       "status": {"token": token}})


KC = ["--kubeconfig", "@TMP@/kc.yaml"]
EXPLAIN = ["explain", "pod", "a", "--as-of", DEMO_NOW]

# -- 1. terminal escapes in names, messages and labels (offline dumps) ------------------------------------
HOSTILE = {
    "csi-colour": "\x1b[31mred\x1b[0m", "osc-title": "\x1b]0;pwned\x07", "osc8-link": "\x1b]8;;http://e\x1b\\l\x1b]8;;\x1b\\",
    "c1-csi": "x\x9b2Jy", "bidi-rlo": "a\u202eevil", "bidi-isolate": "a\u2066b\u2069", "newline-forged-error":
    "x\nerror: forged", "carriage-return": "x\rcovered", "backspace": "x\x08\x08y", "bell": "\x07bell",
    "delete": "x\x7fy", "line-separator": "a\u2028b", "dcs": "\x1bP+q\x1b\\", "clear-screen": "\x1b[2J\x1b[H",
    "nul": "x\x00y", "tab-forged-column": "x\tNODE\ty",
}


def hostile_cluster(s: str) -> str:
    """One node, a pod and a PDB whose names, namespace, labels and messages all carry ``s``."""
    ns, node, pod = f"ns{s}", f"node{s}", f"pod{s}"
    n = make_node(node, zone=f"z{s}")
    n["status"]["conditions"][0]["message"] = f"kubelet {s}"
    n["metadata"]["labels"]["evil"] = s
    p = make_pod(pod, namespace=ns, node=node, cpu="100m", labels={"app": "web", "evil": s}, owner=None,
                 meta={"annotations": {"note": s}})
    p["spec"]["containers"][0]["name"] = f"c{s}"
    p["status"]["conditions"][0]["message"] = f"not ready {s}"
    p["status"]["message"] = s
    q = make_pod(f"other{s}", namespace=ns, node=node, cpu="100m", labels={"app": "web"})
    pdb = make_pdb(f"pdb{s}", namespace=ns, selector={"app": "web"})
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"pc{s}"},
          "value": 1000, "description": s}
    return dump(n, p, q, pdb, pc)


def hostile_commands(s):
    ns, node, pod = f"ns{s}", f"node{s}", f"pod{s}"
    return {
        "explain-pod": ["explain", "pod", pod, "-n", ns],
        "explain-pod-wide": ["explain", "pod", pod, "-n", ns, "-o", "wide"],
        "explain-pod-json": ["explain", "pod", pod, "-n", ns, "-o", "json"],
        "explain-pod-yaml": ["explain", "pod", pod, "-n", ns, "-o", "yaml"],
        "explain-node": ["explain", "node", node],
        "explain-priorities": ["explain", "priorities"],
        "drain-dry-run": ["drain", node, "--dry-run", "--force"],
        "delete-force": ["delete", "pod", pod, "-n", ns, "--force"],
        "preemption": ["preemption", pod, "-n", ns],
        "rebalance": ["rebalance", "-A", "--dry-run"],
        "not-found": ["explain", "pod", f"missing{s}", "-n", ns],
    }


def baseline_codes():
    """Each command's exit code on the same cluster with plain names: hostile names must not change it."""
    import tempfile

    codes = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "d.json")
        with open(path, "w") as f:
            f.write(hostile_cluster("-plain"))
        for name, args in hostile_commands("-plain").items():
            codes[name] = run_cli(args + ["--snapshot", path, "--as-of", DEMO_NOW])[0]
    return codes


BASELINE = baseline_codes()
for sid, s in HOSTILE.items():
    for name, args in hostile_commands(s).items():
        # a name with "/" is TYPE/NAME to kubectl (no real object has one): a usage error may come first
        codes = (BASELINE[name], 2) if "/" in s else BASELINE[name]
        add(Case(f"escape-{sid}-{name}", "terminal escapes", args + ["--snapshot", "@TMP@/d.json", "--as-of", DEMO_NOW],
                 codes, {"d.json": hostile_cluster(s)}))
    slash = "/" in s  # TYPE/NAME to kubectl: a usage error naming the argument
    add(Case(f"escape-{sid}-argument-not-found", "terminal escapes", ["explain", "node", f"n{s}", "--snapshot", DEMO],
             2 if slash else 1, expect="is not a node" if slash else "not found"))
    if "\x00" not in s:  # (no argument can hold a NUL byte)
        add(Case(f"escape-{sid}-in-file-name", "terminal escapes", EXPLAIN + ["--snapshot", f"@TMP@/missing{s}.yaml"],
                 1, expect="no such file"))
    if not slash:  # (a usage error never reaches the server)
        add(Case(f"escape-{sid}-server-message", "terminal escapes", ["explain", "pod", f"a{s}"] + KC, 1,
                 {"kc.yaml": kubeconfig("@SRV@/m/hostile-message")}, expect="Forbidden"))

# -- 2. wrongly typed fields anywhere the analyses read, invalid values: one line naming the field ------------
WRONG = {
    schema.STR: [5, ["x"], {"a": 1}, True], schema.INT: ["5", 1.5, 10 ** 30, True, float("nan")],
    schema.NNINT: ["5", -1, 10 ** 12, 2.5], schema.POSINT: [0, -3, "1"], schema.INT32: [2 ** 31, -(2 ** 40), "9"],
    schema.BOOL: ["true", 1, "false"], schema.STR_MAP: [["a"], {"k": 1}, "x"], schema.TIME:
    ["2026-11-22T09:00:00", "yesterday", 5, "2026-13-01T00:00:00Z"], schema.INT_OR_STR: [-1, "150%", "x%", 1.5, True],
    dict: ["x", ["a"], 5], list: ["x", {"a": 1}, 5],
}


def schema_paths(value, path=()):
    """(path, leaf type) for every field of a schema."""
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from schema_paths(sub, path + (key,))
    elif isinstance(value, list):
        yield from schema_paths(value[0], path + (0,))
        yield path, list
    else:
        yield path, value


def wrong_values(leaf):
    if isinstance(leaf, frozenset):
        return ["Bogus", 5]
    return WRONG.get(leaf, ["x", 5])


def base_object(kind):
    if kind == "Pod":
        pod = make_pod("a", cpu="100m", tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                       topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone",
                                                   "whenUnsatisfiable": "DoNotSchedule",
                                                   "labelSelector": {"matchLabels": {"app": "a"}}}])
        pod["spec"]["initContainers"] = [dict(pod["spec"]["containers"][0], name="init")]
        return pod
    if kind == "Node":
        return make_node("n1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    if kind == "PodDisruptionBudget":
        return make_pdb("b", selector={"app": "a"})
    if kind == "PriorityClass":
        return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000}
    if kind == "PersistentVolumeClaim":
        return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "data", "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv-1", "storageClassName": "ssd",
                         "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound"}}
    if kind == "PersistentVolume":
        return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "pv-1"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "ssd", "capacity": {"storage": "1Gi"},
                         "claimRef": {"namespace": "default", "name": "data"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
                "status": {"phase": "Bound"}}
    if kind == "StorageClass":
        return {"apiVersion": "storage.k8s.io/v1", "kind": kind, "metadata": {"name": "ssd"},
                "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer",
                "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]}
    if kind in DEVICE_OBJECTS:
        return DEVICE_OBJECTS[kind]()
    if kind == "Event":
        return {"apiVersion": "events.k8s.io/v1", "kind": kind,
                "metadata": {"name": "a.1", "namespace": "default", "creationTimestamp": "2026-11-20T08:00:00Z"},
                "regarding": {"kind": "Pod", "namespace": "default", "name": "a", "uid": "uid-default-a"},
                "reason": "Preempted", "note": "Preempted by pod u on node n1", "type": "Normal",
                "reportingController": "default-scheduler", "eventTime": "2026-11-20T08:00:00.000000Z"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                     "template": {"metadata": {"labels": {"app": "a"}}, "spec": {}}}}


def _claim_spec():
    return {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 1}}],
                        "constraints": [{"matchAttribute": "gpu.example.com/model"}]}}
DEVICE_OBJECTS = {
    "CSINode": lambda: {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
                        "spec": {"drivers": [{"name": "ebs.csi.aws.com", "allocatable": {"count": 3}}]}},
    "VolumeAttachment": lambda: {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                 "metadata": {"name": "va"}, "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n1",
                                                                      "source": {"persistentVolumeName": "pv-1"}}},
    "DeviceClass": lambda: {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                            "spec": {"selectors": [{"cel": {"expression": "true"}}]}},
    "ResourceClaim": lambda: {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                              "metadata": {"name": "c", "namespace": "default"}, "spec": _claim_spec(),
                              "status": {"allocation": {"devices": {"results": [
                                  {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "g"}]}},
                                  "reservedFor": [{"resource": "pods", "name": "a", "uid": "u"}]}},
    "ResourceClaimTemplate": lambda: {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                      "metadata": {"name": "t", "namespace": "default"}, "spec": {"spec": _claim_spec()}},
    "ResourceSlice": lambda: {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                              "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                                       "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                                       "devices": [{"name": "g", "attributes": {}}]}},
    "Lease": lambda: {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                      "metadata": {"name": "n1", "namespace": "kube-node-lease"},
                      "spec": {"holderIdentity": "n1", "renewTime": "2026-11-22T08:59:56.000000Z"}},
}


def set_path(obj, path, value):
    """Set ``path`` in ``obj`` (creating maps and one-item lists as needed)."""
    target = obj
    for key, nxt in zip(path, path[1:]):
        if isinstance(key, int):
            while len(target) <= key:
                target.append({} if not isinstance(nxt, int) else [])
            target = target[key]
        else:
            if not isinstance(target.get(key), (dict, list)):
                target[key] = [] if isinstance(nxt, int) else {}
            target = target[key]
    last = path[-1]
    if isinstance(last, int):
        while len(target) <= last:
            target.append(None)
    target[last] = value
    return obj


def typed_cases():
    kinds = list(schema.SCHEMAS.items()) + [("Deployment", schema.WORKLOAD)]
    for kind, tree in kinds:
        for path, leaf in schema_paths(tree):
            if path in (("metadata", "name"),) or not path:
                continue
            shown = ".".join(str(p) for p in path).replace(".0", "[0]")
            for i, value in enumerate(wrong_values(leaf)):
                obj = set_path(base_object(kind), path, value)
                try:
                    text = dump(make_pod("a", cpu="100m"), make_node("n1"), obj) if kind not in ("Pod", "Node") else \
                        dump(obj if kind == "Pod" else make_pod("a", cpu="100m"), obj if kind == "Node" else make_node("n1"))
                except ValueError:  # NaN is not JSON: YAML carries it
                    import yaml

                    text = yaml.safe_dump({"kind": "List", "apiVersion": "v1",
                                           "items": [make_pod("a", cpu="100m"), make_node("n1"), obj]})
                name = "d.yaml" if text.startswith(("kind", "apiVersion")) else "d.json"
                field_regex = re.escape(shown.rsplit("[0]", 1)[0].split(".")[-1] if shown.endswith("[0]") else
                                        shown.split(".")[-1].split("[")[0])
                yield Case(f"typed-{kind}-{shown}-{i}", "wrongly typed or invalid fields",
                           EXPLAIN + ["--snapshot", f"@TMP@/{name}"], 1, {name: text},
                           expect=field_regex)


add(*typed_cases())


def sweep_cluster():
    """A small cluster whose every field the sweep replaces, one at a time."""
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "rs", "namespace": "default", "uid": "uid-default-rs", "ownerReferences": [
              {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u2", "controller": True}]},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}},
                   "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c"}]}}}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default", "uid": "u2"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}}, "template": {
               "metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": [
                   {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "a"}}}]}}}}
    pod = make_pod("a", cpu="100m", labels={"app": "a"}, priority_class="high", owner=("ReplicaSet", "rs"),
                   affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                       {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]}]}]}}},
                   tolerations=[{"key": "k", "operator": "Exists"}])
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    pod["spec"]["containers"][0]["lifecycle"] = {"preStop": {"sleep": {"seconds": 5}}}
    return [pod, make_pod("b", node="n2", cpu="100m", labels={"app": "a"}, owner=("ReplicaSet", "rs")),
            make_node("n1", zone="z1", taints=[{"key": "k", "effect": "NoSchedule"}]), make_node("n2", zone="z2"),
            make_pdb("b", selector={"app": "a"}, min_available=1, healthy=2, desired=1, expected=2), rs, dep,
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}]


def all_paths(value, prefix=()):
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, sub in items:
        yield prefix + (key,)
        yield from all_paths(sub, prefix + (key,))


def sweep_cases():
    """Every field of every object replaced by a value of the wrong type (or null): any outcome but a crash."""
    for index, obj in enumerate(sweep_cluster()):
        for path in all_paths(obj):
            if path in (("kind",), ("apiVersion",), ("metadata",), ("metadata", "name")):
                continue
            for i, value in enumerate(["x", None, [None], -1]):
                objects = sweep_cluster()
                target = objects[index]
                for key in path[:-1]:
                    target = target[key]
                target[path[-1]] = value
                shown = ".".join(map(str, path))
                yield Case(f"sweep-{obj['kind']}-{obj['metadata']['name']}-{shown}-{i}", "wrongly typed fields anywhere",
                           ["@SWEEP@", "--snapshot", "@TMP@/d.json", "--as-of", DEMO_NOW], (0, 1, 3), {"d.json": dump(*objects)})


add(*sweep_cases())
SWEEP_COMMANDS = [["explain", "pod", "a"], ["drain", "n1", "--dry-run", "--force", "--ignore-daemonsets"],
                  ["preemption", "a"]]
INVALID = [  # objects the API server would reject
    ("pdb-min-available-negative", make_pdb("b", selector={"app": "a"}, min_available=-1), "minAvailable"),
    ("pdb-max-unavailable-negative", make_pdb("b", selector={"app": "a"}, max_unavailable=-3), "maxUnavailable"),
    ("pdb-percent-over-100", make_pdb("b", selector={"app": "a"}, min_available="150%"), "minAvailable"),
    ("pdb-both-set", make_pdb("b", selector={"app": "a"}, min_available=1, max_unavailable=1), "cannot both be set"),
    ("priority-class-above-user-range", {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                         "metadata": {"name": "huge"}, "value": 2_000_000_000}, "value"),
    ("deployment-negative-replicas", set_path(base_object("Deployment"), ("spec", "replicas"), -1), "replicas"),
    ("pod-negative-grace", make_pod("x", terminationGracePeriodSeconds=-5), "terminationGracePeriodSeconds"),
    ("pod-priority-beyond-int32", make_pod("x", priority=2 ** 31), "priority"),
    ("pod-max-skew-zero", make_pod("x", topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "z",
                                                                      "whenUnsatisfiable": "DoNotSchedule"}]), "maxSkew"),
    ("node-taint-bad-effect", make_node("n2", taints=[{"key": "k", "effect": "Sometimes"}]), "effect"),
    ("pod-toleration-bad-operator", make_pod("x", tolerations=[{"key": "k", "operator": "Like"}]), "operator"),
    ("pod-start-time-without-zone", make_pod("x", start="2026-11-22T09:00:00"), "startTime"),
    ("node-heartbeat-without-zone", make_node("n2", heartbeat="2026-11-22 09:00:00"), "lastHeartbeatTime"),
    ("pod-deletion-grace-negative", make_pod("x", meta={"deletionGracePeriodSeconds": -1}), "deletionGracePeriodSeconds"),
]
for cid, obj, expect in INVALID:
    add(Case(f"invalid-{cid}", "objects the API server rejects", EXPLAIN + ["--snapshot", "@TMP@/d.json"], 1,
             {"d.json": dump(make_pod("a", cpu="100m"), make_node("n1"), obj)}, expect=expect))

# -- 3. crashes, hangs and memory: nesting, aliases, sizes, special files ---------------------------------
DEEP_BLOCK = "".join(" " * i + f"k{i}:\n" for i in range(2000)) + " " * 2000 + "v\n"
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
PARSER = {
    "yaml-deep-block-mapping": (DEEP_BLOCK, "nested more than"),
    "yaml-deep-block-sequence": ("- " * 50_000 + "x\n", "nested more than"),
    "yaml-deep-mixed": ("".join(" " * (2 * i) + "- a:\n" for i in range(3000)), "nested more than"),
    "yaml-deep-flow": ("a: " + "[" * 100_000, "invalid YAML"),
    "yaml-deep-flow-maps": ("a: " + "{b: " * 50_000, "invalid YAML"),
    "yaml-alias-bomb": (BOMB, "aliases expand"),
    "yaml-recursive-alias": ("kind: Pod\nmetadata: &m {name: a, x: *m}\n", "invalid YAML"),
    "yaml-nan-priority": ("kind: Pod\napiVersion: v1\nmetadata: {name: a}\nspec: {priority: .nan, containers: []}\n",
                          "priority"),
    "yaml-inf-grace": ("kind: Pod\napiVersion: v1\nmetadata: {name: a}\nspec: {terminationGracePeriodSeconds: .inf}\n",
                       "terminationGracePeriodSeconds"),
    "yaml-huge-int": ("kind: Pod\napiVersion: v1\nmetadata: {name: a}\nspec: {priority: " + "9" * 400 + "}\n",
                      "priority"),
    "yaml-timestamp-without-zone": ("kind: Pod\napiVersion: v1\nmetadata: {name: a, creationTimestamp: "
                                    "'2026-11-22T09:00:00'}\n", "creationTimestamp"),
    "yaml-binary-tag": ("kind: !!binary aGVsbG8=\n", "kind"),
    "yaml-set-tag": ("kind: Pod\napiVersion: v1\nmetadata: !!set {a, b}\n", "metadata"),
    "yaml-python-object": ("kind: !!python/object:os.system {}\n", "invalid YAML"),
    "yaml-merge-key-bomb": ("a: &a {x: 1}\n" + "".join(f"k{i}: {{<<: *a}}\n" for i in range(100))
                           + "kind: Pod\n", "apiVersion"),
    "json-deep-array": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "json-deep-object": ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
    "json-nan": ('{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a"}, "spec": {"priority": NaN}}', "NaN"),
    "json-infinity": ('{"kind": "Pod", "spec": {"priority": -Infinity}}', "Infinity"),
    "json-huge-int": ('{"kind": "Pod", "n": ' + "9" * 5000 + "}", "invalid JSON"),
    "json-huge-float": ('{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a"}, "spec": {"priority": 1e999}}',
                        "priority"),
    "json-lone-surrogate": ('{"kind": "Pod\\ud800", "apiVersion": "v1", "metadata": {"name": "a"}}', ""),
    "json-duplicate-keys": ('{"kind": "Pod", "kind": 5, "apiVersion": "v1", "metadata": {"name": "a"}}', "kind"),
    "json-items-deep-list": (json.dumps({"kind": "List", "items": [[[[{"kind": "Pod"}]]]]}), "expected a Kubernetes"),
}
for cid, (text, expect) in PARSER.items():
    name = "d.json" if cid.startswith("json") else "d.yaml"
    add(Case(f"parser-{cid}", "parser crashes and bombs", EXPLAIN + ["--snapshot", f"@TMP@/{name}"], 1, {name: text},
             expect=expect, subprocess=cid.startswith("yaml-deep"), max_seconds=20))
    add(Case(f"parser-{cid}-manifest", "parser crashes and bombs",
             ["preemption", "-f", f"@TMP@/{name}", "--snapshot", DEMO, "--as-of", DEMO_NOW], 1, {name: text},
             subprocess=cid.startswith("yaml-deep"), max_seconds=20))

SPECIAL = {"dev-zero": "/dev/zero", "dev-urandom": "/dev/urandom", "fifo": "@TMP@/fifo", "directory-as-file": "@TMP@/dir",
           "dev-null": "/dev/null", "proc-self-mem": "/proc/self/mem"}
for sid, path in SPECIAL.items():
    files = {"fifo": "fifo"} if sid == "fifo" else ({"dir/": None} if sid == "directory-as-file" else {})
    add(Case(f"special-{sid}-as-snapshot", "non-regular files", EXPLAIN + ["--snapshot", path], 1, dict(files),
             max_seconds=10, subprocess=True),
        Case(f"special-{sid}-as-manifest", "non-regular files", ["preemption", "-f", path, "--snapshot", DEMO], 1 if
             sid != "directory-as-file" else 2, dict(files), max_seconds=10, subprocess=True),
        Case(f"special-{sid}-as-kubeconfig", "non-regular files", ["explain", "pod", "a", "--kubeconfig", path],
             1 if sid != "directory-as-file" else 2,
             dict(files), max_seconds=10, subprocess=True),
        Case(f"special-{sid}-as-token-file", "non-regular files", ["explain", "pod", "a"] + KC, 1,
             {**files, "kc.yaml": kubeconfig(user={"tokenFile": path})}, max_seconds=10, subprocess=True),
        Case(f"special-{sid}-as-ca-file", "non-regular files", ["explain", "pod", "a"] + KC, 1,
             {**files, "kc.yaml": kubeconfig("https://127.0.0.1:1", cluster={"certificate-authority": path})},
             max_seconds=10, subprocess=True),
        Case(f"special-{sid}-as-client-key", "non-regular files", ["explain", "pod", "a"] + KC, 1,
             {**files, "kc.yaml": kubeconfig("https://127.0.0.1:1", user={"client-certificate": path,
                                                                           "client-key": path})},
             max_seconds=10, subprocess=True))
add(Case("stdin-dev-zero", "non-regular files", EXPLAIN + ["--snapshot", "-"], 1, stdin="/dev/zero", subprocess=True,
         max_seconds=10, expect="not a text file"))

# -- 4. kubeconfigs typed as kubectl types them -------------------------------------------------------------
from kubectl_safety.cluster import kubeconfig as kc_module  # noqa: E402

KC_WRONG = {"string": ["x"], "boolean": ["false", "true", 0], "base64 data": ["%%%", 5], "list of strings": ["a", [1]]}


def kubeconfig_typed_cases():
    sections = [("cluster", kc_module.CLUSTER), ("user", kc_module.USER), ("context", kc_module.CONTEXT)]
    for section, fields in sections:
        for key, kind in fields.items():
            if isinstance(kind, (dict, type)) or kind is list:
                values = ["text", 5] if kind is not list else ["text"]
            elif kind == "string":
                values = [5, ["a"], True]
            else:
                values = KC_WRONG[kind]
            for i, value in enumerate(values):
                arg = {key: value}
                cfg = kubeconfig("https://127.0.0.1:1", user=arg if section == "user" else None,
                                 cluster=arg if section == "cluster" else None,
                                 context=arg if section == "context" else None)
                yield Case(f"kubeconfig-{section}-{key}-{i}", "kubeconfig types", ["explain", "pod", "a"] + KC, 1,
                           {"kc.yaml": cfg}, expect=re.escape(key))


add(*kubeconfig_typed_cases())
add(Case("kubeconfig-insecure-quoted-false-never-reaches-server", "kubeconfig types",
         ["explain", "pod", "a"] + KC, 1, {"kc.yaml": kubeconfig("@SRV@/m/echo-auth", cluster={
             "insecure-skip-tls-verify": "false"})}, expect="insecure-skip-tls-verify must be true or false"),
    Case("kubeconfig-yaml-quoted-false", "kubeconfig types", ["explain", "pod", "a"] + KC, 1,
         {"kc.yaml": "apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
                     "    insecure-skip-tls-verify: 'false'\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                     "current-context: x\nusers:\n- name: u\n  user: {token: " + TOKEN + "}\n"},
         expect="must be true or false"),
    Case("kubeconfig-deep-yaml", "kubeconfig types", ["explain", "pod", "a"] + KC, 1, {"kc.yaml": DEEP_BLOCK},
         expect="kubeconfig", subprocess=True),
    Case("kubeconfig-alias-bomb", "kubeconfig types", ["explain", "pod", "a"] + KC, 1, {"kc.yaml": BOMB},
         expect="kubeconfig"),
    Case("kubeconfig-contexts-scalar", "kubeconfig types", ["explain", "pod", "a"] + KC, 1,
         {"kc.yaml": "contexts: 5\n"}, expect="contexts must be a list"))

# -- 5. credentials never shown ------------------------------------------------------------------------------
CRED_SERVERS = {"refused": "@REFUSED@", "echo-401": "@SRV@/m/echo-auth", "echo-500": "@SRV@/m/echo-auth-500",
                "redirect": "@SRV@/m/redirect", "not-json": "@SRV@/m/not-json", "drip": "@SRV@/m/drip"}
CRED_USERS = {
    "token": {"token": TOKEN},
    "token-with-newline": {"token": TOKEN + "\n"},
    "token-with-crlf": {"token": TOKEN + "\r\n"},
    "basic-auth": {"username": "ann", "password": PASSWORD},
    "token-file-trailing-newline": {"tokenFile": "@TMP@/tok"},
    "exec-trailing-newline": exec_user(f"printf '%s\\n' '{credential(TOKEN + chr(10))}'"),
    "exec-crlf-token": exec_user(f"printf '%s' '{json.dumps(credential(EXEC_TOKEN + chr(13) + chr(10)))[1:-1]}'"),
    "exec-fails-printing-token": exec_user(f"echo 'token {EXEC_TOKEN}'; echo '{EXEC_TOKEN}' >&2; exit 3"),
    "exec-garbage-with-token": exec_user(f"echo 'not json {EXEC_TOKEN}'"),
}
for uid, user in CRED_USERS.items():
    for sid, server in CRED_SERVERS.items():
        code = 1
        add(Case(f"credentials-{uid}-{sid}", "credentials", ["explain", "pod", "a", "--request-timeout", "1s"] + KC,
                 code, {"kc.yaml": kubeconfig(server, user=user), "tok": TOKEN + "\n"}, subprocess=True, max_seconds=8))
for cid, server in {"url-password": f"http://ann:{URL_PASSWORD}@127.0.0.1:1",
                    "url-access-token": f"http://127.0.0.1:1/?access_token={ACCESS_TOKEN}",
                    "url-both": f"https://ann:{URL_PASSWORD}@127.0.0.1:1/p?access_token={ACCESS_TOKEN}&x=1",
                    "url-password-to-server": f"http://ann:{URL_PASSWORD}@@SRV_HOST@/m/echo-auth"}.items():
    for cmd in (["explain", "pod", "a"], ["version"], ["drain", "n1", "--dry-run"]):
        code = 0 if cmd == ["version"] else 1
        add(Case(f"credentials-{cid}-{cmd[0]}", "credentials", cmd + KC, code, {"kc.yaml": kubeconfig(server)},
                 subprocess=True, max_seconds=8))
add(Case("credentials-exec-secret-in-env-and-args", "credentials", ["explain", "pod", "a"] + KC, 1,
         {"kc.yaml": kubeconfig("@REFUSED@", user={"exec": {
             "apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/false", "args": [TOKEN],
             "env": [{"name": "SECRET", "value": PASSWORD}]}})}, subprocess=True),
    Case("credentials-debug-mode-still-redacts-errors", "credentials", ["explain", "pod", "a"] + KC, 1,
         {"kc.yaml": kubeconfig("@SRV@/m/echo-auth")}, env={"KUBECTL_SAFETY_DEBUG": "0"}, subprocess=True))

# -- 6. misbehaving servers: every request bounded --------------------------------------------------------------
SERVER_MODES = {
    "drip-headers": ("drip", "did not answer within"), "drip-body": ("drip-body", "did not answer within"),
    "endless-chunked": ("endless-chunked", "did not answer within|too large"),
    "endless-until-close": ("endless-close", "did not answer within|too large"),
    "body-trickles-forever-without-length": ("trickle", "did not answer within --request-timeout=2s"),
    "huge-content-length": ("huge-length", "too large"), "garbage-status-line": ("garbage-status", "unable to connect"),
    "not-http": ("not-http", "unable to connect"), "too-many-headers": ("too-many-headers", "unable to connect"),
    "header-line-too-long": ("long-header", "unable to connect"), "body-cut-short": ("cut-body", "unable to connect"),
    "bad-chunk-size": ("bad-chunk", "unable to connect"), "deep-json-array": ("deep-json", "nested too deeply|not an object"),
    "deep-json-object": ("deep-object", "nested too deeply"), "html-with-escapes": ("not-json", "not JSON"),
    "json-nan": ("nan", "not JSON"), "json-huge-number": ("huge-number", "not JSON"),
    "json-array": ("json-array", "not an object"), "items-not-a-list": ("items-not-list", "items must be a list"),
    "continue-forever-empty-pages": ("continue-forever", "more pages"), "continue-same-token": ("continue-same",
                                                                                                 "more pages"),
    "continue-not-a-string": ("continue-not-string", "more pages"), "hostile-403": ("hostile-message", "Forbidden"),
    "hostile-500-body": ("hostile-500", "Error from server"), "redirect": ("redirect", "Error from server"),
}
for sid, (mode, expect) in SERVER_MODES.items():
    for cmd in (["explain", "priorities"], ["drain", "n1", "--dry-run", "--no-capacity"]):
        add(Case(f"server-{sid}-{cmd[0]}", "misbehaving servers", cmd + ["--request-timeout", "2s"] + KC, 1,
                 {"kc.yaml": kubeconfig(f"@SRV@/m/{mode}")}, expect=expect, subprocess=True, max_seconds=8))
add(Case("server-body-trickles-forever-without-length-explain-pod", "misbehaving servers",
         ["explain", "pod", "a", "--request-timeout", "2s"] + KC, 1, {"kc.yaml": kubeconfig("@SRV@/m/trickle")},
         expect=r"^error: the server \S+ did not answer within --request-timeout=2s\n$", subprocess=True, max_seconds=8))
for cmd in (["explain", "priorities"], ["drain", "n1", "--dry-run", "--no-capacity"]):  # the kubernetes client's path
    add(Case(f"server-proxy-drips-headers-{cmd[0]}", "misbehaving servers", cmd + ["--request-timeout", "2s"] + KC, 1,
             {"kc.yaml": kubeconfig("http://127.0.0.1:1", cluster={"proxy-url": "@SRV@"})},
             expect="did not answer within", subprocess=True, max_seconds=8))
add(Case("server-exec-plugin-never-returns", "misbehaving servers", ["explain", "pod", "a"] + KC, 1,
         {"kc.yaml": kubeconfig("@REFUSED@", user=exec_user("sleep 30"))},
         env={"KUBECTL_SAFETY_EXEC_TIMEOUT": "1"}, expect="no answer within", subprocess=True, max_seconds=8),
    Case("server-exec-plugin-endless-output", "misbehaving servers", ["explain", "pod", "a"] + KC, 1,
         {"kc.yaml": kubeconfig("@REFUSED@", user=exec_user("yes"))}, expect="larger than", subprocess=True,
         max_seconds=15))

# -- 7. signals and closed or full output -----------------------------------------------------------------------
add(Case("signal-sigterm-during-slow-request", "signals and output", ["explain", "priorities"] + KC, 130,
         {"kc.yaml": kubeconfig("@SRV@/m/drip")}, subprocess=True, sigterm_after=1.0, expect="interrupted"),
    Case("signal-sigterm-during-exec-plugin", "signals and output", ["explain", "priorities"] + KC, 130,
         {"kc.yaml": kubeconfig("@REFUSED@", user=exec_user("sleep 20"))}, subprocess=True, sigterm_after=1.0,
         expect="interrupted"),
    Case("signal-sigterm-during-analysis", "signals and output", ["drain", "n1", "--dry-run", "--snapshot",
                                                                   "@TMP@/big.json", "--as-of", DEMO_NOW],
         130, {"big.json": "big"}, subprocess=True, sigterm_after=1.2, expect="interrupted"),
    Case("signal-sigterm-leaves-no-key-file", "signals and output", ["explain", "priorities"] + KC, 130,
         {"kc.yaml": kubeconfig("https://127.0.0.1:1", user={"client-certificate-data": "@CERT@",
                                                              "client-key-data": "@KEY@", **exec_user("sleep 20")})},
         env={"TMPDIR": "@TMP@/tmp"}, subprocess=True, sigterm_after=1.0, expect="interrupted"),
    # a closed stdout ends quietly with exit 1, as click does (the output was not delivered)
    Case("output-stdout-closed", "signals and output", ["explain", "priorities", "--snapshot", DEMO], 1,
         subprocess=True, stdout="closed"),
    Case("output-stdout-closed-json", "signals and output", ["explain", "priorities", "-o", "json", "--snapshot", DEMO],
         1, subprocess=True, stdout="closed"),
    Case("output-stdout-full", "signals and output", ["explain", "priorities", "--snapshot", DEMO], 1,
         subprocess=True, stdout="full", expect="No space left"),
    Case("output-stdout-full-yaml", "signals and output", ["explain", "priorities", "-o", "yaml", "--snapshot", DEMO], 1,
         subprocess=True, stdout="full", expect="No space left"),
    Case("output-stdout-closed-drain", "signals and output", ["drain", "node-a1", "--dry-run", "--ignore-daemonsets",
                                                                "--snapshot", DEMO, "--as-of", DEMO_NOW], 1,
         subprocess=True, stdout="closed"))

# -- 8. flags that end up in headers, paths and messages -----------------------------------------------------
FLAGS = {
    "as-header-injection": (["--as", "bob\r\nAuthorization: Bearer x"], "line breaks"),
    "as-group-header-injection": (["--as", "bob", "--as-group", "g\nX-Evil: 1"], "line breaks"),
    "namespace-path-traversal": (["-n", "../../api/v1/secrets"], "not found|Error from server|unable to connect"),
    "namespace-with-escape": (["-n", "ns\x1b]0;t\x07"], "Forbidden"),
    "context-with-escape": (["--context", "c\x1b[31m"], "context"),
    "context-with-newline": (["--context", "c\nerror: forged"], "context"),
    "now-without-zone": (["--now", "2026-11-22T09:00:00"], "RFC 3339"),
    "now-huge-year": (["--now", "99999-01-01T00:00:00Z"], "RFC 3339"),
    "request-timeout-nan": (["--request-timeout", "nan"], "request-timeout"),
    "request-timeout-huge": (["--request-timeout", "1e400s"], "request-timeout"),
}
for fid, (flags, expect) in FLAGS.items():
    code = 2 if fid.startswith(("request-timeout", "now-")) else 1
    add(Case(f"flags-{fid}", "flags into headers and paths", ["explain", "pod", "a"] + flags + KC, code,
             {"kc.yaml": kubeconfig("@SRV@/m/forbidden")}, expect=expect))

CLASSES = {}
for _case in CASES:
    CLASSES[_case.cls] = CLASSES.get(_case.cls, 0) + 1


# -- running -------------------------------------------------------------------------------------------------
def big_dump() -> str:
    nodes = [make_node(f"n{i}") for i in range(1000)]
    pods = [make_pod(f"p{i}", node=f"n{i % 1000}", cpu="10m") for i in range(150_000)]  # analysis outlasts 1.2 s
    return dump(*nodes, *pods)


def client_pair(tmp_path):
    from tests.unit.loopback import self_signed

    cert, key, _ = self_signed(tmp_path, ["alice"])
    return base64.b64encode(cert.read_bytes()).decode(), base64.b64encode(key.read_bytes()).decode()


def prepare(case, tmp_path, server_url):
    table = {"@TMP@": str(tmp_path), "@SRV_HOST@": server_url.split("//", 1)[1], "@SRV@": server_url,
             "@REFUSED@": "https://127.0.0.1:1"}
    if any("@CERT@" in str(v) for v in case.files.values()):
        table["@CERT@"], table["@KEY@"] = client_pair(tmp_path)
    (tmp_path / "tmp").mkdir(exist_ok=True)

    def sub(text):
        for key, value in table.items():
            text = text.replace(key, value)
        return text

    for name, content in case.files.items():
        path = tmp_path / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        elif content == "fifo":
            os.mkfifo(path)
        elif content == "big":
            path.write_text(big_dump())
        else:
            path.write_bytes(content if isinstance(content, bytes) else sub(content).encode("utf-8", "surrogatepass"))
    return [sub(a) for a in case.args], {k: sub(v) for k, v in case.env.items()}


def run_subprocess(case, args, env):
    full_env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBECTL_SAFETY_DEBUG")}
    full_env.update(env)
    stdin = subprocess.DEVNULL
    if case.stdin == "/dev/zero":
        stdin = open("/dev/zero", "rb")
    stdout = subprocess.PIPE if case.stdout != "full" else open("/dev/full", "w")
    proc = subprocess.Popen([sys.executable, "-m", "kubectl_safety", *args], stdin=stdin, stdout=stdout,
                            stderr=subprocess.PIPE, env=full_env)
    if case.stdout == "closed":
        proc.stdout.close()
    if case.sigterm_after:
        time.sleep(case.sigterm_after)
        assert proc.poll() is None, "finished before the signal: the case tests nothing"
        if "TMPDIR" in env:  # key material never on disk, even while running
            assert not [f for f in os.listdir(env["TMPDIR"]) if f.startswith("kubectl-safety-")]
        proc.send_signal(signal.SIGTERM)
    try:
        out = b"" if case.stdout else proc.stdout.read()
        err = proc.stderr.read()
        proc.wait(timeout=case.max_seconds + 10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def check_output(case, code, out, err, elapsed, tmp_path):
    text = out + err
    assert code in (case.code if isinstance(case.code, tuple) else (case.code,)), \
        f"exit {code}, expected {case.code}\nstderr: {err[-1500:]}"
    assert "Traceback" not in text and "internal error" not in text, err[-3000:]
    bad = FORBIDDEN_OUTPUT.search(text)
    assert bad is None, f"raw control character {bad.group()!r} in output: {text[max(0, bad.start() - 80):bad.end() + 80]!r}"
    for secret in SECRETS:
        assert secret not in text, f"credential shown: {text[:2000]!r}"
    lines = [line for line in err.splitlines() if line and not line.startswith("warning: ")]
    if code != 0 and case.stdout != "closed":  # (a closed stdout ends quietly)
        assert len(lines) <= 1 + (code == 130), f"more than one line on stderr: {err!r}"
        if code != 3:  # (3: unsafe or refused, said by the report itself)
            assert lines and (lines[-1].startswith("error: ") or lines[-1] == "interrupted"), err
    if case.expect:
        assert re.search(case.expect, err), f"{case.expect!r} not in {err!r}"
    assert elapsed <= case.max_seconds, f"took {elapsed:.1f}s"
    if case.sigterm_after:  # no key material or private directory left behind
        assert not list((tmp_path / "tmp").glob("kubectl-safety-*"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case, tmp_path, hostile_server):  # noqa: F811
    args, env = prepare(case, tmp_path, hostile_server)
    start = time.monotonic()
    if args[0] == "@SWEEP@":  # one input, every command that reads it
        for command in SWEEP_COMMANDS:
            code, out, err = run_cli(command + args[1:])
            check_output(case, code, out, err, time.monotonic() - start, tmp_path)
        return
    if case.subprocess or env or case.stdin:
        code, out, err = run_subprocess(case, args, env)
    else:
        code, out, err = run_cli(args)
    check_output(case, code, out, err, time.monotonic() - start, tmp_path)


def test_corpus_covers_every_class_with_300_inputs():
    assert len(CASES) >= 300 and len({c.id for c in CASES}) == len(CASES)
    assert len(CLASSES) >= 8 and min(CLASSES.values()) >= 9, CLASSES


@pytest.mark.parametrize("leak", [f"\x1b[31m", "\x9b", "\u202e", f"token {TOKEN}", "Traceback (most recent"])
def test_the_checks_would_catch_a_leak(leak, tmp_path):
    case = Case("x", "x", [], 1)
    with pytest.raises(AssertionError):
        check_output(case, 1, "", f"error: {leak}\n", 0.1, tmp_path)


if __name__ == "__main__":
    for name, count in CLASSES.items():
        print(f"{count:5d}  {name}")
    print(f"{len(CASES):5d}  total")


@pytest.mark.parametrize("written, shown", [
    ("\x1b]0;title\x07ok\n", "\\x1b]0;title\\x07ok\n"),
    ("\r\x1b[Kdraining 3/5", "\r\x1b[Kdraining 3/5"),  # our own progress redraw stays
    ("name\tvalue\n", "name\tvalue\n"),
    ("a\u202eb\x9bc\n", "a\\u202eb\\x9bc\n"),
], ids=["osc-title", "own-progress-redraw", "tabs-and-newlines", "bidi-and-c1"])
def test_every_write_to_the_terminal_is_made_safe(written, shown):
    """The CLI's stdout/stderr wrapper: the last line of defence behind every print site."""
    import io

    from kubectl_safety.printable import SafeStream

    out = io.StringIO()
    SafeStream(out).write(written)
    assert out.getvalue() == shown
