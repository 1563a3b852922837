"""A real drain on a real terminal (a pseudo-terminal): the plan and the question, an answer of n,
Ctrl-C at the question, the live countdown while a PDB holds a pod, and Ctrl-C during it."""

from __future__ import annotations

import re

import pytest
from cluster_helpers import get_json, place_on, pool_nodes, pool_web
from test_drain import stuck_pdb

from tests.unit.terminal import CTRL_C, ESCAPED, Screen

QUESTION = rb"Cordon \S+ and evict 2 pod\(s\) in \d+ wave\(s\), about \d+s\? \[y/N\]: "


def drain(cluster, node, *extra) -> Screen:
    return Screen(["drain", node, "--kubeconfig", str(cluster.kubeconfig), *extra])


def cordoned(cluster, node) -> bool:
    return get_json(cluster, f"node/{node}")["spec"].get("unschedulable") is True


@pytest.mark.parametrize("keys, code, last_line", [
    (b"n\r", 5, "error: not confirmed; nothing was changed"),
    (b"\r", 5, "error: not confirmed; nothing was changed"),
    (CTRL_C, 130, "interrupted"),
], ids=["answer-n", "answer-enter", "ctrl-c-at-the-question"])
def test_the_question_on_a_terminal_changes_nothing_unless_answered_y(cluster, namespace, make_node, keys, code,
                                                                      last_line):
    nodes = pool_nodes(make_node, namespace, 2, "tty")
    place_on(cluster, namespace, nodes[1:], [pool_web(2, namespace)], 2)
    screen = drain(cluster, nodes[0])
    screen.expect(QUESTION)
    shown = screen.text
    assert "SAFE" in shown and f"Node {nodes[0]}: 2 pod(s)" in shown  # the plan comes before the question
    screen.send(keys)
    assert screen.finish() == code, screen.text
    lines = screen.text.rstrip("\n").split("\n")
    assert lines[-1] == last_line, screen.text
    assert "Traceback" not in screen.text and not ESCAPED.search(screen.text)
    assert not cordoned(cluster, nodes[0])


def test_the_countdown_redraws_one_line_and_ctrl_c_stops_the_drain(cluster, namespace, make_node):
    nodes = pool_nodes(make_node, namespace, 2, "tty")
    stuck_pdb(cluster, namespace, nodes)
    screen = drain(cluster, nodes[0], "--timeout", "10m")
    screen.expect(QUESTION)
    screen.send(b"y\r")
    first = screen.expect(rb"\r\x1b\[Kwaiting: [^\r\n]*, ([0-9hms]+) left")
    moved = screen.expect(rb"\r\x1b\[Kwaiting: [^\r\n]*, (?!%s )([0-9hms]+) left" % first.group(1), timeout=5)
    assert b"\n" not in screen.output[first.end():moved.start()]  # the countdown moves, on the same line
    assert len(moved.group().decode()) - len("\r\x1b[K") <= 199  # one line of the 200-column terminal
    screen.send(CTRL_C)
    assert screen.finish() == 130, screen.text
    text = screen.text
    assert "Traceback" not in text and not ESCAPED.search(text), text
    assert re.search(r"left\^C\ninterrupt: stopping after the requests in flight; nodes stay cordoned\n"
                     r"Drain of \S+: interrupted", text), text  # the countdown stops; the message on its own line
    assert text.endswith("The nodes stay cordoned; run the same command again to resume.\n"), text
    assert cordoned(cluster, nodes[0])  # as documented: the node stays cordoned
