#compdef kubectl-safety
# zsh completion for kubectl-safety: `kubectl-safety completion zsh` prints it (generated; do not edit).
# Load it: see README.md. `kubectl safety <TAB>` uses kubectl_complete-safety instead.

_kubectl_safety_completion() {
    local -a completions
    local -a completions_with_descriptions
    local -a response
    (( ! $+commands[kubectl-safety] )) && return 1

    response=("${(@f)$(env COMP_WORDS="${words[*]}" COMP_CWORD=$((CURRENT-1)) _KUBECTL_SAFETY_COMPLETE=zsh_complete kubectl-safety)}")

    for type key descr in ${response}; do
        if [[ "$type" == "plain" ]]; then
            if [[ "$descr" == "_" ]]; then
                completions+=("$key")
            else
                completions_with_descriptions+=("$key":"$descr")
            fi
        elif [[ "$type" == "dir" ]]; then
            _path_files -/
        elif [[ "$type" == "file" ]]; then
            _path_files -f
        fi
    done

    if [ -n "$completions_with_descriptions" ]; then
        _describe -V unsorted completions_with_descriptions -U
    fi

    if [ -n "$completions" ]; then
        compadd -U -V unsorted -a completions
    fi
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    # autoload from fpath, call function directly
    _kubectl_safety_completion "$@"
else
    # eval/source/. command, register function for later
    compdef _kubectl_safety_completion kubectl-safety
fi
