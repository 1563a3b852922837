"""``version``'s view: its text (kind Version is a plain dict: nothing to serialize)."""


def render(r, wide=False) -> str:
    return (f"kubectl-safety {r['clientVersion']}\nserver: "
            f"{r['serverVersion'] or 'unreachable (' + r.get('serverError', 'no snapshot server') + ')'}\n")
