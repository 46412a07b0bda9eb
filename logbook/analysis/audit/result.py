"""What an audit found, as one typed value: its JSON (`logbook audit --json`) and its text."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logbook.analysis.audit.context import short
from logbook.analysis.audit.registry import SEVERITIES
from logbook.findings import Finding


@dataclass(frozen=True)
class AuditResult:
    ok: bool                  # no error-level finding
    findings: list[Finding]   # sorted by rule id, seq, message, entries
    rules_run: list[str]
    entries: int              # the ledger's size
    plan: str | None          # the plan the audit was scoped to (digest)
    retracted_entries: int

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "findings": [f.as_dict() for f in self.findings],
                "rules_run": self.rules_run, "entries": self.entries, "plan": self.plan,
                "retracted_entries": self.retracted_entries}

    def lines(self) -> Iterator[str]:
        """The numbered findings, then a summary line."""
        findings = self.findings
        for i, f in enumerate(findings, 1):
            where = f" @{f.seq}" if f.seq is not None else ""
            yield f"{i}. {f.check} [{f.severity}]{where}: {f.message}"
            if f.entries:
                yield "   entries: " + ", ".join(short(d) for d in f.entries)
        counts = {s: sum(1 for f in findings if f.severity == s) for s in SEVERITIES}
        tail = f"{plural(len(self.rules_run), 'rule')} over {self.entries} entries"
        if self.retracted_entries:
            tail += (f"; {plural(self.retracted_entries, 'retracted entry', 'retracted entries')}"
                     " not judged as if they stood (`logbook log --kind retraction` lists them)")
        if findings:
            yield (f"{len(findings)} finding(s): " + ", ".join(f"{n} {s}" for s, n in
                                                               counts.items() if n)
                   + f" ({tail})")
        else:
            yield f"no findings ({tail})"


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"
