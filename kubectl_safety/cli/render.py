"""Renderers: a report dict as JSON, YAML, kubectl's name/jsonpath/go-template/custom-columns, or plain tables."""

import json
import sys

import click

from kubectl_safety.cli.registry import OUTPUTS, OWN_FORMATS
from kubectl_safety.errors import UsageError

# kind -> (path of the objects the report lists, their TYPE for -o name, which of them -o name prints)
OBJECTS = {o.kind: (o.objects, o.type, o.wanted) for o in OUTPUTS.values() if o.type}
RED, RESET = "\033[31m", "\033[0m"
ALARMS = {"blocked", "error", "unsafe", "BLOCKED", "ERROR", "UNSAFE"}


def to_json(report) -> str:
    return json.dumps(report, indent=2, default=str) + "\n"


def to_yaml(report) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(json.loads(json.dumps(report, default=str)), Dumper=dumper, sort_keys=False)


def table(rows, headers) -> str:
    """kubectl-style plain columns: upper-case headers, no borders (tabulate's ``plain`` format).

    Cells are made printable, laid out by the width of what is shown, and alarm cells (blocked,
    error, unsafe) styled afterwards (``printable.alarm``: red on a colour terminal only).
    Tables of plain ASCII text (nearly all of them) are laid out here exactly as tabulate would
    (tests/unit/cli/test_render.py compares them); importing tabulate costs more than a node-scoped
    command's API requests. Anything else (wide or control characters, other types) goes to tabulate.
    """
    if not rows:
        return ""
    headers = [h.upper() for h in headers]
    from kubectl_safety.printable import alarm, clean

    rows = clean([list(r) for r in rows])
    cells = _plain_cells(rows, len(headers))
    if cells is None:
        return _tabulated(rows, headers)
    widths = [max([len(h) + 2] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(_cell(c, w, alarm) for c, w in zip(line, widths)).rstrip() for line in cells]
    return "\n".join(lines) + "\n"


def _cell(c, width, style):
    padded = c.ljust(width)
    return style(c) + padded[len(c):] if c in ALARMS else padded


def _tabulated(rows, headers) -> str:
    """tabulate's layout (it measures cells without SGR), the SGR of alarm cells then made style marks."""
    from tabulate import tabulate

    from kubectl_safety.printable import ALARM, END

    rows = [[f"{RED}{c}{RESET}" if isinstance(c, str) and c.strip() in ALARMS else c for c in r] for r in rows]
    text = tabulate(rows, headers=headers, tablefmt="plain", disable_numparse=True) + "\n"
    return text.replace(RED, ALARM).replace(RESET, END)  # cells are printable: every ESC here is ours


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


def emit(report: dict, output: str, text=None, out=None, *, typed=False):
    """Write ``report`` (its typed plans as their published JSON) in the ``-o`` format;
    ``text(report, wide)`` renders table/wide from that JSON (``typed``: from the typed report itself)."""
    from kubectl_safety.cli.progress import end_live_line
    from kubectl_safety.cli.published import published

    typed_report, report = report, published(report)
    end_live_line()  # a rewritten status line on stderr ends before the report
    out = out or sys.stdout
    kind, _, template = output.partition("=")
    if output in OWN_FORMATS:
        raise UsageError(f"-o {output}: only {OWN_FORMATS[output].split(':')[0]} prints this format")
    if output == "json":
        out.write(to_json(report))
    elif output == "yaml":
        out.write(to_yaml(report))
    elif output in ("table", "wide"):
        shown = typed_report if typed else report
        out.write(as_text(shown, text, output == "wide", out) if text else to_yaml(report))
    elif kind == "jsonpath-as-json":
        out.write(formatted(report, kind, template))  # JSON: the serializer escapes what it holds
    else:
        from kubectl_safety.printable import clean, shown_encoding

        out.write(formatted(clean(report, shown_encoding(out)), kind, template))  # the template's breaks kept
    out.flush()


def as_text(report, text, wide=False, stream=None) -> str:
    """``text(report, wide)`` with every string of the report made printable on ``stream`` (default
    stdout) before it is laid out (tables, prompts); the layout's own styles are left to the edge."""
    from kubectl_safety.printable import clean, shown_encoding

    return text(clean(report, shown_encoding(stream or sys.stdout)), wide)


def formatted(report, kind, template) -> str:
    """-o name|jsonpath|jsonpath-as-json|go-template|custom-columns (and -file variants) of a report."""
    from kubectl_safety.cli.jsonpath import TemplateError

    data = json.loads(json.dumps(report, default=str))  # what -o json prints
    if kind.endswith("-file"):
        kind, template = kind[:-5], _read_template(template)
    try:
        if kind == "name":
            return "".join(f"{n}\n" for n in names(data))
        if kind == "jsonpath":
            from kubectl_safety.cli.jsonpath import render

            return render(template, data)
        if kind == "jsonpath-as-json":
            from kubectl_safety.cli.jsonpath import results

            return json.dumps(results(template, data), indent=4)  # as kubectl: no final newline
        if kind == "go-template":
            from kubectl_safety.cli.gotemplate import render

            return render(template, data)
        return custom_columns(template, data)
    except TemplateError as e:
        raise UsageError(f"error parsing {kind} template {template!r}: {e}") from None


def _read_template(path) -> str:
    """A regular file of at most ``MAX_TEMPLATE`` bytes (``/dev/zero`` or a FIFO would never end)."""
    from kubectl_safety.cluster.files import read_limited

    try:
        return read_limited(path, MAX_TEMPLATE).decode("utf-8")
    except OSError as e:
        raise UsageError(f"cannot read the template file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"cannot read the template file {path}: not UTF-8 text (byte {e.start})") from None


MAX_TEMPLATE = 1024 * 1024


def objects(data) -> list:
    """The objects a report lists (one row each for custom-columns): ``items`` of a List, else by kind."""
    if data.get("kind") == "List":
        return [o for item in data.get("items") or [] for o in objects(item)]
    path, _, _ = OBJECTS.get(data.get("kind"), (None, None, None))
    items = list(data.get(path) or []) if path else []
    return items if items and all(isinstance(o, dict) for o in items) else [data]


def names(data) -> list:
    """``TYPE/NAME`` of each object the report acts on, as ``kubectl ... -o name`` prints them."""
    if data.get("kind") == "List":
        return [n for item in data.get("items") or [] for n in names(item)]
    if data.get("kind") not in OBJECTS:
        raise UsageError(f"-o name is not supported for {data.get('kind')}: use -o json or -o yaml")
    path, type_, wanted = OBJECTS[data["kind"]]
    if path is None:
        return [f"{type_}/{data[type_]['name']}"]
    out = []
    for o in data.get(path) or []:
        if wanted is None or wanted(o):
            group = o.get("nodes") if isinstance(o, dict) and "name" not in o else None  # a rollout's batch
            for name in group if isinstance(group, list) else [o if isinstance(o, str) else
                                                                 o.get("name") or o.get("pod") or ""]:
                out.append(f"{type_}/{name.rsplit('/', 1)[-1]}")
    return list(dict.fromkeys(out))


def custom_columns(spec, data) -> str:
    """kubectl's custom-columns: ``HEADER:JSONPATH,...`` (or a file: headers line, paths line)."""
    from kubectl_safety.cli.jsonpath import TemplateError, results

    if "\n" in spec.strip():
        headers_line, paths_line = (spec.strip().splitlines() + [""])[:2]
        columns = list(zip(headers_line.split(), paths_line.split()))
    else:
        columns = [tuple(c.split(":", 1)) for c in spec.split(",")]
    if any(len(c) != 2 or not c[1] for c in columns):
        raise TemplateError("expected HEADER:JSONPATH[,HEADER:JSONPATH...]")
    rows = [[h for h, _ in columns]]
    for obj in objects(data):
        row = []
        for _, path in columns:
            path = path if path.startswith("{") else "{" + path + "}"
            values = [v for v in results(path, obj) if v is not None]  # null: <none>, as kubectl shows it
            row.append(",".join(v if isinstance(v, str) else json.dumps(v, separators=(",", ":")) for v in values)
                       if values else "<none>")
        rows.append(row)
    widths = [max(10, max(len(r[i]) for r in rows) + 3) for i in range(len(columns))]
    return "".join("".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n" for r in rows)


def warn(message: str):
    """One warning line on stderr (after ending a live status line; credentials removed, made printable)."""
    from kubectl_safety.cli.progress import end_live_line
    from kubectl_safety.printable import for_terminal

    end_live_line()
    click.echo(f"warning: {for_terminal(message)}", err=True)
