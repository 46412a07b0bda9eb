"""`logbook brief`: what a session-bound agent must know before its first run.

Reads the index summaries (the read model its check hands out, logbook.verify.checked_reads)
and the few entries it shows (plans, recent retractions, claims, notes, bands). Its integrity
line is the check the command made before building it (logbook.verify.integrity), never a
stored result; what it says of the audit is what the audit stored.
"""

from __future__ import annotations

from typing import Any

import orjson

from logbook.analysis.brief_shapes import (
    BandRow,
    Brief,
    Checked,
    ClaimRow,
    HeldOutRow,
    Integrity,
    LatestCheckpoint,
    LedgerHead,
    NoteRow,
    OpenPlan,
    Overdue,
    PlanArm,
    PreviousSession,
    RefusedRun,
    Remeasure,
    RestingOn,
    RetractionRow,
    SessionRun,
    SpooledRun,
    StoredAudit,
)
from logbook.analysis.cost import plan_budget
from logbook.format.splits import allowed_looks
from logbook.ledger.entry import Entry
from logbook.ledger.service import Ledger
from logbook.model import amended
from logbook.verify.checked_reads import CheckedReads

RECENT = 20
SLOW_SIGNATURES = 10_000  # more checked one by one than this: suggest a checkpoint


def _entries(store: CheckedReads, kind: str, last: int | None = None) -> list[Entry]:
    return [Entry.from_stored(s) for s in store.entries_where(kind, None, last)]


def stored_findings(raw: object) -> list[dict[str, Any]]:
    """The findings a stored audit row holds; a row that is not a list of findings (a
    damaged or forged file) gives none, never a crash."""
    try:
        found = orjson.loads(raw) if isinstance(raw, bytes | str) else None
    except orjson.JSONDecodeError:
        return []
    if not isinstance(found, list):
        return []
    keys = ("check", "severity", "message")
    return [f for f in found if isinstance(f, dict) and all(isinstance(f.get(k), str)
                                                            for k in keys)]


def evaluator_changed(ledger: Ledger, band: Entry,
                      recent_runs: list[Entry]) -> Remeasure | None:
    """The latest recent run of the band's apparatus (every non-identity field but the
    evaluator's) scored under another evaluator: any `evaluator.*` field differs from the
    band's runs' (its model, prompt, temperature, config hash...). The band describes the old
    evaluator: it must be re-measured. Else None."""
    from logbook.analysis.view import flatten, is_identity

    first = band.body.get("runs") or []
    found = ledger.get(first[0]) if first else None
    if found is None:
        return None

    def split(e: Entry) -> tuple[dict[str, Any], dict[str, Any]]:
        flat = flatten(e.body.get("apparatus") or {})
        judge = {k: v for k, v in flat.items() if k.startswith("evaluator.")}
        return {k: v for k, v in flat.items()
                if not is_identity(k) and k not in judge}, judge

    want, judge = split(found)
    stamp = band.body.get("evaluator_config_hash")
    for run in reversed(recent_runs):
        if run.seq <= band.seq or run.body.get("status") != "completed" \
                or ledger.reads.retractions_of([run.digest]).get(run.digest):
            continue
        shape, theirs = split(run)
        changed = sorted(k for k in {*judge, *theirs} if judge.get(k) != theirs.get(k))
        if shape == want and (changed or theirs.get("evaluator.config_hash") != stamp):
            return Remeasure(seq=run.seq, digest=run.digest,
                             evaluator_config_hash=theirs.get("evaluator.config_hash"),
                             changed=changed or ["evaluator.config_hash"])
    return None


