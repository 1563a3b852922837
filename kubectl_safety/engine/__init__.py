"""Acting on plans: the executor's requests, the drainer, the rollout, watches (and the snapshot
they keep current for re-plans) and the lease.

Plans in, outcomes out: no click and no printing; progress goes out through an ``on_event``
callback (as kubectl's pkg/drain does with its hooks). Imports only go down: cluster, analysis, model.
"""
