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
    """kubectl-style plain columns: upper-case headers, no borders."""
    from tabulate import tabulate

    if not rows:
        return ""
    return tabulate(rows, headers=[h.upper() for h in headers], tablefmt="plain",
                    disable_numparse=True) + "\n"


def emit(report: dict, output: str, text=None, out=None):
    """Write ``report`` as json/yaml, or as ``text(report, wide)`` for table/wide."""
    out = out or sys.stdout
    if output == "json":
        out.write(to_json(report))
    elif output == "yaml":
        out.write(to_yaml(report))
    else:
        out.write(text(report, output == "wide") if text else to_yaml(report))
    out.flush()


def warn(message: str):
    """One warning line on stderr."""
    click.echo(f"warning: {message}", err=True)