def open_plans(store: CheckedReads, retracted: set[str]) -> list[OpenPlan]:
    """Plans with an arm short of its planned runs, and the arm to run next.

    Most plans are finished. A plan untouched by amendments and retractions is finished when
    every arm its body names has runs_per_arm completed runs, which SQLite answers from the
    run index and the plan's JSON; only the other plans are parsed and counted in full.
    """
    completed = store.completed_counts()
    touched = store.plans_touched(sorted(retracted))
    maybe_open = [seq for seq, digest, shape in store.plan_shapes()
                  if digest in touched or not _finished(digest, shape, completed)]
    plans = [Entry.from_stored(s) for s in store.entries_at(maybe_open)]
    counts: dict[tuple[str, str], dict[str, int]] = {}
    last_seq: dict[tuple[str, str], int] = {}
    last_run: dict[tuple[str, str], int] = {}
    for plan, arm, status, n, last in store.run_counts([p.digest for p in plans]):
        counts.setdefault((plan, arm), {})[status] = n
        last_run[(plan, arm)] = max(last, last_run.get((plan, arm), -1))
        if status == "completed":  # interleaving follows the runs that counted
            last_seq[(plan, arm)] = last
    admitted = admitted_runs(store, retracted, {p.digest for p in plans})
    for (plan, arm), runs in admitted.items():
        for seq, status in runs:
            c = counts.setdefault((plan, arm), {})
            c[status] = c.get(status, 0) + 1
            last_run[(plan, arm)] = max(seq, last_run.get((plan, arm), -1))
            if status == "completed":
                last_seq[(plan, arm)] = max(seq, last_seq.get((plan, arm), -1))
    refused = refused_runs(store, retracted, [p.digest for p in plans],
                           {s for runs in admitted.values() for s, _ in runs})
    amendments: dict[str, list[Entry]] = {}
    amended_at: dict[str, int] = {}
    for a in _entries(store, "amendment"):
        if a.digest not in retracted:  # a withdrawn amendment no longer applies
            amendments.setdefault(a.body["plan"], []).append(a)
            amended_at[a.body["plan"]] = a.seq
    out = []
    for p in plans:
        if p.digest in retracted:
            continue
        body = amended(p.body, amendments.get(p.digest, []))
        k = int(body.get("runs_per_arm", 0))
        arms = []
        for arm in body.get("arms", []):
            c = counts.get((p.digest, arm["name"]), {})
            arms.append(PlanArm(arm=arm["name"], role=arm.get("role"),
                                completed=c.get("completed", 0), planned=k,
                                failed=c.get("failed", 0), aborted=c.get("aborted", 0),
                                last_seq=last_seq.get((p.digest, arm["name"]))))
        short = [a for a in arms if a.completed < k]
        if not short:
            continue
        mine = refused.get(p.digest, [])
        # an arm whose latest run was refused, the plan unchanged since: running it again
        # would be refused again
        since = max(amended_at.get(p.digest, -1), -1)
        blocked = [a.arm for a in short
                   if any(r.arm == a.arm and r.seq > max(since, last_run.get((p.digest, a.arm),
                                                                            -1))
                          for r in mine)]
        runnable = [a for a in short if a.arm not in blocked] or short
        # interleave: the arm with the fewest completed runs, then the one run least recently
        nxt = min(runnable, key=lambda a: (a.completed, -1 if a.last_seq is None
                                           else a.last_seq))
        out.append(OpenPlan(plan=p.digest, slug=body["slug"], title=body.get("title"),
                            seq=p.seq, arms=arms, next_arm=nxt.arm,
                            runs_done=sum(a.completed for a in arms),
                            runs_planned=k * len(arms), due=body.get("due"), refused=mine,
                            blocked=blocked,
                            budget=plan_budget(store, p.digest, body.get("budget"), retracted,
                                               [s for (plan, _a), runs in admitted.items()
                                                if plan == p.digest for s, _ in runs])))
    return out


def admitted_runs(store: CheckedReads, retracted: set[str],
                  plans: set[str]) -> dict[tuple[str, str], list[tuple[int, str]]]:
    """(plan, arm) -> (seq, status) of the runs standing admissions count there (logbook
    admit; neither the admission nor the run retracted), for these plans."""
    found = [a for a in _entries(store, "admission")
             if a.digest not in retracted and a.body.get("plan") in plans
             and a.body.get("run") not in retracted]
    seqs = {str(a.body["run"]): k[0] for a in found
            if (k := store.kind_of(str(a.body["run"]))) is not None}
    bodies = {s.digest: Entry.from_stored(s).body for s in store.entries_at(
        sorted(set(seqs.values())))}
    out: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for a in found:
        run = bodies.get(str(a.body["run"]))
        if run is not None:
            out.setdefault((a.body["plan"], a.body["arm"]), []).append(
                (seqs[a.body["run"]], str(run.get("status"))))
    return out


def refused_runs(store: CheckedReads, retracted: set[str], plans: list[str],
                 admitted: set[int]) -> dict[str, list[RefusedRun]]:
    """Plan -> the runs meant for it that it refused (their ``intended``), neither retracted
    nor admitted since, found through the index (a refused run's target is its plan)."""
    out: dict[str, list[RefusedRun]] = {}
    for stored in store.entries_where("run", targets=plans):
        if stored.digest in retracted or stored.seq in admitted:
            continue
        want = Entry.from_stored(stored).body.get("intended") or {}
        out.setdefault(str(want.get("plan")), []).append(RefusedRun(
            seq=stored.seq, digest=stored.digest, arm=str(want.get("arm")),
            reason=str(want.get("reason"))))
    return out


