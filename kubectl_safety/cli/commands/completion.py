"""``kubectl safety completion SHELL``: the shell completion script, as ``kubectl completion`` prints its own."""

import click

from kubectl_safety.cli.completion_request import SHELLS
from kubectl_safety.cli.options import get_globals, global_options


@click.command("completion", epilog="\b\nJSON kind: none (the script only)")
@click.argument("shell", type=click.Choice(SHELLS), metavar="SHELL")
@global_options
def command(shell):
    """Print the completion script of kubectl-safety for bash, zsh or fish.

    The script completes `kubectl-safety <TAB>` (the executable called directly): commands,
    flags, and node, pod, workload, namespace and context names, asked of kubectl-safety itself.
    `kubectl safety <TAB>` is kubectl's own completion, which asks kubectl_complete-safety.

    \b
    Usage: kubectl safety completion bash|zsh|fish
    Examples:
      kubectl safety completion bash > ~/.local/share/bash-completion/completions/kubectl-safety
      source <(kubectl safety completion bash)                # or this line in ~/.bashrc (bash >= 4.4)
      kubectl safety completion zsh > "${fpath[1]}/_kubectl-safety"   # zsh: a folder on $fpath
      kubectl safety completion fish > ~/.config/fish/completions/kubectl-safety.fish
    """
    get_globals()  # -A and the other global flags are checked as everywhere
    from kubectl_safety.cli.completion import script

    click.echo(script(shell), nl=False)
    return 0
