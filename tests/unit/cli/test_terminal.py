"""Every command as a user sees it on a real terminal (a pseudo-terminal), in a pipe, with NO_COLOR,
and on a terminal or pipe that is not UTF-8: colour is SGR only where it belongs, columns line up on
what is shown, help pages hold no control character, nothing fails to encode."""

import io
import json
import re

import click
import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli
from tests.unit.terminal import CONTROL, ESCAPED, SGR, environment, misaligned_rows, run, visible

SNAPSHOT = ["--snapshot", DEMO, "--as-of", DEMO_NOW]

# scenario -> (arguments, whether its table shows an alarm cell: blocked, error, unsafe)
TABLES = {
    "explain-pod": (["explain", "pod", "db-0", "-n", "shop"], True),
    "explain-node": (["explain", "node", "node-d1"], True),
    "explain-priorities": (["explain", "priorities"], True),
    "drain-dry-run": (["drain", "node-a2", "--dry-run", "--ignore-daemonsets"], True),
    "drain-dry-run-wide": (["drain", "node-a2", "--dry-run", "--ignore-daemonsets", "-o", "wide"], True),
    "preemption": (["preemption", "report-xyz", "-n", "jobs"], False),
    "delete-force-assessment": (["delete", "pod", "db-0", "-n", "shop", "--force"], True),
    "rebalance-dry-run": (["rebalance", "deploy/web", "-n", "shop", "--dry-run"], False),
    "rollout-dry-run": (["rollout", "node-a2", "--dry-run"], False),
    "check": (["check"], True),  # its error findings, red as in explain
}


@pytest.fixture(scope="module")
def in_a_pipe():
    """Each scenario's stdout in a pipe (stderr too, apart): the layout the unit suite pins."""
    return {name: run([*args, *SNAPSHOT], pipes=("stdout", "stderr")) for name, (args, _) in TABLES.items()}


@pytest.mark.parametrize("name", TABLES)
def test_colour_on_a_terminal_is_sgr_and_the_columns_line_up(name, in_a_pipe):
    args, alarmed = TABLES[name]
    screen = run([*args, *SNAPSHOT], pipes=("stderr",))
    shown, piped = screen.text, in_a_pipe[name]
    assert screen.code == piped.code, screen.pipe_text("stderr")
    assert not ESCAPED.search(shown), shown  # never \x1b[31m as text
    assert bool(SGR.search(shown)) is alarmed, shown
    assert misaligned_rows(shown) == [], shown
    assert visible(shown) == piped.pipe_text("stdout")  # every column where it is in a pipe
    assert not CONTROL.search(visible(shown).replace("\x1b", "")), shown


@pytest.mark.parametrize("no_color", ["1", "0", "false", " "], ids=["one", "zero", "false", "space"])
def test_no_color_set_to_anything_turns_colour_off_on_a_terminal(no_color, in_a_pipe):
    screen = run([*TABLES["drain-dry-run"][0], *SNAPSHOT], env=environment(NO_COLOR=no_color), pipes=("stderr",))
    assert "\x1b" not in screen.text
    assert screen.text == in_a_pipe["drain-dry-run"].pipe_text("stdout")


@pytest.mark.parametrize("name", TABLES)
def test_no_colour_in_a_pipe(name, in_a_pipe):
    assert "\x1b" not in in_a_pipe[name].pipe_text("stdout") + in_a_pipe[name].pipe_text("stderr")
    assert not ESCAPED.search(in_a_pipe[name].pipe_text("stdout"))


def _help_pages():
    from kubectl_safety.cli.main import cli

    pages, todo = [], [((), cli)]
    while todo:
        words, command = todo.pop()
        pages.append(list(words))
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            todo += [((*words, n), command.get_command(ctx, n)) for n in command.list_commands(ctx)]
    return sorted(pages)


HELP_PAGES = _help_pages()


@pytest.mark.parametrize("words", HELP_PAGES, ids=[" ".join(w) or "kubectl-safety" for w in HELP_PAGES])
def test_no_control_character_in_any_help_page(words):
    screen = run([*words, "--help"])
    assert screen.code == 0, screen.text
    assert "Usage:" in screen.text
    assert not CONTROL.search(screen.text) and not ESCAPED.search(screen.text), screen.text
    code, out, err = run_cli([*words, "--help"])  # in a pipe too
    assert (code, err) == (0, "")
    assert not CONTROL.search(out) and not ESCAPED.search(out), out


