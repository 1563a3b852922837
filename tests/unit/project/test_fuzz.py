"""Fuzzing: the dump reader, the snapshot parser and the explain commands never raise a traceback.

Anything that goes wrong must be a ``SafetyError`` (one ``error:`` line and an exit code) or a
clean result. Three levels: raw text into ``dump.parse_documents``; arbitrary JSON-like
documents into ``parse.build_snapshot``; and realistic objects (from the builders) with one to
four fields replaced by wrong-typed or out-of-range values, fed as a dump to ``explain pod``,
``explain node`` and ``explain priorities`` with ``KUBECTL_SAFETY_DEBUG=1`` (so any exception
other than a SafetyError escapes with its traceback). Example counts are bounded and derandomized
so the module runs in well under a minute and fails the same way every time.
"""

import copy
import io
import json
import os
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_safety.cli.main import main
from kubectl_safety.cluster.dump import parse_documents
from kubectl_safety.errors import SafetyError
from kubectl_safety.model.parse import build_snapshot, flatten
from tests.builders import container, make_class, make_node, make_pdb, make_pod, make_workload

FUZZ = settings(max_examples=100, deadline=None, derandomize=True, database=None, report_multiple_bugs=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NOW = "2026-11-22T09:00:00Z"
# what a terminal acts on: C0 and C1 controls, DEL, bidi overrides and isolates, line separators
CONTROL = set(map(chr, range(0x20))) | set(map(chr, range(0x7f, 0xa0))) | set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")

# -- values -----------------------------------------------------------------------------------
QUANTITY_LIKE = st.sampled_from(["100m", "1", "0", "-1", "1.5Gi", "1e3", "1E-3", "2Ki", ".5", "1.", "+3",
                                 "0.0001m", "9" * 40, "1Zi", "Gi", "", " ", "1 Gi", "0x10", "∞", "1e999999"])
TIMES = st.sampled_from(["2026-11-22T09:00:00Z", "2026-11-22T09:00:00.123456+02:00", "1970-01-01T00:00:00Z",
                         "9999-12-31T23:59:59Z", "yesterday", "2026-13-45T99:99:99Z", "", "0"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
                    QUANTITY_LIKE, TIMES)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)

# -- field paths that the analyses read, per kind ------------------------------------------------------
C0 = ("spec", "containers", 0)
POD_PATHS = [
    ("metadata", "name"), ("metadata", "namespace"), ("metadata", "labels"), ("metadata", "labels", "app"),
    ("metadata", "annotations"), ("metadata", "ownerReferences"), ("metadata", "ownerReferences", 0),
    ("metadata", "ownerReferences", 0, "controller"), ("metadata", "ownerReferences", 0, "kind"),
    ("metadata", "deletionTimestamp"), ("metadata", "deletionGracePeriodSeconds"), ("metadata", "creationTimestamp"),
    ("metadata", "finalizers"), ("metadata", "uid"), ("spec",), ("spec", "containers"), C0, C0 + ("name",),
    C0 + ("resources",), C0 + ("resources", "requests"), C0 + ("resources", "requests", "cpu"),
    C0 + ("resources", "requests", "memory"), C0 + ("resources", "limits"), C0 + ("resources", "limits", "cpu"),
    C0 + ("resources", "limits", "memory"), C0 + ("lifecycle",), C0 + ("lifecycle", "preStop"), C0 + ("ports",),
    C0 + ("livenessProbe",), C0 + ("startupProbe", "terminationGracePeriodSeconds"),
    ("spec", "initContainers"), ("spec", "initContainers", 0), ("spec", "initContainers", 0, "restartPolicy"),
    ("spec", "priority"), ("spec", "priorityClassName"), ("spec", "preemptionPolicy"),
    ("spec", "terminationGracePeriodSeconds"), ("spec", "nodeName"), ("spec", "tolerations"),
    ("spec", "tolerations", 0), ("spec", "nodeSelector"), ("spec", "affinity"), ("spec", "affinity", "nodeAffinity"),
    ("spec", "topologySpreadConstraints"), ("spec", "topologySpreadConstraints", 0),
    ("spec", "topologySpreadConstraints", 0, "maxSkew"), ("spec", "topologySpreadConstraints", 0, "labelSelector"),
    ("spec", "overhead"), ("spec", "resources"), ("spec", "volumes"), ("spec", "volumes", 0),
    ("status",), ("status", "phase"), ("status", "conditions"), ("status", "conditions", 0),
    ("status", "conditions", 0, "status"), ("status", "startTime"), ("status", "qosClass"),
    ("status", "nominatedNodeName"), ("status", "containerStatuses"),
]
NODE_PATHS = [
    ("metadata", "labels"), ("metadata", "labels", "topology.kubernetes.io/zone"), ("spec",), ("spec", "taints"),
    ("spec", "taints", 0), ("spec", "unschedulable"), ("status",), ("status", "allocatable"),
    ("status", "allocatable", "cpu"), ("status", "allocatable", "memory"), ("status", "allocatable", "pods"),
    ("status", "capacity"), ("status", "capacity", "memory"), ("status", "conditions"),
    ("status", "conditions", 0), ("status", "conditions", 0, "status"), ("status", "conditions", 0, "lastHeartbeatTime"),
]
PDB_PATHS = [
    ("spec",), ("spec", "selector"), ("spec", "selector", "matchLabels"), ("spec", "selector", "matchExpressions"),
    ("spec", "minAvailable"), ("spec", "maxUnavailable"), ("spec", "unhealthyPodEvictionPolicy"),
    ("status",), ("status", "disruptionsAllowed"), ("status", "currentHealthy"), ("status", "desiredHealthy"),
    ("status", "expectedPods"), ("status", "disruptedPods"), ("status", "observedGeneration"), ("metadata", "generation"),
]
CLASS_PATHS = [("value",), ("globalDefault",), ("preemptionPolicy",), ("metadata", "name")]
WORKLOAD_PATHS = [("spec",), ("spec", "replicas"), ("spec", "selector"), ("spec", "selector", "matchLabels"),
                  ("spec", "template"), ("metadata", "ownerReferences"), ("metadata", "uid")]


def base_objects() -> list:
    """A small consistent cluster: the fuzz target pod ``a`` on node ``n1``, with owner, PDB and class."""
    return [
        make_node("n1", zone="z1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        make_node("n2", zone="z2"),
        make_pod("a", cpu="100m", memory="64Mi", labels={"app": "a"}, priority_class="high",
                 tolerations=[{"key": "k", "operator": "Exists"}],
                 topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                             "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchLabels": {"app": "a"}}}]),
        make_pod("b", node="n2", containers=[container(requests={"cpu": "1"}, limits={"cpu": "1"})],
                 labels={"app": "a"}, initContainers=[container("init", restartPolicy="Always")]),
        make_pdb("a", selector={"app": "a"}, min_available=1, allowed=1),
        make_class("high", 1000),
        make_workload("ReplicaSet", "rs", replicas=2, labels={"app": "a"}),
    ]


