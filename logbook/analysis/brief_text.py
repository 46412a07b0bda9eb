"""`logbook brief` as text (its JSON is the `Brief` shape itself, logbook.analysis.brief_shapes),
and one spooled run as `brief` and `logbook spool list` print it."""

from __future__ import annotations

from logbook.analysis.brief_shapes import Brief, SpooledRun
from logbook.analysis.cost import budget_text


def brief_lines(b: Brief) -> list[str]:
    led, integ = b.ledger, b.integrity
    out = ["NEXT:"] + [f"  {i}. {s}" for i, s in enumerate(b.next, 1)]
    checked = integ.verified
    out.append(f"ledger {led.name!r} {led.uuid}: {led.size} entries; "
               + ("not checked" if checked is None else f"verified now ({checked.checks})")
               + ("" if not integ.latest_checkpoint else
                  f"; checkpoint at size {integ.latest_checkpoint.size}"))
    if b.spooled:
        out.append(f"spooled runs, not in the ledger ({len(b.spooled)}):")
        out += [f"  {spooled_line(r)}" for r in b.spooled[:5]]
    if b.open_plans:
        out.append("open plans:")
        for p in b.open_plans[:8]:
            arms = ", ".join(f"{a.arm} {a.completed}/{a.planned}" for a in p.arms)
            out.append(f"  {p.slug}: {arms}; "
                       + (f"next arm {p.next_arm}" if p.next_arm not in p.blocked else
                          f"arm {p.next_arm} is being refused"))
            out += [f"    refused @{r.seq} (arm {r.arm}, not counted): {r.reason}"
                    for r in p.refused[-5:]]
            out += [f"    budget: {budget_text(x.as_json())}" for x in p.budget_lines]
    if b.overdue:
        out.append("past due without a verdict: " + "; ".join(
            f"{p.slug} (due {p.due}, {p.runs_done}/{p.runs_planned} runs)"
            for p in b.overdue[:5]))
    if b.remeasure:
        out.append("re-measure:")
        out += [f"  {f['message']}" for f in b.remeasure[:5]]
    if b.beyond_band:
        out.append("runs beyond their band:")
        out += [f"  {f['message']}" for f in b.beyond_band[:5]]
    if b.retractions:
        out.append("retractions:")
        out += [f"  @{r.seq} retracts {str(r.target)[:12]} ({r.category}): {r.reason}"
                for r in b.retractions[-5:]]
    for x in b.resting_on_retracted[:5]:
        out.append(f"  ! {x.kind} @{x.seq} rests on retracted {x.rests_on[0][:12]}: {x.text}")
    if b.audit and b.audit.errors:
        out.append(f"audit errors ({len(b.audit.errors)}, at size {b.audit.size}, "
                   "as the last `logbook audit` stored them, not verified: run it again to "
                   "recompute):")
        out += [f"  {f['check']}: {f['message']}" for f in b.audit.errors[:5]]
    if b.bands:
        out.append("bands: " + "; ".join(f"{x.selector} ±{x.band:.4g} (k={x.k})"
                                         for x in b.bands[-3:]))
        for band in b.bands:
            if band.remeasure:
                out.append(f"  ! band @{band.seq} ({band.selector}) must be re-measured: "
                           f"@{band.remeasure.seq} ran its apparatus under another evaluator "
                           f"({', '.join(band.remeasure.changed)} changed; evaluator hash "
                           f"{band.remeasure.evaluator_config_hash})")
    if b.held_out:
        out.append("held out (a run on one is a look, a plan's runs one between them; tune on "
                   "another split):")
        out += [f"  {h.split} split of suite {h.suite}"
                + (f" (version {h.version})" if h.version else "")
                + f", suite entry @{h.seq}: allows {h.looks} look(s)" for h in b.held_out[:5]]
    if b.claims:
        out.append("claims:")
        out += [f"  @{c.seq} {c.statement} — {c.status}" for c in b.claims]
    if b.notes:
        out.append("notes:")
        out += [f"  @{n.seq} {n.text}" for n in b.notes[-3:]]
    ps = b.previous_session
    if ps:
        runs = ", ".join(f"@{r.seq} {r.arm} {r.status}" for r in ps.runs[-6:])
        out.append(f"previous session {ps.session}: {len(ps.runs)} runs ({runs})")
    return out


def spooled_line(r: SpooledRun) -> str:
    """One spooled run as `brief` and `logbook spool list` print it."""
    count = "" if r.runs is None else f" ({r.runs} run{'s' if r.runs != 1 else ''})"
    target = f"plan {r.plan} arm {r.arm}" if r.plan or r.arm else "exploratory"
    return (f"{r.file} {r.spooled_at or '?'} {r.source or '?'} {r.output or '?'}{count} "
            f"for {target}: {r.why}")
