"""What a run must be to enter a plan, and to enter the ledger at all (docs/recording.md).

A run bound to a plan is a run of the plan's suite (its dataset hash, and item ids within the
suite's ``n_items``), scores the plan's metric (its name or an alias) and contradicts none of the
plan's pinned apparatus. An ingested run whose source (harness output file, or the harness's
own run identity) is already in the ledger is refused: each run is recorded once. Each check
raises one InputError naming the field and both values; it runs inside the append transaction.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from logbook.errors import InputError
from logbook.format.apparatus import VARIANT
from logbook.format.apparatus import system_gaps as system_gaps  # re-exported
from logbook.ledger.suites import Suites
from logbook.storage import index as derive
from logbook.storage.base import EntryLog, StoredEntry


class NotOfPlan(InputError):
    """The run is not a run of the plan (suite, metric or pins): it belongs elsewhere."""


class AlreadyRecorded(InputError):
    """The run's source is already in the ledger."""


def dotted(apparatus: Any, key: str) -> tuple[bool, Any]:
    """(found, value) of a dotted apparatus key (``decoding.temperature``)."""
    node = apparatus
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _shown(value: Any) -> str:
    return orjson.dumps(value).decode() if not isinstance(value, str) else repr(value)


# -- metric ----------------------------------------------------------------------------
def metric_names(plan: dict[str, Any]) -> list[str]:
    metric = plan.get("metric") or {}
    return [str(metric.get("name")), *map(str, metric.get("aliases") or [])]


def check_metric(slug: str, plan: dict[str, Any], body: dict[str, Any]) -> None:
    outcomes = body.get("outcomes")
    if not isinstance(outcomes, dict):
        return
    names = metric_names(plan)
    if outcomes.get("metric") not in names:
        also = f" (or its aliases {', '.join(map(repr, names[1:]))})" if names[1:] else ""
        raise NotOfPlan(f"body.outcomes.metric: the run's metric is {outcomes.get('metric')!r},"
                        f" but plan {slug} measures {names[0]!r}{also}")


# -- pins ------------------------------------------------------------------------------
def pins(plan: dict[str, Any], arm: str | None) -> dict[str, tuple[Any, str]]:
    """dotted key -> (value, whose): the plan's `pinned`, then the arm's `apparatus`."""
    out = {k: (v, "") for k, v in (plan.get("pinned") or {}).items()}
    for a in plan.get("arms") or []:
        if a.get("name") == arm:
            out.update({k: (v, f" for arm {arm}") for k, v in (a.get("apparatus") or {}).items()})
    return out


_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")



def denotes(value: Any, want: Any) -> bool:
    """Whether a harness value means the pinned one: equal values, or a number or boolean and
    the text a harness writes it as (lm-eval's ``"1"`` for ``--batch_size 1``, ``"True"``
    for true, ``"0.50"`` for 0.5), element by element in lists and objects. Text that is no
    plain number or boolean word never denotes one (``auto`` is not 8, ``"1 "`` and ``"01"``
    are not 1)."""
    if isinstance(want, dict) or isinstance(value, dict):
        return isinstance(want, dict) and isinstance(value, dict) and want.keys() == \
            value.keys() and all(denotes(value[k], want[k]) for k in want)
    if isinstance(want, list) or isinstance(value, list):
        return isinstance(want, list) and isinstance(value, list) and len(want) == \
            len(value) and all(denotes(v, w) for v, w in zip(value, want, strict=True))
    if type(value) is type(want) or (isinstance(value, int | float) and isinstance(
            want, int | float) and not isinstance(value, bool) and not isinstance(want, bool)):
        return bool(value == want)
    text, other = (value, want) if isinstance(value, str) else (want, value)
    if not isinstance(text, str):
        return False
    if isinstance(other, bool):
        return text.lower() == ("true" if other else "false")
    if isinstance(other, int | float) and _NUMBER.fullmatch(text):
        return float(text) == other
    return False


def check_pins(plan: dict[str, Any], arm: str | None, apparatus: Any,
               field: str = "body.apparatus") -> None:
    """NotOfPlan when the apparatus gives a pinned key a value that does not denote the
    pinned one (absent is no contradiction: the run does not say)."""
    for key, (want, whose) in pins(plan, arm).items():
        found, value = dotted(apparatus, key)
        if found and not denotes(value, want):
            theirs, ours = _shown(value), _shown(want)
            if theirs == ours:  # never two values that look alike
                theirs += f" ({type(value).__name__})"
                ours += f" ({type(want).__name__})"
            raise NotOfPlan(f"{field}.{key}: the run's is {theirs}, but plan "
                            f"{plan.get('slug')} pins {ours}{whose}")


# -- suite -----------------------------------------------------------------------------
def plan_runs(store: EntryLog, plan: str) -> list[tuple[StoredEntry, str | None]]:
    """The plan's standing runs at the door, in ledger order: those appended to it and those
    standing admissions count in it (neither the run nor the admission retracted), each with
    the arm its admission counts it in (None for the plan's own runs: the run's own arm)."""
    runs = store.entries_where("run", plan)
    admissions = store.entries_where("admission", plan)
    withdrawn = store.retractions_of([e.digest for e in [*runs, *admissions]])
    found: list[tuple[StoredEntry, str | None]] = [(e, None) for e in runs]
    admitted = [orjson.loads(a.entry)["body"] for a in admissions if a.digest not in withdrawn]
    if admitted:
        more = [(e, str(b.get("arm"))) for b in admitted
                if (e := store.entry_by_digest(str(b["run"]))) is not None]
        gone = store.retractions_of([e.digest for e, _ in more])
        found = sorted([*found, *((e, a) for e, a in more if e.digest not in gone)],
                       key=lambda pair: pair[0].seq)
    return [(r, a) for r, a in found if r.digest not in withdrawn]


