# fish completion for kubectl-safety: `kubectl-safety completion fish` prints it (generated; do not edit).
# Load it: see README.md. `kubectl safety <TAB>` uses kubectl_complete-safety instead.
function _kubectl_safety_completion;
    set -l response (env _KUBECTL_SAFETY_COMPLETE=fish_complete COMP_WORDS=(commandline -cp) COMP_CWORD=(commandline -t) kubectl-safety);

    for completion in $response;
        set -l metadata (string split -m 1 "," $completion);

        if test $metadata[1] = "dir";
            __fish_complete_directories $metadata[2];
        else if test $metadata[1] = "file";
            __fish_complete_path $metadata[2];
        else if test $metadata[1] = "plain";
            echo $metadata[2];
        end;
    end;
end;

complete --no-files --command kubectl-safety --arguments "(_kubectl_safety_completion)";
