"""What `logbook log` and `logbook brief` do, apart from how their options are declared: the
typer commands (logbook.cli.read, logbook.cli.brief) and the lean start (logbook.cli.lean) both
call these, so that the two ways in behave alike, as logbook.cli.append_and_note does for
`append` and `note`. Nothing here imports typer; the ledger is the one the command line named
(``ledger_at``, else LOGBOOK_DIR or the working folder)."""

from __future__ import annotations

from typing import Any

from logbook.cli import state
from logbook.errors import InputError


def show_log(ledger_at: str | None, kind: str | None, plan: str | None, n: int | None,
             checkpoints: bool, as_json: bool) -> None:
    """List entries in ledger order (or the checkpoints made)."""
    from logbook.format.kinds import KINDS

    if n is not None and n < 0:
        raise InputError("-n must not be negative")
    if kind is not None and kind not in KINDS:
        raise InputError(f"--kind {kind!r} is not one of {', '.join(KINDS)}")
    if checkpoints:  # kept beside the chain (`logbook verify` checks them)
        with state.open_ledger(at=ledger_at) as ledger:
            rows = ledger.entry_log.checkpoints()
        if as_json:
            state.emit_json([{"size": s, "root": r, "created": c, "note": t}
                             for _, s, r, t, c in rows])
        else:
            for _, s, r, _t, c in rows:
                print(f"size {s} root {r} {c}")
        return
    with state.open_verified(keep=(), at=ledger_at) as (ledger, _checked, _):
        entries = ledger.log(kind, plan, n)
        retracted = ledger.reads.retractions_of([e.digest for e in entries])
    if as_json:
        state.emit_json([{"seq": e.seq, "digest": e.digest, "kind": e.kind,
                          "ts": e.envelope.get("ts"), "retracted_by": retracted.get(e.digest, []),
                          "entry": e.envelope} for e in entries])
        return
    for e in entries:
        mark = " [retracted]" if e.digest in retracted else ""
        print(f"{e.seq:>6} {e.digest[:12]} {e.envelope.get('ts', '')[:19]} {e.kind:<10} "
              f"{_summary(e)}{mark}")


def show_brief(ledger_at: str | None, as_json: bool, since: int | None) -> None:
    """What to know before the first run: open plans, retractions, what to re-measure."""
    from logbook.analysis.brief import build_brief
    from logbook.analysis.brief_text import brief_lines
    from logbook.integrations.spool import folder_of, listing

    if since is not None and since < 0:
        raise InputError("--since must not be negative")
    with state.open_verified(keep=(), at=ledger_at) as (ledger, checked, _):
        b = build_brief(ledger, since, checked.as_dict(), listing(folder_of(ledger)))
    if as_json:
        state.emit_json(b.as_json())
    else:
        print("\n".join(brief_lines(b)))


def _summary(entry: Any) -> str:
    b = entry.body
    k = entry.kind
    if k == "genesis":
        return f"ledger {b.get('name')!r} {b.get('uuid')}"
    if k == "plan":
        return f"{b.get('slug')}: {b.get('title')}"
    if k == "run":
        plan = (b.get("plan") or "exploratory")[:12]
        arm = f" arm={b['arm']}" if b.get("arm") is not None else ""
        want = b.get("intended")
        if isinstance(want, dict):  # refused by the plan it was meant for
            arm = f" refused-by={str(want.get('plan'))[:12]} arm={want.get('arm')}"
        if b.get("status") != "completed":  # a failed or aborted run has a reason, no score
            return f"{b.get('status')} plan={plan}{arm}: {b.get('reason')}"
        oc = b.get("outcomes") or {}
        scores = [s for s in oc.get("score", []) if s is not None]
        score = f" {oc.get('metric')}={sum(scores) / len(scores):.4f}" if scores else ""
        return f"completed plan={plan}{arm}{score}"
    if k == "retraction":
        return f"retracts {str(b.get('target'))[:12]} ({b.get('category')}): {b.get('reason')}"
    if k == "amendment":
        return f"amends {str(b.get('plan'))[:12]}: {', '.join(b.get('changes', {}))}"
    if k == "note":
        return str(b.get("text"))
    if k == "claim":
        return str(b.get("statement"))
    if k == "key":
        return f"{b.get('action')} key {b.get('name')!r}: {b.get('reason')}"
    if k == "band":
        return f"band {b.get('selector')} k={b.get('k')} band={b.get('band')}"
    if k == "admission":
        return (f"admits {str(b.get('run'))[:12]} to {str(b.get('plan'))[:12]} arm={b.get('arm')}"
                + (f": {b['reason']}" if b.get("reason") else ""))
    return ""
