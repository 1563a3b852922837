// The test node's image program: a signal logger, a preStop helper, a memory holder and the pause
// container, plus the writer of the docker-archive tarballs that package it. Stdlib only.
module kubectl-safety/controlplane/testapp

go 1.26.0