PATHS = {"Pod": POD_PATHS, "Node": NODE_PATHS, "PodDisruptionBudget": PDB_PATHS, "PriorityClass": CLASS_PATHS,
         "ReplicaSet": WORKLOAD_PATHS}


def set_path(obj, path, value):
    """Set ``obj[path] = value``, creating missing maps; a path through a non-container is skipped."""
    target = obj
    for key in path[:-1]:
        if isinstance(target, dict):
            target = target.setdefault(key, {} if not isinstance(key, int) else [])
        elif isinstance(target, list) and isinstance(key, int) and key < len(target):
            target = target[key]
        else:
            return
    last = path[-1]
    if isinstance(target, dict):
        target[last] = value
    elif isinstance(target, list) and isinstance(last, int) and last < len(target):
        target[last] = value


@st.composite
def mutated_cluster(draw):
    """The base cluster with 1-4 fields of its objects replaced by arbitrary JSON values."""
    objects = copy.deepcopy(base_objects())
    for _ in range(draw(st.integers(1, 4))):
        obj = draw(st.sampled_from(objects))
        path = draw(st.sampled_from(PATHS[obj["kind"]]))
        set_path(obj, path, draw(JSON))
    return objects


def run_debug(args, stdin: str):
    """Run the CLI with ``KUBECTL_SAFETY_DEBUG=1``: a SafetyError or any bug propagates as raised."""
    old_env, old_stdin = os.environ.get("KUBECTL_SAFETY_DEBUG"), sys.stdin
    os.environ["KUBECTL_SAFETY_DEBUG"] = "1"
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main(list(args))
    except SystemExit as e:
        return e.code, out.getvalue(), err.getvalue()
    finally:
        sys.stdin = old_stdin
        if old_env is None:
            os.environ.pop("KUBECTL_SAFETY_DEBUG", None)
        else:
            os.environ["KUBECTL_SAFETY_DEBUG"] = old_env


