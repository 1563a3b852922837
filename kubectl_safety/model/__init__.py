"""API-shaped objects, the ClusterSnapshot and the one parser that builds it.

All functions here are purely data-manipulative: no I/O, no clock, no environment, and no
imports of the kubernetes client, click or anything outside the standard library and
``kubectl_safety.errors``.
"""
