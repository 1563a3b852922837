"""``python -m kubectl_safety`` runs the CLI."""

from kubectl_safety.cli.main import main

if __name__ == "__main__":
    main()
