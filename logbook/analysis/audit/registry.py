"""The audit's rules, registered where they are written: `@rule(id, severity=..., title=...,
finds=...)` on a function of the audit `Context` that yields its findings.

`registered()` is the one list of rules, filled as the theme modules of `rules/` are imported
(importing any part of the audit package imports them all, through its runner).
docs/audit.md's rule table lists the same ids, severities and titles (a test compares them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from logbook.findings import Finding

if TYPE_CHECKING:
    from logbook.analysis.audit.context import Context

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
Check = Callable[["Context"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    title: str
    description: str
    check: Check

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "severity": self.severity, "title": self.title,
                "description": self.description}


_RULES: dict[str, Rule] = {}


def rule(rule_id: str, *, severity: Severity, title: str,
         finds: str) -> Callable[[Check], Check]:
    """Register the decorated check as rule `rule_id`: its severity (the worst it reports),
    title and what it finds, as `logbook audit --rules` lists them."""
    def register(check: Check) -> Check:
        if rule_id in _RULES:
            raise ValueError(f"audit rule {rule_id} is registered twice")
        _RULES[rule_id] = Rule(rule_id, severity, title, finds, check)
        return check
    return register


def registered() -> list[Rule]:
    """Every registered rule, in id order."""
    return sorted(_RULES.values(), key=lambda r: r.id)


def rule_ids() -> list[str]:
    """The ids of every registered rule, in order."""
    return [r.id for r in registered()]