def test_help_pages_cover_every_command_and_group():
    assert {" ".join(w) for w in HELP_PAGES} >= {"", "explain", "explain pod", "explain node", "explain priorities",
                                                 "drain", "preemption", "delete", "delete pod", "rebalance",
                                                 "rollout", "check", "version", "help"}


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stream, no_color, shown", [
    (Terminal, None, "\x1b[31mblocked\x1b[0m   web"),
    (Terminal, "1", "blocked   web"),
    (io.StringIO, None, "blocked   web"),
], ids=["terminal", "terminal-no-color", "pipe"])
def test_the_edge_shows_a_style_as_sgr_only_on_a_colour_terminal(monkeypatch, stream, no_color, shown):
    from kubectl_safety.printable import ALARM, END, SafeStream

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    if no_color:
        monkeypatch.setenv("NO_COLOR", no_color)
    out = stream()
    SafeStream(out).write(f"{ALARM}blocked{END}   web")
    assert out.getvalue() == shown


@pytest.mark.parametrize("no_color, term, coloured", [
    (None, "xterm-256color", True),
    ("", "xterm-256color", True),  # no-color.org: set to the empty string does not disable colour
    ("1", "xterm-256color", False),
    (None, "dumb", False),
    (None, None, True),
], ids=["unset", "empty", "set", "term-dumb", "no-term"])
def test_colour_on_a_terminal_follows_no_color_and_term_dumb(monkeypatch, no_color, term, coloured):
    from kubectl_safety.printable import colour_enabled

    for name, value in (("NO_COLOR", no_color), ("TERM", term)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert colour_enabled(Terminal()) is coloured


def test_a_value_cannot_forge_a_style():
    """The style marks are not printable: in a value they are escaped before the layout."""
    from kubectl_safety.cli.render import table
    from kubectl_safety.printable import ALARM, END, SafeStream

    out = Terminal()
    SafeStream(out).write(table([[f"{ALARM}evil{END}", "blocked"]], ["name", "action"]))
    assert out.getvalue() == "NAME              ACTION\n\\ue000evil\\ue001  \x1b[31mblocked\x1b[0m\n"


def test_a_wide_character_table_is_coloured_and_aligned():
    """Tables tabulate lays out (wide characters) colour their alarm cells the same way."""
    from kubectl_safety.cli.render import table
    from kubectl_safety.printable import SafeStream

    out = Terminal()
    SafeStream(out).write(table([["blocked", "dé-1"], ["evict", "web"]], ["action", "pod"]))
    assert out.getvalue() == "ACTION    POD\n\x1b[31mblocked\x1b[0m   dé-1\nevict     web\n"


# -- terminals and pipes that are not UTF-8 ---------------------------------------------------------
NAME = "batch-café-ü"  # a pod name no ASCII terminal can show as is
SHOWN = "batch-caf\\xe9-\\xfc"


@pytest.fixture(scope="module")
def non_ascii_dump(tmp_path_factory):
    path = tmp_path_factory.mktemp("dump") / "cluster.yaml"
    with open(DEMO, encoding="utf-8") as f:
        path.write_text(f.read().replace("batch-6f5d-1b1", NAME), encoding="utf-8")
    return str(path)


LOCALES = {"pythonioencoding-ascii": {"PYTHONIOENCODING": "ascii"},
           "lang-c": {"LANG": "C", "LC_ALL": "C", "LC_CTYPE": None},  # Python's UTF-8 mode: UTF-8 streams
           "lang-c-without-utf8-mode": {"LANG": "C", "LC_ALL": "C", "LC_CTYPE": None, "PYTHONUTF8": "0",
                                        "PYTHONCOERCECLOCALE": "0"}}  # ASCII streams
# scenario -> (arguments, exit code, what stdout must hold, what stderr must hold)
ENCODED = {
    "drain-table": (["drain", "node-a2", "--dry-run", "--ignore-daemonsets"], 3, f"jobs/{SHOWN}", ""),
    "explain-pod": (["explain", "pod", NAME, "-n", "jobs"], 0, f"jobs/{SHOWN}", ""),
    "explain-missing-pod": (["explain", "pod", NAME + "x", "-n", "jobs"], 1, "",
                            f'error: pod "{SHOWN}x" not found in namespace "jobs"\n'),
    "drain-name": (["drain", "node-a2", "--dry-run", "--ignore-daemonsets", "--delete-emptydir-data", "-o", "name"], 3,
                   f"pod/{SHOWN}\n", ""),
}


# (a name typed in a C locale without Python's UTF-8 mode reaches us as undecodable bytes: not covered)
PAIRS = [(scenario, locale) for scenario in ENCODED for locale in LOCALES
         if not (locale == "lang-c-without-utf8-mode" and not "".join(ENCODED[scenario][0]).isascii())]


@pytest.mark.parametrize("scenario, locale", PAIRS, ids=[f"{s}-{loc}" for s, loc in PAIRS])
def test_a_terminal_that_is_not_utf8_gets_escapes_not_an_encoding_error(non_ascii_dump, locale, scenario):
    args, code, out, err = ENCODED[scenario]
    ascii_only = locale != "lang-c"
    screen = run([*args, "--snapshot", non_ascii_dump, "--as-of", DEMO_NOW], env=environment(**LOCALES[locale]),
                 pipes=("stdout", "stderr"))
    stdout, stderr = screen.piped["stdout"], screen.piped["stderr"]
    assert screen.code == code, stderr
    assert b"Traceback" not in stderr and b"Error" not in stderr
    if ascii_only:  # every byte is what the stream can take, the rest is escaped as control characters are
        assert (stdout + stderr).isascii()
        assert out in stdout.decode() and stderr.decode().endswith(err)
    else:
        assert out.replace(SHOWN, NAME) in stdout.decode() and stderr.decode().endswith(err.replace(SHOWN, NAME))


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("output", ["json", "yaml", "jsonpath={.pods[0].name}"])
def test_json_and_yaml_stay_valid_on_a_stream_that_is_not_utf8(non_ascii_dump, locale, output):
    import yaml

    screen = run(["drain", "node-a2", "--dry-run", "--ignore-daemonsets", "-o", output, "--snapshot", non_ascii_dump,
                  "--as-of", DEMO_NOW], env=environment(**LOCALES[locale]), pipes=("stdout", "stderr"))
    assert screen.code == 3, screen.piped["stderr"]
    text = screen.piped["stdout"].decode()
    if output == "json":
        assert json.loads(text)["pods"][0]["name"] == NAME
    elif output == "yaml":
        assert yaml.safe_load(text)["pods"][0]["name"] == NAME
    else:
        assert text in (NAME, SHOWN)


def test_a_table_on_an_ascii_terminal_lines_up_with_the_escapes(non_ascii_dump):
    screen = run(["drain", "node-a2", "--dry-run", "--ignore-daemonsets", "--snapshot", non_ascii_dump,
                  "--as-of", DEMO_NOW], env=environment(PYTHONIOENCODING="ascii"), pipes=("stderr",))
    shown = screen.text
    assert screen.code == 3 and SHOWN in shown
    assert misaligned_rows(shown) == []
    header = next(line for line in shown.split("\n") if line.startswith("ACTION"))
    row = next(visible(line) for line in shown.split("\n") if SHOWN in line)
    assert row.index("-", len(f"blocked   -       jobs/{SHOWN}")) == header.index("PDB")


RED_BLOCKED = "\x1b[31mblocked\x1b[0m"


def test_the_terminal_helpers_see_what_a_terminal_shows():
    assert visible("\x1b[31mblocked\x1b[0m   -") == "blocked   -"
    assert ESCAPED.search("\\x1b[31mblocked") and not ESCAPED.search(visible("\x1b[31mblocked\x1b[0m"))
    assert re.fullmatch(SGR, "\x1b[0m")
    header = "ACTION    WAVE    CAPACITY LEFT  PDB"
    row = "blocked   -       5 nodes free   x"
    assert [row.index(c) for c in "-5x"] == [header.index(h) for h in ("WAVE", "CAPACITY", "PDB")]
    assert misaligned_rows(f"{header}\n{row.replace('blocked', RED_BLOCKED)}\n") == []
    empty = "blocked   -" + " " * 22 + "x"  # CAPACITY LEFT left empty
    assert misaligned_rows(f"{header}\n{empty.replace('blocked', RED_BLOCKED)}\n") == []
    shifted = row.replace("blocked", "blocked ")
    assert misaligned_rows(f"{header}\n{shifted.replace('blocked', RED_BLOCKED)}\n") == [(header, shifted)]


# -- the live status line ----------------------------------------------------------------------------
def test_a_live_line_is_cut_to_the_terminal_width_and_keeps_its_countdown(monkeypatch):
    from kubectl_safety.cli import progress

    monkeypatch.setenv("COLUMNS", "40")
    err = Terminal()
    progress.Progress(err).status("waiting: " + "x" * 100, 70)
    progress.end_live_line(err)
    assert err.getvalue() == "\r\x1b[Kwaiting: " + "x" * 20 + ", 70s left\n"  # 39 characters shown


def test_the_countdown_moves_each_second_until_the_live_line_ends(monkeypatch):
    import time

    from kubectl_safety.cli import progress

    monkeypatch.setattr(progress, "TICK_SECONDS", 0.05)
    err = Terminal()
    progress.Progress(err).status("waiting: budget", 3)
    time.sleep(1.2)
    progress.end_live_line(err)
    drawn = err.getvalue()
    time.sleep(0.2)
    assert err.getvalue() == drawn  # no redraw after the line ended
    redraws = drawn.rstrip("\n").split("\r\x1b[K")[1:]
    assert all(re.fullmatch(r"waiting: budget, [0-3]s left", r) for r in redraws), redraws
    assert redraws[0] == "waiting: budget, 3s left" and len(set(redraws)) >= 2, redraws
