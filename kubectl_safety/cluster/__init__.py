"""The only I/O: dump files, the live API server, and the executor that carries out plans.

Nothing here decides what is safe; it fetches snapshots and performs requests, reporting every
outcome. The kubernetes client is imported lazily, only when a live cluster is used.
"""
