"""Plain tables: laid out exactly as tabulate's ``plain`` format, without importing it for ASCII text."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

from kubectl_safety.cli import render
from kubectl_safety.printable import ALARM, END

ascii_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=12)
cell = st.one_of(st.none(), ascii_text, st.integers(-10**6, 10**6))


def reference(rows, headers):
    return tabulate(rows, headers=[h.upper() for h in headers], tablefmt="plain", disable_numparse=True) + "\n"


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.lists(ascii_text.filter(str.strip), min_size=n, max_size=n),
    st.lists(st.lists(cell, min_size=n, max_size=n), min_size=1, max_size=6))))
def test_plain_ascii_tables_match_tabulate(case):
    """The layout is tabulate's; an alarm cell (``unsafe``, ``blocked``, ``error``) is marked for colour, which
    adds no width."""
    headers, rows = case
    assert render.table(rows, headers).replace(ALARM, "").replace(END, "") == reference(rows, headers)


def test_an_alarm_cell_is_marked_without_changing_the_layout():
    assert render.table([["unsafe", "x"]], ["a", "b"]) == reference([["unsafe", "x"]], ["a", "b"]).replace(
        "unsafe", f"{ALARM}unsafe{END}")


@pytest.mark.parametrize("name, rows", [
    ("wide characters", [["名前", "x"]]),
    ("float", [[1.5, "x"]]),
    ("bool", [[True, "x"]]),
])
def test_other_cells_go_to_tabulate(name, rows):
    assert render._plain_cells(rows, 2) is None
    assert render.table(rows, ["a", "b"]) == reference(rows, ["a", "b"])


@pytest.mark.parametrize("cell, shown", [("a\nb", "a\\nb"), ("\x1b[31mred", "\\x1b[31mred"), ("x\u202ey", "x\\u202ey")],
                         ids=["newline-forging-a-row", "escape-sequence", "bidi-override"])
def test_cells_are_made_printable(cell, shown):
    assert render.table([[cell, "x"]], ["a", "b"]) == reference([[shown, "x"]], ["a", "b"])


def test_empty_table_is_empty():
    assert render.table([], ["a"]) == ""