COMMANDS = [["explain", "pod", "a"], ["explain", "pod", "b"], ["explain", "node", "n1"], ["explain", "priorities"]]


@FUZZ
@given(cluster=mutated_cluster(), output=st.sampled_from(["table", "wide", "json", "yaml"]))
def test_explain_commands_on_mutated_objects(cluster, output):
    """Every explain command on a cluster with wrong-typed fields: a clean result or a SafetyError."""
    dump = json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster})
    for args in COMMANDS:
        try:
            code, out, err = run_debug(args + ["--snapshot", "-", "--as-of", NOW, "-o", output], dump)
        except SafetyError:
            continue
        assert code == 0 and out, (args, code, err)
        assert "internal error" not in err
        assert not CONTROL & set(out + err) - {"\n", "\t"}, "a control character reached the terminal"


KINDS = st.sampled_from(["Pod", "Node", "PodDisruptionBudget", "PriorityClass", "ReplicaSet", "Deployment",
                         "StatefulSet", "DaemonSet", "Job", "CronJob", "Namespace", "List", "PodList", "Other"])


@st.composite
def raw_documents(draw):
    """Object-shaped dicts whose fields are anything: kind/apiVersion/metadata present or not."""
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        doc = draw(st.dictionaries(st.sampled_from(["spec", "status", "items", "value", "x"]), JSON, max_size=3))
        if draw(st.booleans()):
            doc["kind"] = draw(st.one_of(KINDS, JSON))
        if draw(st.booleans()):
            doc["apiVersion"] = draw(st.sampled_from(["v1", "apps/v1", None, 3]))
        if draw(st.booleans()):
            doc["metadata"] = draw(st.one_of(
                st.fixed_dictionaries({"name": st.one_of(st.sampled_from(["a", "n1", "b"]), JSON)},
                                      optional={"namespace": st.one_of(st.just("default"), JSON),
                                                "labels": JSON, "annotations": JSON, "ownerReferences": JSON}),
                JSON))
        docs.append(doc)
    return draw(st.one_of(st.just(docs), JSON.map(lambda extra: docs + [extra])))


@FUZZ
@given(docs=raw_documents())
def test_build_snapshot_on_arbitrary_documents(docs):
    """flatten + build_snapshot + every lookup: a snapshot or an InputError, nothing else."""
    try:
        pairs = [pair for i, doc in enumerate(docs) for pair in flatten(copy.deepcopy(doc), f"doc {i}")]
        snap = build_snapshot(pairs)
    except SafetyError:
        return
    for pod in snap.pods:
        try:
            snap.pdbs_for(pod), snap.owner_chain(pod), snap.priority_class(pod.priority_class_name)
        except SafetyError:
            pass


@FUZZ
@given(docs=raw_documents(), output=st.sampled_from(["json", "table"]))
def test_explain_commands_on_arbitrary_documents(docs, output):
    """The same documents through the CLI: exit 0 with output, or a SafetyError."""
    dump = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, default=str)
    for args in COMMANDS[:1] + COMMANDS[2:]:
        try:
            code, out, err = run_debug(args + ["--snapshot", "-", "--as-of", NOW, "-o", output], dump)
        except SafetyError:
            continue
        assert code == 0 and out, (args, code, err)
        assert not CONTROL & set(out + err) - {"\n", "\t"}, "a control character reached the terminal"


YAMLISH = st.text(alphabet="{}[]:,-?'\"\n\t #&*!|>%@`\\ abcn01.eE~\x00\ufeff\u2028é", max_size=300)


