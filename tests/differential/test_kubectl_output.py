"""The real kubectl, offline: the same templates and flag spellings over the same object, ours and kubectl's.

It runs the kubectl binary built for the local control plane (or the one on PATH); in CI a missing binary fails.
"""

import functools
import json
import os
import re
import shutil
import subprocess

import pytest

from kubectl_safety.cli.gotemplate import render as go_template
from kubectl_safety.cli.jsonpath import render as jsonpath
from tests.ci import in_ci
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

CLOCK = ["--snapshot", DEMO, "--as-of", DEMO_NOW]


@functools.cache
def kubectl_binary():
    """The kubectl built for the local control plane (asked when a test runs: the build may still be going)."""
    from controlplane.cluster import default_bin_dir

    built = default_bin_dir() / "kubectl"
    return str(built) if built.exists() else shutil.which("kubectl")


@pytest.fixture
def needs_kubectl():
    """In CI (CI set) the comparison with the real kubectl must run: a missing binary fails, never skips."""
    if kubectl_binary() is None:
        if in_ci():
            pytest.fail("no kubectl binary (controlplane/build.sh builds one)", pytrace=False)
        pytest.skip("no kubectl binary (controlplane/build.sh builds one)")
CONFIGMAP = ["create", "configmap", "cm", "--from-literal=a=1", "--from-literal=b.c=x", "--dry-run=client"]


def kubectl(*args):
    env = dict(os.environ, KUBECONFIG=os.devnull)
    proc = subprocess.run([kubectl_binary(), *CONFIGMAP, *args], capture_output=True, text=True, env=env, timeout=30)
    return proc.returncode, proc.stdout, proc.stderr


JSONPATHS = ["{.metadata.name}", "{.data}", "{.data.a}", "{.data['b.c']}", "{.data.b\\.c}", "{.data['a','b.c']}",
             "{range .data.*}[{@}]{end}", "{$.kind} {.apiVersion}", '{.metadata.name}{"\\t"}{.kind}{"\\n"}',
             "{.metadata.labels}", "{..a}", "x{.nope}y"]
MAP_WILDCARDS = {"{range .data.*}[{@}]{end}"}  # over a map: the same items, in no fixed order
GO_TEMPLATES = ["{{.metadata.name}}", "{{.data}}", "{{.nope}}", "{{range $k, $v := .data}}{{$k}}={{$v}};{{end}}",
                "{{len .data}}", '{{index .data "b.c"}}', "{{if .data}}y{{else}}n{{end}}", "{{- .kind }} {{ .apiVersion -}}"]


@pytest.mark.usefixtures("needs_kubectl")
@pytest.mark.parametrize("kind, template, ours", [("jsonpath", t, jsonpath) for t in JSONPATHS]
                         + [("go-template", t, go_template) for t in GO_TEMPLATES])
def test_templates_print_what_kubectl_prints(kind, template, ours):
    code, obj, err = kubectl("-o", "json")
    assert code == 0, err
    code, expected, err = kubectl("-o", f"{kind}={template}")
    assert code == 0, err
    got = ours(template, json.loads(obj))
    if template in MAP_WILDCARDS:  # kubectl walks a map's values in Go's random key order
        assert sorted(re.findall(r"\[[^]]*]", got)) == sorted(re.findall(r"\[[^]]*]", expected))
    else:
        assert got == expected


@pytest.mark.usefixtures("needs_kubectl")
@pytest.mark.parametrize("args, ours", [
    (["-n=shop", "-o=jsonpath={.metadata.namespace}"], ["rebalance", "-n=shop", "--dry-run", "-o=jsonpath={.scope.namespace}"]),
    (["--namespace=shop", "-ojsonpath={.metadata.namespace}"],
     ["rebalance", "--namespace=shop", "--dry-run", "-ojsonpath={.scope.namespace}"]),
], ids=["short-equals", "long-equals-and-attached"])
def test_flag_spellings_read_as_kubectl_reads_them(args, ours):
    code, theirs, err = kubectl(*args)
    assert code == 0, err
    code, out, err = run_cli(ours + CLOCK)
    assert (code, out) == (0, theirs)


@pytest.mark.usefixtures("needs_kubectl")
@pytest.mark.parametrize("value, accepted", [("1h30m", True), ("500ms", True), ("30", True), ("5x", False),
                                           ("1.5", False)])
def test_request_timeout_values_as_kubectl(value, accepted):
    code, _, _ = kubectl("-o", "name", f"--request-timeout={value}")
    assert (code == 0) is accepted
    from kubectl_safety.cluster.live import parse_timeout
    from kubectl_safety.errors import UsageError

    try:
        parse_timeout(value)
        ours = True
    except UsageError:
        ours = False
    assert ours is accepted
