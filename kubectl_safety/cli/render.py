"""Renderers: JSON and YAML of a report dict, or kubectl-style plain tables."""

import json
import sys

import click


def to_json(report) -> str:
    return json.dumps(report, indent=2, default=str) + "\n"


def to_yaml(report) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(json.loads(json.dumps(report, default=str)), Dumper=dumper, sort_keys=False)


def table(rows, headers) -> str:
    """kubectl-style plain columns: upper-case headers, no borders (tabulate's ``plain`` format).

    Tables of plain ASCII text (nearly all of them) are laid out here exactly as tabulate would
    (tests/unit/test_render.py compares them); importing tabulate costs more than a node-scoped
    command's API requests. Anything else (wide or control characters, other types) goes to tabulate.
    """
    if not rows:
        return ""
    headers = [h.upper() for h in headers]
    from kubectl_safety.printable import clean

    rows = clean([list(r) for r in rows])
    cells = _plain_cells(rows, len(headers))
    if cells is None:
        from tabulate import tabulate

        return tabulate(rows, headers=headers, tablefmt="plain", disable_numparse=True) + "\n"
    widths = [max([len(h) + 2] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [headers] + cells]
    return "\n".join(lines) + "\n"


def _plain_cells(rows, columns):
    """Rows as stripped strings, or None when a cell is not plain printable ASCII text, an int or None."""
    out = []
    for row in rows:
        if len(row) != columns:
            return None
        line = []
        for cell in row:
            if cell is None:
                line.append("")
                continue
            if type(cell) is int:
                cell = str(cell)
            elif type(cell) is not str or not (cell.isascii() and cell.isprintable()):
                return None
            line.append(cell.strip())
        out.append(line)
    return out


def emit(report: dict, output: str, text=None, out=None):
    """Write ``report`` as json/yaml, or as ``text(report, wide)`` for table/wide."""
    out = out or sys.stdout
    if output == "json":
        out.write(to_json(report))
    elif output == "yaml":
        out.write(to_yaml(report))
    else:
        from kubectl_safety.printable import clean, printable_lines

        out.write(printable_lines(text(clean(report), output == "wide")) if text else to_yaml(report))
    out.flush()


def warn(message: str):
    """One warning line on stderr (credentials removed, made printable)."""
    from kubectl_safety.printable import for_terminal

    click.echo(f"warning: {for_terminal(message)}", err=True)
