"""Upgrade engines' drains as profiles of the one drain model, by name (``--engine NAME``).

Each engine is one module here (``base`` says what a module declares); nothing outside these modules
asks which engine it is. ``load(name, given, snapshot)`` resolves the engine's settings, each with its
source (the object where the engine keeps it, else ``--engine-setting``, else the engine's default),
and returns its ``DrainProfile``.
"""

import importlib
import pkgutil

NOT_ENGINES = frozenset({"ahead", "base", "outcome"})  # the modules here that are not an engine's


def engines() -> list:
    """The engines' names: the profile modules of this package, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in NOT_ENGINES)


def module(name):
    """The engine's profile module; a usage error names the engines there are."""
    from kubectl_safety.errors import UsageError

    if name not in engines():
        raise UsageError(f"unknown engine {name!r}: use one of {', '.join(engines())}")
    return importlib.import_module(f"kubectl_safety.analysis.profiles.{name}")


def parse_assignments(texts) -> dict:
    """``KEY=VALUE`` strings of --engine-setting: {key: value} (the last of a key wins, as kubectl's flags)."""
    from kubectl_safety.errors import UsageError

    out = {}
    for item in texts or ():
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise UsageError(f"invalid --engine-setting {item!r}: use KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def resolve(mod, given: dict, found: dict) -> dict:
    """{name: Setting} of the engine's ``SETTINGS``: ``found`` ({name: (text, origin)} read from the
    snapshot) first, then ``given`` (--engine-setting), then the default. A key the engine does not have,
    a value it would not take, or a flag for a setting the snapshot's object already sets is a usage error."""
    from kubectl_safety.analysis.profiles.base import Setting, SettingError, Source
    from kubectl_safety.errors import UsageError

    specs = {s.name: s for s in mod.SETTINGS}
    for key in given:
        if key not in specs:
            raise UsageError(f"--engine-setting {key}: engine {mod.NAME} has no such setting: use one of "
                             f"{', '.join(specs)}")
        if key in found:
            text, origin = found[key]
            raise UsageError(f"--engine-setting {key}: {origin} sets it ({text}): the engine uses that value")
    out = {}
    for name, spec in specs.items():
        if name in found:
            text, source, origin = found[name][0], Source.OBJECT, found[name][1]
        elif name in given:
            text, source, origin = given[name], Source.FLAG, ""
        else:
            text, source, origin = spec.default, Source.DEFAULT, ""
        try:
            value = spec.parse(text)
        except SettingError as e:
            where = origin or ("--engine-setting" if source is Source.FLAG else "default")
            raise UsageError(f"invalid {name} {text!r} ({where}): {e}") from None
        out[name] = Setting(name, value, str(text), source, origin)
    return out


def load(name, given=None, snapshot=None, nodes=()):
    """The engine's ``DrainProfile`` with its settings resolved (``given``: --engine-setting's {key: value};
    ``nodes``: the nodes it drains, whose objects hold the settings)."""
    mod = module(name)
    read = getattr(mod, "read", None)
    found = read(snapshot, list(nodes), dict(given or {})) if read is not None and snapshot is not None else {}
    return mod.profile(resolve(mod, dict(given or {}), found))