def _finished(digest: str, shape: str | None, completed: dict[tuple[str, str], int]) -> bool:
    """Whether every arm of an unamended plan has its planned completed runs."""
    k, arms = orjson.loads(shape) if shape else (None, None)
    return (type(k) is int and type(arms) is list
            and all(type(a) is dict and type(a.get("name")) is str
                    and completed.get((digest, a["name"]), 0) >= k
                    for a in arms))


def resting_on(store: CheckedReads, retractions: list[Entry],
               withdrawn: frozenset[str] = frozenset()) -> list[RestingOn]:
    """Claims and notes that rest on what these retractions withdraw (a reference always
    points back, so only entries after the earliest target can), less those ``withdrawn``
    themselves: a retracted claim is not one to retract."""
    targets = {str(r.body.get("target")): r for r in retractions}
    if not targets:
        return []
    first = min(found[0] for t in targets if (found := store.kind_of(t)) is not None)
    rows = []
    # a byte search finds the candidates (entries_mentioning); parsing confirms each reference
    for stored in store.entries_mentioning(("claim", "note"), first, sorted(targets)):
        e = Entry.from_stored(stored)
        b = e.body
        refs = {*b.get("runs", []), *b.get("refs", []), b.get("plan")}
        hit = sorted(t for t in targets if t in refs)
        if hit and e.digest not in withdrawn:
            rows.append(RestingOn(seq=e.seq, digest=e.digest, kind=e.kind, rests_on=hit,
                                  text=b.get("statement") or b.get("text")))
    return rows


def build_brief(ledger: Ledger, since: int | None = None,
                verified: dict[str, Any] | None = None,
                spooled: list[SpooledRun] | None = None) -> Brief:
    """The brief; ``verified`` is what the integrity check established (its ``as_dict``;
    None: not checked); ``spooled``: the runs waiting in the ledger's spool, as the caller
    read them (logbook.integrations.spool.listing)."""
    store = ledger.brief_reads()
    size, head = store.head()
    retractions = _entries(store, "retraction")
    retracted = {str(r.body.get("target")) for r in retractions}
    shown = [r for r in retractions if r.seq >= since] if since is not None \
        else retractions[-RECENT:]
    rest_rows = resting_on(store, shown, frozenset(retracted))
    audit = next(iter(ledger.entry_log.audits(last=1)), None)
    # the stored audit judged the ledger as it was: a finding about what has been retracted
    # since (a run to re-measure, a claim to retract) is not news about the ledger now
    audit_findings = [f for f in (stored_findings(audit[2]) if audit else [])
                      if not retracted.intersection(f.get("entries") or [])]
    errors = [f for f in audit_findings if f.get("severity") == "error"]
    remeasure = [f for f in audit_findings if f.get("check") in ("A08", "A12", "A20")]
    beyond_band = [f for f in audit_findings if f.get("check") == "A18"]
    checkpoints = ledger.entry_log.checkpoints()
    claims = _entries(store, "claim", RECENT)
    claim_rows = []
    for c in claims[-5:]:
        runs = c.body.get("runs", [])
        status = ("retracted" if c.digest in retracted else
                  "rests on retracted runs" if any(r in retracted for r in runs) else
                  "standing (run `logbook claim check` to recompute)")
        claim_rows.append(ClaimRow(seq=c.seq, digest=c.digest,
                                   statement=c.body["statement"], status=status))
    session = store.latest_session()
    session_runs = store.session_runs(session) if session else []
    plans = open_plans(store, retracted)
    overdue = past_due(plans)
    band_entries = _entries(store, "band")
    recent_runs = _entries(store, "run", RECENT) if band_entries else []
    bands = [BandRow(seq=b.seq, selector=b.body["selector"], k=b.body["k"],
                     mean=b.body["mean"], band=b.body["band"],
                     evaluator_config_hash=b.body.get("evaluator_config_hash"),
                     remeasure=evaluator_changed(ledger, b, recent_runs))
             for b in band_entries]
    notes = [NoteRow(seq=n.seq, text=n.body["text"]) for n in _entries(store, "note", 5)]
    held_out = [HeldOutRow(seq=e.seq, suite=str(e.body.get("name")),
                           version=str(e.body.get("version", "")), split=name, looks=looks)
                for e in _entries(store, "suite") if e.digest not in retracted
                for name, split in sorted((e.body.get("splits") or {}).items())
                if isinstance(split, dict) and (looks := allowed_looks(name, split))]
    last = checkpoints[-1] if checkpoints else None
    brief = Brief(
        ledger=LedgerHead(name=ledger.name, uuid=ledger.uuid, size=size, head=head),
        integrity=Integrity(
            verified=None if verified is None else Checked(**verified),
            latest_checkpoint=None if last is None else LatestCheckpoint(
                size=last[1], root=last[2], created=last[4])),
        open_plans=plans,
        overdue=overdue,
        remeasure=remeasure,
        beyond_band=beyond_band,
        retractions=[RetractionRow(seq=r.seq, digest=r.digest, target=r.body.get("target"),
                                   category=r.body.get("category"),
                                   reason=r.body.get("reason"),
                                   correction=r.body.get("correction")) for r in shown],
        resting_on_retracted=rest_rows,
        # what the last `logbook audit` stored: a derived row the check above cannot vouch
        # for (anyone with the file can write one), so it is labelled as such
        audit=None if audit is None else StoredAudit(size=audit[0], at=audit[1],
                                                     errors=errors, verified=False),
        bands=bands,
        claims=claim_rows,
        notes=notes,
        held_out=held_out,
        previous_session=None if not session else PreviousSession(
            session=session,
            runs=[SessionRun(seq=r.seq, digest=r.digest, plan=r.plan, arm=r.arm,
                             status=r.status) for r in session_runs]),
        spooled=list(spooled or []),
        next=[])
    brief.next = next_steps(brief)
    return brief


