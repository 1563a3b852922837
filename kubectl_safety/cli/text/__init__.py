"""How reports and progress read as text: one module per command, from the published JSON (tables, verdicts),
the typed report itself (explain), or the engine's events (progress lines)."""
