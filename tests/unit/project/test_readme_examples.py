"""The README's commented examples say what the tool prints.

Every ``kubectl safety`` command in the README's sh blocks (outside the live demo's block) is run on the
bundled demo dump (``--snapshot examples/demo-cluster.yaml --as-of``, unless it names its own), and the
claims of its comment (the text after ``  #``) are compared with the output:

- ``exit N``: the exit code; every example of a command with a verdict (drain, rollout, check, preemption,
  delete, rebalance) says its exit code;
- ``SAFE``, ``NOT SAFE``, ``READY``, ``NOT READY`` (capitals): the verdict line;
- ``stops at batch N``: the batch the rollout would stop at;
- a pod or node of the dump it names: named in the output (the text, or the ``-o json`` report);
- every pod a plan's unaccepted risks name, and every object check says blocks: named in the comment (a
  comment that leaves a blocker out is wrong).

Commands that need a live cluster (acting, several contexts) are checked for their names and flags only:
on the dump they must get the "needs a live cluster" refusal, which comes after the flags parsed.
A transcript (``$ `` lines) that reads the dump is run as written and its output lines must appear.
"""

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
LIVE_HEADING = "### Try it on a live local cluster"
VERDICTS = ("drain", "rollout", "check", "preemption", "delete", "rebalance")
LIVE_ONLY = re.compile(r"needs a live cluster|check live clusters|cannot be used with --snapshot")
DUMP = yaml.safe_load((ROOT / DEMO).read_text())["items"]
NAMES = {o["metadata"]["name"] for o in DUMP if o["kind"] in ("Pod", "Node")}


def sh_blocks(text):
    """(heading, block text) of every sh block."""
    heading, out = None, []
    for part in re.split(r"(^#+ [^\n]*$|^```sh\n.*?^```$)", text, flags=re.M | re.S):
        if part.startswith("#"):
            heading = part
        elif part.startswith("```sh"):
            out.append((heading, part[len("```sh\n"):-3]))
    return out


def commands(block):
    """(argv, comment, transcript) of each ``kubectl safety`` command of a block; ``transcript``: None, or the
    output lines a ``$ `` line shows."""
    lines = block.replace("\\\n", " ").splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.search(r"(?:^|^\$ |&& )(?:\S*/)?(?:kubectl safety|kubectl-safety) ", line)
        if not m:
            continue
        text = line[m.start():].removeprefix("$ ").removeprefix("&& ")
        words = shlex.split(text, comments=True)
        cut = next((j for j, w in enumerate(words) if w in ("||", "&&", "|", ";")), len(words))
        argv = words[2 if words[0] == "kubectl" else 1:cut]
        comment = re.search(r"\s#\s(.*)$", text)
        transcript = None
        if line.startswith("$ "):
            transcript = []
            for after in lines[i + 1:]:
                if after.startswith("$ "):
                    break
                transcript.append(after)
        out.append((argv, comment.group(1) if comment else None, transcript))
    return out


def readme_examples():
    found = []
    for heading, block in sh_blocks(README):
        if heading != LIVE_HEADING:
            found += commands(block)
    return found


EXAMPLES = readme_examples()


def on_the_dump(argv):
    return argv if "--snapshot" in argv else [*argv, "--snapshot", DEMO, "--as-of", DEMO_NOW]


def offline(argv) -> bool:
    """Whether the command is answered from the dump (else it needs a live cluster)."""
    return not ({"--context", "--all-contexts", "--yes", "--exec"} & set(argv)) and not (
        argv[0] in ("drain", "rebalance") and "--dry-run" not in argv)


def illustrative(argv, transcript) -> bool:
    """A transcript of another cluster (its comment says which): it does not read the dump."""
    return transcript is not None and "--snapshot" not in argv


CLAIMED = [e for e in EXAMPLES if (e[1] is not None or e[2]) and offline(e[0]) and not illustrative(e[0], e[2])]
LIVE = [e for e in EXAMPLES if not offline(e[0]) or illustrative(e[0], e[2])]


