"""The click command line: parse flags, load a snapshot, call the analysis, render, exit.

Commands are wiring only; each lives in ``cli/commands/<name>.py`` and is imported lazily.
"""