@FUZZ
@given(text=st.one_of(YAMLISH, st.text(max_size=300),
                      st.builds(lambda d: json.dumps(d)[: len(json.dumps(d)) // 2], JSON)))
def test_parse_documents_on_arbitrary_text(text):
    """Raw text (YAML-ish, arbitrary unicode, truncated JSON): a list of documents or an InputError."""
    try:
        docs = parse_documents(text, "fuzz.yaml")
    except SafetyError as e:
        assert "\n" not in str(e), str(e)
        return
    assert isinstance(docs, list)


@pytest.mark.parametrize("text", ["a: " + "[" * 5000, "[" * 5000, "- " * 3000 + "x", "{a: " * 2000])
def test_parse_documents_deep_nesting_under_the_crash_depth(text):
    """Nesting deep enough to exhaust Python's recursion (but below libyaml's C stack crash)."""
    try:
        parse_documents(text, "deep.yaml")
    except SafetyError:
        pass


# -- the kubeconfig loader and the output properties ------------------------------------------------
from kubectl_safety.cluster import kubeconfig as kc  # noqa: E402
from kubectl_safety.errors import ClusterError  # noqa: E402
from kubectl_safety.printable import for_terminal, printable, redact, register_secret  # noqa: E402

FUZZ_TOKEN = "fuzz-token-9f8e7d6c5b4a"


def kubeconfig_values(schema_value):
    """A value of the right type for a clientcmd field, or anything at all."""
    right = {kc.S: st.sampled_from(["https://127.0.0.1:1", "c", "", "x\x1b[31m", FUZZ_TOKEN]),
             kc.B: st.booleans(), kc.BYTES: st.sampled_from(["", "%%", "aGVsbG8="]),
             kc.STRS: st.lists(st.text(max_size=4), max_size=2)}.get(schema_value, JSON)
    return st.one_of(right, JSON)


@st.composite
def kubeconfigs(draw):
    def section(fields):
        keys = draw(st.lists(st.sampled_from(sorted(fields)), max_size=4, unique=True))
        return {k: draw(kubeconfig_values(fields[k] if isinstance(fields[k], str) else None)) for k in keys}

    cfg = {"current-context": draw(st.one_of(st.just("x"), JSON)),
           "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", **section(kc.CLUSTER)}}],
           "users": [{"name": "u", "user": {"token": FUZZ_TOKEN, **section(kc.USER)}}],
           "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", **section(kc.CONTEXT)}}]}
    for key in draw(st.lists(st.sampled_from(["clusters", "users", "contexts", "current-context"]), max_size=1)):
        cfg[key] = draw(JSON)  # a whole section of the wrong shape now and then
    return cfg


@FUZZ
@given(cfg=kubeconfigs(), as_yaml=st.booleans())
def test_kubeconfig_loader_on_arbitrary_files(cfg, as_yaml, tmp_path_factory):
    """An Endpoint, None (the kubernetes client's cases) or one printable ClusterError line without the token."""
    import yaml

    register_secret(FUZZ_TOKEN)
    path = tmp_path_factory.mktemp("kc") / "config"
    path.write_text(yaml.safe_dump(cfg) if as_yaml else json.dumps(cfg, default=str))
    try:
        endpoint = kc.resolve(str(path))
    except ClusterError as e:
        shown = for_terminal(e)
        assert "\n" not in shown and FUZZ_TOKEN not in shown and not CONTROL & set(shown), shown
        return
    if endpoint is not None:
        assert endpoint.host.startswith(("http://", "https://"))
        insecure = cfg["clusters"][0]["cluster"].get("insecure-skip-tls-verify")
        assert endpoint.verify is (insecure is not True)  # only a real true turns verification off


@FUZZ
@given(text=st.text(max_size=200))
def test_printable_leaves_nothing_a_terminal_acts_on(text):
    shown = printable(text)
    assert not CONTROL & set(shown) and "\n" not in shown
    if text.isprintable():
        assert shown == text


@FUZZ
@given(prefix=st.text(max_size=20), secret=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._~", min_size=8,
                                                    max_size=30), suffix=st.text(max_size=20),
       shape=st.sampled_from(["Authorization: Bearer {s}", "https://ann:{s}@host:6443/api", "https://h/?access_token={s}",
                              "{{\"token\": \"{s}\"}}", "password={s}", "token: {s}"]))
def test_redact_removes_credentials_in_every_shape(prefix, secret, suffix, shape):
    """Unregistered secrets in the shapes messages carry them (headers, URLs, JSON, exec output)."""
    shown = redact(prefix + " " + shape.format(s=secret) + " " + suffix)
    assert secret not in shown.replace(prefix, "").replace(suffix, "")
