"""One view per command: ``views/<module>.py`` (``module`` as in ``cli/registry.py``) holds how the command's
results are shown: its text renderers, its published JSON (``SERIALIZERS``: a serializer per typed class, by
the class's module and name, merged by ``cli/published.py``) and the exit code each result ends with."""
