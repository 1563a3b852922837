"""Finding: one best-practice or risk observation with a stable code."""

from dataclasses import dataclass

SEVERITIES = ("info", "warning", "error")  # one word in every command's findings, as kubectl's error:/Warning:


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str

    def to_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "message": self.message}
