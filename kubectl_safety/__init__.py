"""kubectl-safety: know what a cluster action will do, then do it without breaking availability.

Layers, each importing only the ones below it (enforced by ``tests/unit/project/test_layers.py``):

- ``kubectl_safety.model``: API-shaped objects parsed from camelCase dicts, the ``ClusterSnapshot``
  and the one parser that builds it. Pure: no I/O, no clock, no kubernetes/click imports.
- ``kubectl_safety.analysis``: pure functions of a snapshot (and an explicit ``now``) that return
  explanations and plans. Imports only ``model``.
- ``kubectl_safety.cluster``: the only I/O: dump files, the live API (kubernetes client), the
  executor that carries out plans.
- ``kubectl_safety.cli``: click commands and renderers; wiring only.
"""

__version__ = "0.1.0"
