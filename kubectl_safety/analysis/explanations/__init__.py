"""What ``explain`` and delete's assessment return: frozen, typed reports (pure data), one module per report family.

They become published JSON only at the CLI edge (``cli/published.py``, one serializer per kind), as the
plans of ``analysis/plans/`` do. Values read from the cluster stay strings (a pod's status.qosClass, a
preemption policy); values the analyses choose from a closed set are enums.
"""
