"""Differential properties: our analysis and upstream's own code (the oracle) on the same input.

One oracle process per session. Each property runs a seeded, bounded number of examples
(``KUBECTL_SAFETY_FUZZ_EXAMPLES``, default 200; ``scripts/fuzz-fidelity`` raises it and drops the
seed) and the session ends with one line per property: examples run and oracle questions asked.
Without the oracle binary the properties fail in CI and are skipped, loudly, elsewhere.
"""

import os
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings

from tests.ci import in_ci
from tests.oracle import Oracle, available

EXAMPLES = int(os.environ.get("KUBECTL_SAFETY_FUZZ_EXAMPLES") or 200)
SEEDED = not os.environ.get("KUBECTL_SAFETY_FUZZ_RANDOM")
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, derandomize=SEEDED, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])

CASES: Counter = Counter()
SECONDS: Counter = Counter()
_missing: list = []


@pytest.fixture(scope="session")
def oracle_process():
    reason = available()
    if reason:
        if in_ci():
            pytest.fail(f"upstream oracle unavailable (CI): {reason}", pytrace=False)
        _missing.append(reason)
        pytest.skip(f"UPSTREAM ORACLE UNAVAILABLE: {reason}")
    o = Oracle()
    yield o
    o.close()


@pytest.fixture
def oracle(oracle_process, request):
    """The session's oracle; counts this property's examples (questions) for the summary."""
    name = request.node.originalname
    start, asked = time.monotonic(), oracle_process.asked
    yield oracle_process
    CASES[name] += 0  # listed even when hypothesis ran no example
    SECONDS[name] += time.monotonic() - start
    CASES[(name, "asked")] += oracle_process.asked - asked


def count(request_or_name):
    """Count one example of a property (call once per example)."""
    CASES[request_or_name] += 1


def tally(name, label):
    """Count one example of a property that showed ``label`` (printed on the property's line)."""
    CASES[(name, "tally", label)] += 1


def _tallies(name) -> str:
    return "".join(f", {CASES[k]} {k[2]}" for k in sorted(k for k in CASES if isinstance(k, tuple)
                                                         and len(k) == 3 and k[0] == name))


def pytest_terminal_summary(terminalreporter):
    for reason in _missing:
        terminalreporter.write_line(f"UPSTREAM ORACLE UNAVAILABLE, differential properties skipped: {reason}", red=True)
    names = sorted(k for k in CASES if isinstance(k, str))
    if names:
        terminalreporter.write_sep("-", f"differential properties ({EXAMPLES} examples max each, "
                                        f"{'seeded' if SEEDED else 'random'})")
    for name in names:
        terminalreporter.write_line(f"property {name}: {CASES[name]} cases, {CASES[(name, 'asked')]} oracle "
                                    f"questions, {SECONDS[name]:.1f}s"
                                    f"{_tallies(name)}")
