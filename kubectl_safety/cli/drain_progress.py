"""A drain's progress events as lines on stderr (drain's and each rollout batch's)."""


class DrainProgress:
    """Progress events on stderr (cli/progress.py): a line each; retries and waits on a live line."""

    def __init__(self):
        from kubectl_safety.cli.progress import Progress

        self.out = Progress()

    LIVE = ("retrying", "waiting", "unreachable")  # events shown on the live status line

    def __call__(self, event):
        line = self.text(event)
        if not line:
            return
        if event["event"] in self.LIVE:
            self.out.status(line, event.get("timeLeft"))
        else:
            self.out.line(line)

    @staticmethod
    def text(event) -> str:
        return event_line(event)


def event_line(e) -> str:
    kind, pod = e["event"], e.get("pod")
    if kind == "drained":
        return f"node/{pod} drained"
    if kind in ("cordon", "uncordon") and e.get("result", "done") != "done":
        return f"error: unable to {kind} node/{pod}: {e.get('message') or e.get('result')}"
    if kind == "cordon":
        return f"node/{pod} {e.get('message') or e.get('result')}"
    if kind == "evicting":
        return f"evicting pod {pod}" + (" (server dry run)" if e.get("dryRun") else "")
    if kind == "retrying":
        return (f"cannot evict pod {pod} yet ({e.get('result')}): {e.get('message')} "
                f"(retry in {e.get('retryIn'):.0f}s)")
    if kind == "waiting":
        return f"waiting: {e.get('message')}"
    if kind == "evicted":
        return f"pod/{pod.rsplit('/', 1)[-1]} evicted"
    if kind == "unreachable":
        return f"lost the API server, watching again: {e.get('message')}"
    if kind == "appeared":
        return f"pod/{pod.rsplit('/', 1)[-1]} appeared on node/{e.get('node')} after the drain (reported, not evicted)"
    if kind == "uncordon":
        return f"node/{pod} {e.get('message') or e.get('result')}"
    if kind == "completed":
        return f"pod/{pod.rsplit('/', 1)[-1]} completed"
    if kind == "surge":
        return f"surge: {e.get('message')}"
    if kind == "gave-up":
        return f"gave up evicting pod {pod} ({e.get('reason')}): {e.get('message')}"
    if kind == "evidence-not-recorded":
        return f"warning: {e.get('message')}"
    if kind in ("done", "gone"):
        return "" if kind == "done" else f"pod/{pod.rsplit('/', 1)[-1]} already gone"
    return f"error: cannot evict pod {pod}: {kind} {e.get('message') or ''}".strip()