def claims(comment) -> dict:
    found = {"exit": [int(x) for x in re.findall(r"\bexit (\d+)\b", comment)],
             "verdict": re.findall(r"\b(NOT SAFE|NOT READY|SAFE|READY)\b", comment.replace("NOT SAFE", "NOT_SAFE")
                                   .replace("NOT READY", "NOT_READY").replace("_", " ")),
             "batch": [int(x) for x in re.findall(r"\bstops at batch (\d+)\b", comment)],
             "names": sorted({w.split("/")[-1] for w in re.findall(r"[\w.-]+(?:/[\w.-]+)?", comment)} & NAMES)}
    return found


def blockers(argv) -> set:
    """The pods a plan's unaccepted risks name (drain, rollout), or the objects check says block."""
    code, out, _ = run_cli([*on_the_dump(argv), "-o", "json"])
    report = json.loads(out)
    if report["kind"] == "EnginePlan":  # the pods that decide an engine's outcome
        return {p["name"] for n in report["engine"]["nodes"] for p in n["pods"]
                if p["action"] in ("blocked", "forced", "refused", "wait")}
    if argv[0] == "check":
        return {b["object"]["name"] for b in report["blockers"]}
    return {o["name"] for r in report.get("risks", []) if not r["accepted"] for o in r["objects"] if o["kind"] == "Pod"}


def ids(examples):
    return [" ".join(e[0])[:70] for e in examples]


def test_the_readme_has_commented_examples_of_every_command_with_a_verdict():
    assert {e[0][0] for e in CLAIMED if e[1]} >= set(VERDICTS)


@pytest.mark.parametrize("argv, comment, transcript", CLAIMED, ids=ids(CLAIMED))
def test_readme_example_comment_says_what_the_tool_prints(argv, comment, transcript):
    code, out, err = run_cli(on_the_dump(argv))
    said = claims(comment or "")
    if argv[0] in VERDICTS and not transcript:
        assert said["exit"], f"the comment must say the exit code: {comment}"
    for claimed in said["exit"]:
        assert code == claimed, f"exit {code}, the comment says exit {claimed}: {comment}\n{out}{err}"
    verdict = out.rstrip().splitlines()[-1] if out.strip() else ""
    for claimed in said["verdict"]:
        assert re.match(rf"{claimed}\b", verdict), f"the verdict is {verdict!r}, the comment says {claimed}"
    for batch in said["batch"]:
        assert f"would stop at batch {batch};" in out, f"the comment says stops at batch {batch}:\n{out}"
    for name in said["names"]:  # in the text, or in the report (a rollout's text names workloads, not pods)
        assert name in out or name in run_cli([*on_the_dump(argv), "-o", "json"])[1], \
            f"the comment names {name}, the output does not:\n{out}"
    if comment and argv[0] in ("drain", "rollout", "check") and code == 3:
        left_out = {b for b in blockers(argv) if b not in comment}
        assert not left_out, f"the comment leaves out what blocks it: {sorted(left_out)}\n{out}"
    for line in transcript or ():
        if line.strip() and line.strip() != "...":
            assert line in out.splitlines(), f"the transcript shows {line!r}; the tool prints:\n{out}"


@pytest.mark.parametrize("argv, comment, transcript", LIVE, ids=ids(LIVE))
def test_readme_live_example_parses_and_names_the_dump(argv, comment, transcript):
    """Acting or several clusters: the flags parse (the dump's refusal comes after them) and the pods and
    nodes it names are the dump's. A transcript of another cluster: its flags parse (its node is not found)."""
    code, out, err = run_cli(on_the_dump(argv))
    if illustrative(argv, transcript) and offline(argv):
        assert code == 1 and "not found" in err, err
        return
    assert code == 2 and LIVE_ONLY.search(err), err
    if not illustrative(argv, transcript):
        named = [w for w in argv if re.fullmatch(r"node-\w+", w)]
        assert set(named) <= NAMES, named


