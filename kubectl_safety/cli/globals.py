"""The global flags as given: gathered from every occurrence on the command line into one ``Globals``."""

from dataclasses import field

from kubectl_safety.record import record

META = "kubectl_safety.globals"  # ctx.meta key of the values given, by parameter name


@record(frozen=False, slots=False)
class Globals:
    kubeconfig: str = None
    context: str = None
    cluster: str = None
    user: str = None
    server: str = None
    token: str = field(default=None, repr=False)
    certificate_authority: str = None
    client_certificate: str = None
    client_key: str = None
    tls_server_name: str = None
    namespace: str = None
    all_namespaces: bool = False
    snapshot: tuple = ()
    output: str = "table"
    request_timeout: str = "0"
    as_user: str = None
    as_groups: tuple = ()
    as_uid: str = None
    insecure_skip_tls_verify: bool = False
    verbosity: int = 0
    now: object = None
    warnings: list = field(default_factory=list)

    def overrides(self) -> dict:
        """kubectl's ConfigOverrides: connection flags that replace what the kubeconfig context says."""
        keys = ("cluster", "user", "server", "token", "certificate_authority", "client_certificate", "client_key",
                "tls_server_name")
        out = {k: getattr(self, k) for k in keys if getattr(self, k)}
        if self.insecure_skip_tls_verify:
            out["insecure_skip_tls_verify"] = True
        return out


def given_globals(ctx) -> Globals:
    """The merged global flags of ``ctx`` (the occurrence nearest the end of the command line wins)."""
    values = ctx.meta.get(META, {})
    g = Globals(**{k: v for k, v in values.items() if k in Globals.__dataclass_fields__})
    g.output = g.output or "table"
    g.request_timeout = g.request_timeout or "0"
    g.verbosity = g.verbosity or 0
    return g
