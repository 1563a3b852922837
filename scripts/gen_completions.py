#!/usr/bin/env python3
"""Write completions/kubectl-safety.{bash,zsh,fish}: what ``kubectl-safety completion SHELL`` prints.

The scripts call back into ``kubectl-safety`` (``_KUBECTL_SAFETY_COMPLETE=<shell>_complete``), so
they stay correct when commands change; regenerate them when click or the executable name
changes (``tests/unit/cli/test_completion.py`` fails when a committed script is stale).

Usage: python scripts/gen_completions.py [--check]
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kubectl_safety.cli.completion import EXECUTABLE, script  # noqa: E402
from kubectl_safety.cli.completion_request import SHELLS  # noqa: E402


def path(shell: str) -> str:
    return os.path.join(ROOT, "completions", f"{EXECUTABLE}.{shell}")


def main(argv) -> int:
    check = "--check" in argv
    stale = []
    for shell in SHELLS:
        text = script(shell)
        current = open(path(shell), encoding="utf-8").read() if os.path.exists(path(shell)) else None
        if current == text:
            continue
        stale.append(path(shell))
        if not check:
            os.makedirs(os.path.dirname(path(shell)), exist_ok=True)
            with open(path(shell), "w", encoding="utf-8") as f:
                f.write(text)
    for p in stale:
        print(("stale: " if check else "wrote ") + os.path.relpath(p, ROOT))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
