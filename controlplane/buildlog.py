"""What the build beside the tests did, from its log: the summary ``scripts/test-all`` prints after pytest.

The build scripts log ``built NAME in Ns`` or ``up to date: NAME`` for every component; this reads those lines
back, in build order, and says how long the build chain took and when it ended relative to test-all's start.

    python3 -m controlplane.buildlog LOG TEST_ALL_STARTED BUILD_STARTED BUILD_FINISHED PYTEST_ENDED EXIT
    # times: Unix seconds; BUILD_FINISHED empty while the build still runs

Stdlib only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_BUILT = re.compile(r"^(?:[\w/]+/)?build\.sh: built (\S+) in (\d+)s$")
_UP_TO_DATE = re.compile(r"^(?:[\w/]+/)?build\.sh: up to date: (\S+)$")


def components(log: str) -> list[tuple[str, int | None]]:
    """(name, seconds) per component in log order; seconds is None for one that was already built."""
    found: list[tuple[str, int | None]] = []
    for line in log.splitlines():
        if m := _BUILT.match(line.strip()):
            found.append((m.group(1), int(m.group(2))))
        elif m := _UP_TO_DATE.match(line.strip()):
            found.append((m.group(1), None))
    return found


def summary(log: str, started: int, build_started: int, finished: int | None, pytest_ended: int,
            exit_code: str) -> str:
    """The lines test-all prints: one per component, then the chain's wall time and its end (None: still running),
    relative to test-all's start."""
    found = components(log)
    width = max((len(name) for name, _ in found), default=0)
    lines = ["test-all: what the build beside the tests did:"]
    lines += [f"  {name:<{width}}  " + ("up to date" if secs is None else f"built in {secs}s") for name, secs in found]
    built = [secs for _, secs in found if secs is not None]
    lines.append(f"test-all: {len(built)} built ({sum(built)}s of compiling), {len(found) - len(built)} up to date")
    if finished is None:
        lines.append(f"test-all: the build chain was still running when pytest ended ({pytest_ended - started}s)")
    else:
        lines.append(f"test-all: the build chain took {finished - build_started}s (exit {exit_code}) and ended "
                     f"{finished - started}s after test-all started; pytest ended at {pytest_ended - started}s")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 6:
        print("usage: python3 -m controlplane.buildlog LOG TEST_ALL_STARTED BUILD_STARTED BUILD_FINISHED "
              "PYTEST_ENDED EXIT", file=sys.stderr)
        return 2
    log_path, started, build_started, finished, pytest_ended, exit_code = argv
    log = Path(log_path).read_text(errors="replace") if Path(log_path).exists() else ""
    print(summary(log, int(started), int(build_started), int(finished) if finished else None, int(pytest_ended),
                  exit_code))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
