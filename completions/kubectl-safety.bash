# bash completion for kubectl-safety: `kubectl-safety completion bash` prints it (generated; do not edit).
# Load it: see README.md. `kubectl safety <TAB>` uses kubectl_complete-safety instead.
_kubectl_safety_completion() {
    local IFS=$'\n'
    local response

    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD _KUBECTL_SAFETY_COMPLETE=bash_complete $1)

    for completion in $response; do
        IFS=',' read type value <<< "$completion"

        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=($value)
        fi
    done

    return 0
}

_kubectl_safety_completion_setup() {
    complete -o nosort -F _kubectl_safety_completion kubectl-safety
}

_kubectl_safety_completion_setup;
