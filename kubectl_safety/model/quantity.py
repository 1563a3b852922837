"""Exact Kubernetes resource quantities (``resource.Quantity``), without floats."""

import re
from functools import lru_cache

from kubectl_safety.errors import InputError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}  # powers of ten
# Bounds far past any real amount (int64 milli-units: 9.2e15 cores, 9.2e18 bytes), so that no input
# makes numbers of thousands of digits (slow to compute, refused by int/str conversion).
MAX_DIGITS = 64
MAX_QUANTITY = 10 ** 40
_PATTERN = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE]?)$")


def parse_quantity(value):
    """Parse ``"100m"``, ``"1.5Gi"``, ``"1e3"``, ``2`` into an exact Fraction.

    >>> parse_quantity("1.5Gi") == 3 * 2**29
    True
    """
    from fractions import Fraction  # on first use: the scheduler's amounts need only integers (``_ratio``)

    return Fraction(*_ratio(value))


def _ratio(value) -> tuple:
    """``value`` as an exact ratio of integers: (numerator, denominator > 0)."""
    if isinstance(value, bool):
        raise InputError(f"invalid quantity {value!r}")
    if isinstance(value, (int, float)):
        if not abs(value) < MAX_QUANTITY:  # (also NaN)
            raise InputError("invalid quantity: out of range")  # (str() of a huge int may be refused)
        if isinstance(value, int):
            return value, 1
    text = str(value).strip()
    match = _PATTERN.match(text)
    if not match:
        raise InputError(f"invalid quantity {value!r}")
    number, suffix = match.groups()
    scientific = suffix not in _BINARY and suffix not in _DECIMAL  # "1e3" (but "1E" is an exa, "1Ei" an exbi)
    exponent = suffix[1:].lstrip("+-").lstrip("0") if scientific else ""
    if len(number) > MAX_DIGITS or len(exponent) > 3:
        raise InputError(f"invalid quantity {_short(text)}: out of range")
    whole, _, fraction = number.partition(".")
    numerator, denominator = int(whole + fraction), 10 ** len(fraction)
    power = int(suffix[1:]) if scientific else _DECIMAL.get(suffix, 0)
    numerator *= _BINARY.get(suffix, 1)
    if power >= 0:
        numerator *= 10 ** power
    else:
        denominator *= 10 ** -power
    if abs(numerator) >= MAX_QUANTITY * denominator:
        raise InputError(f"invalid quantity {_short(text)}: out of range")
    return numerator, denominator


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


MILLI = 1000  # exact amounts: integers in thousandths of the scheduler's unit (see ``_exact``)


def amount(resource: str, value) -> int:
    """A resource amount in the scheduler's integer units: millicores for cpu, else the value.

    Like ``Quantity.MilliValue()``/``Value()``, fractions round up.
    """
    return -(-(_exact_of_text(resource, value) if isinstance(value, str) else _exact(resource, value)) // MILLI)


def _exact(resource: str, value) -> int:
    """The amount as the API server stores it, rounded up to milli precision on create
    (``SetDefaults_ResourceList``), as an integer count of thousandths of the scheduler's unit
    (of a millicore for cpu): sums stay exact and cost integer additions."""
    numerator, denominator = _ratio(value)
    milli = -(-numerator * 1000 // denominator)
    return milli * MILLI if resource == "cpu" else milli


@lru_cache(maxsize=4096)
def _exact_of_text(resource: str, value: str) -> int:
    """Cached: a cluster uses few distinct quantities ("100m", "128Mi") in 100,000s of containers."""
    return _exact(resource, value)


def resource_list(raw) -> dict:
    """``{"cpu": "500m", "memory": "1Gi"}`` -> ``{"cpu": 500, "memory": 1073741824}``."""
    return rounded(exact_resource_list(raw))


def exact_resource_list(raw) -> dict:
    """As ``resource_list``, not rounded to whole units (``_exact``: thousandths of them): upstream
    adds a pod's stored quantities exactly and rounds the total once (three containers of
    ``"0.5"`` bytes request 2 bytes, not 3)."""
    return {name: _exact_of_text(name, value) if isinstance(value, str) else _exact(name, value)
            for name, value in _items(raw)}


def rounded(amounts: dict) -> dict:
    """Exact amounts rounded up to the scheduler's integer units (``MilliValue()``/``Value()``)."""
    return {name: -(-value // MILLI) for name, value in amounts.items()}


def exact(amounts: dict) -> dict:
    """Amounts in the scheduler's units as exact amounts (the inverse of ``rounded`` on whole units)."""
    return {name: value * MILLI for name, value in amounts.items()}


def _items(raw):
    if not raw:
        return []
    if not isinstance(raw, dict):
        raise InputError(f"invalid resource list {raw!r}")
    return raw.items()


def format_amount(resource: str, value: int) -> str:
    """Render an integer amount the way kubectl would write it back."""
    if resource == "cpu":
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, factor in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value and value % factor == 0:
                return f"{value // factor}{suffix}"
    return str(value)


def add(a: dict, b: dict) -> dict:
    """Element-wise sum of two resource dicts."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def maximum(a: dict, b: dict) -> dict:
    """Element-wise maximum of two resource dicts."""
    out = dict(a)
    for k, v in b.items():
        out[k] = max(out.get(k, 0), v)
    return out


def add_into(total: dict, amounts: dict) -> dict:
    """``add`` in place (``total`` += ``amounts``): a pod sums many small dicts."""
    for k, v in amounts.items():
        total[k] = total.get(k, 0) + v
    return total


def max_into(peak: dict, amounts: dict) -> dict:
    """``maximum`` in place (``peak`` = max(``peak``, ``amounts``))."""
    for k, v in amounts.items():
        have = peak.get(k, 0)
        peak[k] = v if v > have else have
    return peak
