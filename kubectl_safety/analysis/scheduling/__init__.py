"""The one implementation of kube-scheduler's default-profile Filter plugins (``filters``), used by
the drain capacity check, the preemption preview and rebalance's placement."""
