"""What the build beside the tests did, from its log: the summary ``scripts/test-all`` prints after pytest.

The build scripts log ``built NAME in Ns`` or ``up to date: NAME`` for every component; this reads those lines
back, in build order, and says when each build stage was ready relative to test-all's start, from the times
file controlplane/build-stages.sh writes (``start EPOCH``, then ``STAGE EPOCH EXIT`` as each stage ends).

    python3 -m controlplane.buildlog LOG TIMES TEST_ALL_STARTED PYTEST_ENDED   # times: Unix seconds

Stdlib only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_BUILT = re.compile(r"^(?:[\w/]+/)?build\.sh: built (\S+) in (\d+)s$")
_UP_TO_DATE = re.compile(r"^(?:[\w/]+/)?build\.sh: up to date: (\S+)$")


def components(log: str) -> list[tuple[str, int | None]]:
    """(name, seconds) per component in build order; seconds is None for one that was already built. A component
    a later stage reports up to date again (build.sh --engines re-checks the control plane) is listed once."""
    found: dict[str, int | None] = {}
    for line in log.splitlines():
        if m := _BUILT.match(line.strip()):
            found[m.group(1)] = int(m.group(2))
        elif (m := _UP_TO_DATE.match(line.strip())) and m.group(1) not in found:
            found[m.group(1)] = None
    return list(found.items())


def stages(times: str) -> tuple[int | None, list[tuple[str, int, str]]]:
    """The chain's start and (stage, end, exit code) per finished stage, from test-all's times file."""
    start, ended = None, []
    for line in times.splitlines():
        parts = line.split()
        if parts[:1] == ["start"] and len(parts) == 2:
            start = int(parts[1])
        elif len(parts) == 3:
            ended.append((parts[0], int(parts[1]), parts[2]))
    return start, ended


def summary(log: str, times: str, started: int, pytest_ended: int) -> str:
    """The lines test-all prints: one per component, then when each stage ended relative to test-all's start."""
    found = components(log)
    width = max((len(name) for name, _ in found), default=0)
    lines = ["test-all: what the build beside the tests did:"]
    lines += [f"  {name:<{width}}  " + ("up to date" if secs is None else f"built in {secs}s") for name, secs in found]
    built = [secs for _, secs in found if secs is not None]
    lines.append(f"test-all: {len(built)} built ({sum(built)}s of compiling), {len(found) - len(built)} up to date")
    build_started, ended = stages(times)
    ready = ", ".join(f"{name} at {end - started}s" + ("" if code == "0" else f" (failed, exit {code})")
                      for name, end, code in ended)
    lines.append(f"test-all: build stages ended (after test-all started): {ready or 'none'}")
    chain = (f"the build chain took {ended[-1][1] - build_started}s"
             if ended and build_started is not None else "the build chain ended no stage")
    lines.append(f"test-all: {chain}; pytest ended at {pytest_ended - started}s")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: python3 -m controlplane.buildlog LOG TIMES TEST_ALL_STARTED PYTEST_ENDED", file=sys.stderr)
        return 2
    log_path, times_path, started, pytest_ended = argv
    log, times = (Path(p).read_text(errors="replace") if Path(p).exists() else "" for p in (log_path, times_path))
    print(summary(log, times, int(started), int(pytest_ended)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
