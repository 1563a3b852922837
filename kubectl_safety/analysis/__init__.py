"""Pure analysis: every answer is a function of a ClusterSnapshot and an explicit ``now``.

Modules here import only ``kubectl_safety.model`` (and the standard library). No I/O, no clock,
no environment, no kubernetes client, no click. Results explain themselves: reasons and
findings carry stable codes.
"""
