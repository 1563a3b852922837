"""``python -m kubectl_safety`` runs the CLI."""

from kubectl_safety.cli.main import run

if __name__ == "__main__":
    run()
