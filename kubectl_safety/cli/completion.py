"""Shell completion: kubectl's plugin completion protocol over click's, and the scripts for bash, zsh, fish.

``kubectl_complete-safety`` (kubectl >= 1.26) receives the words after ``safety`` plus the word
being completed (``""`` for a new word) and prints one ``value<TAB>description`` per line, then
``:<directive>`` (cobra's ShellCompDirective). Static answers (subcommands, flags) come from the
click tree without importing the kubernetes client; names come from the dynamic completers
(``cli/completers.py``). A completion never hangs and never prints an error.
"""

import contextlib
import io
import sys

from click.shell_completion import FishComplete, ShellComplete, add_completion_class

from kubectl_safety.cli.completion_request import COMPLETE_VAR

EXECUTABLE = "kubectl-safety"
HARD_LIMIT = 5  # seconds: a kubectl_complete-safety run answers within this, whatever happens

# cobra ShellCompDirective values
DIRECTIVE_DEFAULT, DIRECTIVE_NO_SPACE, DIRECTIVE_NO_FILE_COMP, DIRECTIVE_FILTER_DIRS = 0, 2, 4, 16


class KubectlComplete(ShellComplete):
    """Answer one kubectl plugin completion request for ``argv`` (the words after ``safety``)."""

    name = "kubectl"

    def __init__(self, cli, argv):
        super().__init__(cli, {}, "kubectl safety", COMPLETE_VAR)
        self.argv = list(argv)

    def get_completion_args(self):
        if not self.argv:
            return [], ""
        return self.argv[:-1], self.argv[-1]

    def format_completion(self, item):
        description = " ".join(str(item.help or "").split())
        return f"{item.value}\t{description}" if description else str(item.value)

    def complete(self):
        args, incomplete = self.get_completion_args()
        items = self.get_completions(args, incomplete)
        lines = [self.format_completion(i) for i in items if i.type == "plain"]
        return "\n".join(lines + [f":{directive(items)}"])


class WholeFishComplete(FishComplete):
    """click's fish support, but a description with commas stays whole (split at the first comma only)."""

    source_template = FishComplete.source_template.replace('(string split "," $completion)',
                                                            '(string split -m 1 "," $completion)')

    def format_completion(self, item):
        help_ = " ".join(str(item.help or "").split())
        return f"{item.type},{item.value}\t{help_}" if help_ else f"{item.type},{item.value}"


add_completion_class(WholeFishComplete, "fish")


def directive(items) -> int:
    """Files or directories let the shell complete paths; anything else turns path completion off."""
    types = {i.type for i in items}
    if "file" in types:
        return DIRECTIVE_DEFAULT
    if "dir" in types:
        return DIRECTIVE_FILTER_DIRS
    if any(str(i.value).endswith("=") for i in items):  # -o jsonpath= : the template follows, no space
        return DIRECTIVE_NO_FILE_COMP | DIRECTIVE_NO_SPACE
    return DIRECTIVE_NO_FILE_COMP


HEADER = ("# {shell} completion for {exe}: `{exe} completion {shell}` prints it (generated; do not edit).\n"
          "# Load it: see README.md. `kubectl safety <TAB>` uses kubectl_complete-safety instead.\n")


def script(shell: str) -> str:
    """The completion script for ``shell`` (``kubectl-safety completion SHELL``, ``completions/``).

    The header goes after zsh's ``#compdef`` line, which must stay first for autoloading."""
    source, header = shell_source(shell), HEADER.format(shell=shell, exe=EXECUTABLE)
    if source.startswith("#compdef"):
        first, _, rest = source.partition("\n")
        return f"{first}\n{header}{rest}"
    return header + source


def shell_source(shell: str) -> str:
    """The bash/zsh/fish script click generates for the ``kubectl-safety`` executable."""
    from click.shell_completion import get_completion_class

    from kubectl_safety.cli.main import cli

    completer = get_completion_class(shell)(cli, {}, EXECUTABLE, COMPLETE_VAR)
    # ShellComplete.source without BashComplete's bash version probe: the text depends on nothing else.
    return ShellComplete.source(completer)


# -- the kubectl_complete-safety executable -----------------------------------------------------

class _TooSlow(Exception):
    pass


def _too_slow(signum, frame):
    raise _TooSlow()


def answer(argv) -> str:
    """The full answer to one request; ``:4`` alone when anything goes wrong."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            from kubectl_safety.cli.main import cli

            return KubectlComplete(cli, argv).complete()
    except BaseException:  # noqa: BLE001 - a completion prints candidates or nothing, never an error
        return f":{DIRECTIVE_NO_FILE_COMP}"


def main(argv=None):
    """Entry point of ``kubectl_complete-safety``."""
    import signal

    argv = sys.argv[1:] if argv is None else argv
    alarm = hasattr(signal, "SIGALRM")
    if alarm:
        previous = signal.signal(signal.SIGALRM, _too_slow)
        signal.alarm(HARD_LIMIT)
    try:
        out = answer(argv)
    finally:
        if alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    from kubectl_safety.printable import printable

    sys.stdout.write("\n".join("\t".join(map(printable, line.split("\t"))) for line in out.split("\n")) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
