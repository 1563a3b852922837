"""What the planners return: frozen, typed plans (pure data, no behaviour beyond derived figures), one module
per plan family.

They become published JSON only at the CLI edge (``cli/published.py``, one serializer per kind).
"""