def test_every_uncommented_readme_example_on_the_dump_runs():
    for argv, comment, transcript in EXAMPLES:
        if comment is None and transcript is None and "--snapshot" in argv and offline(argv):
            code, out, err = run_cli(argv)
            assert code in (0, 3), f"kubectl safety {' '.join(argv)}: exit {code}: {err}"


def test_readme_pool_examples_select_pools_of_the_dump():
    pools = {o["metadata"]["labels"].get("pool") for o in DUMP if o["kind"] == "Node"}
    used = {w.split("=", 1)[1] for e in EXAMPLES for w in e[0] if w.startswith("pool=")}
    assert used and used <= pools, (used, pools)


def test_the_first_check_example_uses_the_runbook_drain_flags():
    runbook = re.search(r"^DRAIN_FLAGS=\((.*)\)$", (ROOT / "examples" / "drain-flags.sh").read_text(), re.M)
    first = next(e for e in CLAIMED if e[0][0] == "check" and e[1])
    assert set(runbook.group(1).split()) <= set(first[0]), first[0]


def test_readme_says_a_missing_node_is_an_error_not_a_risk():
    for argv in (["drain", "node-x9", "--dry-run"], ["rollout", "node-x9", "--dry-run"]):
        code, _, err = run_cli(on_the_dump(argv))
        assert code == 1 and err.startswith('error: node "node-x9" not found'), err
    row = next(line for line in README.splitlines() if line.startswith("| NODE_NOT_FOUND"))
    assert "exit 1" in row, row


def test_readme_help_examples_use_as_of_not_the_deprecated_now():
    code, out, _ = run_cli(["check", "--help"])
    assert code == 0 and "--now" not in out and "--as-of 2026" in out


def test_readme_colour_wording_matches_the_tool():
    """No colour with NO_COLOR set and not empty (no-color.org), with TERM=dumb, or off a terminal
    (test_terminal.py checks the tool does so)."""
    text = " ".join(README.split())
    assert "`NO_COLOR` set to a non-empty value" in text and "an empty `NO_COLOR` does not" in text
    assert "`TERM=dumb`" in text


# -- the live demo's block: its own cluster (examples/demo-workloads.yaml) -------------------------------------

LIVE_DEMO = list(yaml.safe_load_all((ROOT / "examples" / "demo-workloads.yaml").read_text()))


def live_block():
    return next(block for heading, block in sh_blocks(README) if heading == LIVE_HEADING)


def test_the_live_block_puts_the_venv_on_path_before_it_runs_kubectl_safety():
    lines = live_block().splitlines()
    first = next(i for i, line in enumerate(lines) if re.match(r"(kubectl safety|kubectl-safety) ", line))
    assert any(re.match(r'export PATH="\$PWD/\.venv/bin:\$PATH"', line) for line in lines[:first]), lines


def test_every_command_of_the_live_block_names_objects_the_live_demo_creates():
    nodes = {o["metadata"]["name"]: o["metadata"].get("labels", {}) for o in LIVE_DEMO if o["kind"] == "Node"}
    namespaces = {o["metadata"]["name"] for o in LIVE_DEMO if o["kind"] == "Namespace"}
    names = {o["metadata"]["name"] for o in LIVE_DEMO}
    ran = commands(live_block())
    assert ran
    for argv, comment, _ in ran:
        positional = [w for w in argv[1:] if not w.startswith("-")]
        if argv[0] in ("drain", "rollout"):
            assert positional and set(positional) <= set(nodes), positional
        for flag, value in zip(argv, argv[1:]):
            if flag in ("-n", "--namespace"):
                assert value in namespaces, value
            if flag in ("-l", "--selector") and argv[0] in ("check", "drain", "rollout"):
                key, _, want = value.partition("=")
                assert any(labels.get(key) == want for labels in nodes.values()), value
        mentioned = re.findall(r"\bdemo[\w/-]*|\b[a-z]+-builder\b", comment or "")
        for m in mentioned:
            assert m.split("/")[-1] in names | namespaces, m