def past_due(plans: list[OpenPlan]) -> list[Overdue]:
    """Open plans (no verdict yet) whose `due` date has passed (today, UTC)."""
    import datetime

    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    return [Overdue(plan=p.plan, slug=p.slug, due=p.due, runs_done=p.runs_done,
                    runs_planned=p.runs_planned)
            for p in plans if isinstance(p.due, str) and p.due < today]


def next_steps(b: Brief) -> list[str]:
    """The three things to do next, most urgent first."""
    from logbook.analysis.cost import budget_text

    steps: list[str] = []
    checked = b.integrity.verified
    if checked is None:
        steps.append("run `logbook verify`: this brief did not check the ledger")
    if b.spooled:
        steps.append(f"{len(b.spooled)} run(s) wait in the spool, not in the ledger: "
                     "`logbook spool list` says why; `logbook append --spool` appends them")
    for r in b.resting_on_retracted[:1]:
        steps.append(f"{r.kind} @{r.seq} rests on a retracted entry: retract or re-make "
                     "it; do not repeat it")
    for due in b.overdue[:1]:
        steps.append(f"plan {due.slug} was due {due.due} and has no verdict "
                     f"({due.runs_done}/{due.runs_planned} runs): finish it, or amend or "
                     "retract it saying why")
    for f in b.remeasure[:1]:
        steps.append(f"re-measure: {f['message']}")
    for f in b.beyond_band[:1]:
        steps.append(f"runs disagree beyond their band: {f['message']}")
    for p in b.open_plans:
        for arm in p.blocked:
            last = [r for r in p.refused if r.arm == arm][-1]
            steps.append(f"plan {p.slug}: runs meant for arm {arm} are being refused (@{last.seq}"
                         f": {last.reason}): fix the plan (`logbook amend {p.slug} --set ...`) "
                         f"and count them with `logbook admit @{last.seq} --plan {p.slug} --arm "
                         f"{arm}`, or fix the runs; do not run arm {arm} again as it is")
        may_fit = [r for r in p.refused if r.arm not in p.blocked]
        if may_fit:
            steps.append(f"plan {p.slug}: {len(may_fit)} run(s) it refused may fit it as "
                         f"amended: count them with `logbook admit @{may_fit[0].seq} --plan "
                         f"{p.slug} --arm {may_fit[0].arm}` (each one; the plan checks it "
                         "again)")
        if p.next_arm not in p.blocked:
            steps.append(f"plan {p.slug}: run arm {p.next_arm} next "
                         f"({p.runs_done}/{p.runs_planned} runs done)")
    for p in b.open_plans:
        over = [x for x in p.budget_lines if x.over]
        if over:
            steps.insert(0, f"plan {p.slug} is over its budget: {budget_text(over[0].as_json())}"
                         ": amend its budget saying why (`logbook amend`), or stop running it")
    if b.audit and b.audit.errors:
        steps.append(f"{len(b.audit.errors)} audit error(s) stand: see `logbook audit`")
    if not b.open_plans:
        steps.append("no open plans: write one (`logbook plan FILE`) before the next run")
    if checked is not None and checked.signatures_checked > SLOW_SIGNATURES:
        steps.append(f"run `logbook checkpoint`: {checked.signatures_checked} signatures were "
                     "checked one by one before this brief; a checkpoint vouches for them next "
                     "time")
    return steps[:3]
