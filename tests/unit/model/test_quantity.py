from fractions import Fraction

import pytest

from kubectl_safety.errors import InputError
from kubectl_safety.model.quantity import amount, format_amount, parse_quantity

CASES = [
    ("millicores", "cpu", "100m", 100),
    ("whole cores", "cpu", "2", 2000),
    ("fractional cores", "cpu", "0.5", 500),
    ("seed 000 cpu 1024m", "cpu", "1024m", 1024),
    ("binary Mi", "memory", "512Mi", 512 * 2**20),
    ("binary Gi fraction", "memory", "1.5Gi", 3 * 2**29),
    ("decimal M", "memory", "129M", 129_000_000),
    ("exponent", "memory", "129e6", 129_000_000),
    ("plain bytes", "memory", "128974848", 128974848),
    ("sub-byte rounds up", "memory", "100m", 1),
    ("sub-millicore rounds up", "cpu", "1u", 1),
    ("integer input", "pods", 110, 110),
    ("exa suffix, not an exponent", "memory", "1E", 10**18),
    ("exbi suffix", "memory", "1Ei", 2**60),
    ("capital exponent", "memory", "5E-2", 1),
    ("negative milli rounds up", "cpu", "-1.5m", -1),
    ("float input", "cpu", 0.25, 250),
]


@pytest.mark.parametrize("resource,text,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_amount(resource, text, expected):
    assert amount(resource, text) == expected


def test_parse_is_exact():
    assert parse_quantity("0.1") * 3 == Fraction(3, 10)


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "10Qi", "1 Gi", "--1", True])
def test_invalid_quantities_are_input_errors(bad):
    with pytest.raises(InputError):
        parse_quantity(bad)


@pytest.mark.parametrize("resource,value,text", [
    ("cpu", 1500, "1500m"), ("cpu", 2000, "2"), ("memory", 2**30, "1Gi"), ("memory", 1000, "1000"), ("pods", 3, "3"),
])
def test_format_amount(resource, value, text):
    assert format_amount(resource, value) == text