def completed_in_arm(store: EntryLog, plan: str, arm: str) -> int:
    """The completed runs that stand in a plan's arm at the door (``plan_runs``), each run
    parsed once."""
    count = 0
    for stored, admitted_in in plan_runs(store, plan):
        body = orjson.loads(stored.entry).get("body") or {}
        counted = admitted_in if admitted_in is not None else body.get("arm")
        count += counted == arm and body.get("status") == "completed"
    return count


def check_suite(suites: Suites, plan_digest: str, plan: dict[str, Any],
                body: dict[str, Any]) -> None:
    """The run is of the plan's suite: its dataset hash is the one the plan declares, or else
    the one its first completed run fixed, and its item ids keep the plan's runs within
    ``n_items``. Reads the plan's suite state (logbook.ledger.suites), not its runs."""
    slug, suite = plan.get("slug"), plan.get("suite") or {}
    mine = (body.get("apparatus") or {}).get("dataset_hash")
    completed = body.get("status") == "completed"
    declared = suite.get("dataset_hash")
    field = "body.apparatus.dataset_hash"
    state = suites.view(plan_digest)
    if declared:
        if (mine or completed) and mine != declared:
            raise NotOfPlan(f"{field}: the run gives {_shown(mine) if mine else 'none'}, but "
                            f"plan {slug}'s suite declares {declared!r}")
    elif state.first_seq is not None:
        fixed = state.first_hash
        if fixed and (mine or completed) and mine != fixed:
            raise NotOfPlan(f"{field}: the run gives {_shown(mine) if mine else 'none'}, but "
                            f"plan {slug}'s suite is {fixed!r}, fixed by its first "
                            f"completed run @{state.first_seq}")
    ids = (body.get("outcomes") or {}).get("id") or []
    if not ids:
        return
    n_items = int(suite.get("n_items") or 0)
    unique = list(dict.fromkeys(i for i in ids if isinstance(i, str)))
    n_known = int(state.n_known)
    if n_known + len(unique) <= n_items:
        return
    held = state.known(unique)
    new = [i for i in unique if i not in held]
    if not new or n_known + len(new) <= n_items:
        return  # (no new id: the set does not grow, even past an n_items amended down)
    if n_known >= n_items:
        raise NotOfPlan(f"body.outcomes.id: item {new[0]!r} is not one of the {n_items} items "
                        f"of plan {slug}'s suite {suite.get('name')!r}, which its runs have "
                        f"fixed ({len(new)} of the run's ids are new)")
    raise NotOfPlan(f"body.outcomes.id: the plan's runs would hold {n_known + len(new)} "
                    f"distinct item ids, but plan {slug}'s suite {suite.get('name')!r} has "
                    f"n_items {n_items}")


def check_variant(plan: dict[str, Any], body: dict[str, Any]) -> None:
    """A plan that declares prompt `variants` takes only runs naming one of them in their
    apparatus (`prompt_hash`); a run that did not complete may leave it unsaid."""
    variants = plan.get("variants") or []
    if not variants:
        return
    found, mine = dotted(body.get("apparatus"), VARIANT)
    if ((found and mine is not None) or body.get("status") == "completed") \
            and mine not in variants:
        raise NotOfPlan(f"body.apparatus.{VARIANT}: the run gives "
                            f"{_shown(mine) if mine is not None else 'none'}, but plan "
                            f"{plan.get('slug')} declares the variants "
                            f"{', '.join(map(repr, variants))}")


def check_run(suites: Suites, plan_digest: str, plan: dict[str, Any],
              body: dict[str, Any]) -> None:
    """Everything a run must be to count in the plan."""
    slug = str(plan.get("slug"))
    check_metric(slug, plan, body)
    check_suite(suites, plan_digest, plan, body)
    check_pins(plan, body.get("arm"), body.get("apparatus"))
    check_variant(plan, body)


# -- source ----------------------------------------------------------------------------
def same_source(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.get("harness") != b.get("harness") or a.get("part") != b.get("part"):
        return False
    ids = a.get("ids")
    return a.get("sha256") == b.get("sha256") or (bool(ids) and ids == b.get("ids"))


def check_source(store: EntryLog, body: dict[str, Any]) -> None:
    """Refuse a run whose source is already recorded, naming the earlier entry."""
    source = body.get("source")
    keys = derive.source_keys({"kind": "run", "body": body})
    for seq, digest, raw in store.runs_with_source(keys):
        earlier = orjson.loads(raw)["body"].get("source")
        if isinstance(earlier, dict) and isinstance(source, dict) and same_source(source,
                                                                                  earlier):
            part = f" ({source['part']})" if source.get("part") else ""
            raise AlreadyRecorded(f"body.source: {source.get('file')}{part} is already in the "
                                  f"ledger as run @{seq} ({digest[:12]}); each run is recorded "
                                  "once")


# -- the system that made the score: logbook.format.apparatus (re-exported here) ----------
