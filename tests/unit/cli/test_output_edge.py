"""Where the output goes away or the environment says odd things: stdout closed or a reader that
stops early, KUBECTL_SAFETY_DEBUG's false values, a completion variable that names no shell."""

import json
import os
import subprocess
import sys

import pytest

from kubectl_safety.cli.main import main
from kubectl_safety.errors import NotFoundError
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli
from tests.unit.terminal import REPO, environment

SNAPSHOT = ["--snapshot", DEMO, "--as-of", DEMO_NOW]


def _kubectl_safety(args, close=(), env=None, stdout=subprocess.PIPE):
    """``python -m kubectl_safety ARGS`` with the file descriptors ``close`` closed, as ``>&-`` does."""
    return subprocess.Popen([sys.executable, "-m", "kubectl_safety", *args], cwd=REPO, env=env or environment(),
                            stdout=stdout, stderr=subprocess.PIPE, preexec_fn=lambda: [os.close(fd) for fd in close])


@pytest.mark.parametrize("args", [
    ["drain", "node-a2", "--dry-run", "--ignore-daemonsets", *SNAPSHOT],
    ["explain", "priorities", "-o", "json", *SNAPSHOT],
    ["--help"],
    ["version", "--client"],
], ids=["drain-dry-run", "explain-json", "help", "version"])
def test_stdout_closed_is_one_error_line_and_exit_1(args):
    proc = _kubectl_safety(args, close=(1,), stdout=None)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode()) == (1, "error: cannot write the output: stdout is closed\n")


def test_stderr_closed_still_runs_the_command():
    proc = _kubectl_safety(["drain", "node-a2", "--dry-run", "--ignore-daemonsets", "-o", "json", *SNAPSHOT],
                           close=(2,))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3  # NOT SAFE, as with stderr open
    assert json.loads(out)["kind"] == "DrainPlan"


@pytest.fixture(scope="module")
def big_dump(tmp_path_factory):
    """A dump whose dry run prints far more than a pipe holds (so the writer meets the closed pipe)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import generate
    finally:
        sys.path.pop(0)
    return generate.write(4, str(tmp_path_factory.mktemp("big")), seed=3)


@pytest.mark.parametrize("output", ["table", "json", "name"])
def test_a_reader_that_stops_early_gets_no_traceback(big_dump, output):
    proc = _kubectl_safety(["drain", "-l", "!absent", "--dry-run", "--ignore-daemonsets", "-o", output,
                            "--snapshot", big_dump])
    first = proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.strip()
    assert "Traceback" not in err and "Exception" not in err and "Error" not in err, err
    assert proc.returncode in (1, 3), err  # the pipe's error, or the plan's verdict when all of it was written


@pytest.mark.parametrize("value", ["false", "0", "", "no", "off", "False"])
def test_a_false_kubectl_safety_debug_keeps_errors_to_one_line(monkeypatch, value):
    monkeypatch.setenv("KUBECTL_SAFETY_DEBUG", value)
    code, out, err = run_cli(["explain", "pod", "nope", *SNAPSHOT])
    assert (code, out, err) == (1, "", 'error: pod "nope" not found in namespace "default"\n')


@pytest.mark.parametrize("value", ["1", "true", "yes", "on", "TRUE"])
def test_a_true_kubectl_safety_debug_shows_the_traceback(monkeypatch, value):
    monkeypatch.setenv("KUBECTL_SAFETY_DEBUG", value)
    with pytest.raises(NotFoundError):
        main(["explain", "pod", "nope", *SNAPSHOT])


@pytest.mark.parametrize("value", ["garbage", "bash", "bash_sourc", "kubectl_complete", "powershell_source"])
def test_an_unknown_completion_instruction_is_one_error_line(monkeypatch, value):
    monkeypatch.setenv("_KUBECTL_SAFETY_COMPLETE", value)
    code, out, err = run_cli([])
    assert (code, out) == (1, "")
    assert err == (f"error: _KUBECTL_SAFETY_COMPLETE={value} is not a completion instruction: use bash_source, "
                   "zsh_source, fish_source, bash_complete, zsh_complete or fish_complete\n")


@pytest.mark.parametrize("value", ["bash_source", "zsh_source", "fish_source"])
def test_a_known_completion_instruction_still_prints_the_script(value):
    proc = _kubectl_safety([], env=environment(_KUBECTL_SAFETY_COMPLETE=value))
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, b"")
    assert b"_KUBECTL_SAFETY_COMPLETE" in out
