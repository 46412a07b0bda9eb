"""A read-only view of the whole ledger for analysis: plans (amended), runs, retractions, claims.

Analysis never takes a hand-picked subset of runs: every reader here returns everything the
ledger holds for the question, with failed, aborted and retracted runs marked, not dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import orjson

from logbook.ledger.entry import Entry
from logbook.ledger.service import Ledger
from logbook.model import apply_amendments

# Per-run identity is never a confound (DESIGN §4.4): seeds, times, session, host, process,
# command line, output paths.
IDENTITY_SUFFIXES = ("seed", "started", "finished", "session", "host", "hostname", "pid",
                     "output_path", "output_dir", "log_dir", "timestamp", "date", "run_id",
                     "eval_id", "task_id", "memory_bytes")
IDENTITY_PREFIXES = ("captured.command", "captured.env", "captured.os.release")


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Apparatus as dotted names -> scalar values (lists as canonical JSON text)."""
    out: dict[str, Any] = {}
    _put(out, prefix, obj)
    return out


def _put(out: dict[str, Any], name: str, value: Any) -> None:
    """`flatten` written into one dict (once per run in an audit: no merging of dicts)."""
    if isinstance(value, dict):
        for k, v in value.items():
            _put(out, f"{name}.{k}" if name else str(k), v)
    elif isinstance(value, list):
        out[name] = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    else:
        out[name] = value


@lru_cache(maxsize=65536)  # the same few field names, over and over (the audit asks per run)
def is_identity(name: str) -> bool:
    """A field that names this run rather than the system measured (seeds, times, paths,
    the command line): never a confound, never part of the apparatus key."""
    low = name.lower()
    last = low.rsplit(".", 1)[-1]
    if any(last.endswith(s) for s in IDENTITY_SUFFIXES) or "seed" in last:
        return True
    return any(low == p or low.startswith(p + ".") for p in IDENTITY_PREFIXES)


def suite_key(plan_body: dict[str, Any]) -> str:
    """A suite is its dataset hash, or its name and version when no hash is declared."""
    suite = plan_body.get("suite") or {}
    return str(suite.get("dataset_hash") or f"{suite.get('name')}@{suite.get('version', '')}")


@dataclass
class RunView:
    entry: Entry
    retracted_by: list[Entry] = field(default_factory=list)
    pass_k: int | None = None  # the plan's k when its metric is pass@k
    # read from the entry once (the audit asks for them millions of times on a large ledger)
    seq: int = field(init=False)
    digest: str = field(init=False)
    body: dict[str, Any] = field(init=False, repr=False)
    plan: str | None = field(init=False)
    arm: str | None = field(init=False)
    status: str = field(init=False)
    session: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.seq, self.digest, self.body = self.entry.seq, self.entry.digest, self.entry.body
        body = self.body
        self.plan, self.arm = body.get("plan"), body.get("arm")
        self.status, self.session = str(body.get("status")), body.get("session")

    @property
    def retracted(self) -> bool:
        return bool(self.retracted_by)

    @property
    def usable(self) -> bool:
        """Counts in the figures: completed and not retracted."""
        return self.status == "completed" and not self.retracted

    @cached_property
    def apparatus(self) -> dict[str, Any]:
        return flatten(self.body.get("apparatus") or {})

    @cached_property
    def compared(self) -> dict[str, str]:
        """The apparatus fields that describe the system measured (not this run's identity:
        `is_identity`), each with its value as `repr` text: what confounds and apparatus keys
        compare, worked out once per run."""
        return {k: repr(v) for k, v in self.apparatus.items() if not is_identity(k)}

    @cached_property
    def item_arrays(self) -> tuple[list[str], Any]:
        """(item ids, numpy array of each item's score; NaN when no sample was scored).

        An item sampled several times (Inspect epochs) scores the mean of its scored samples,
        or, in a pass@k plan (``pass_k`` set by the plan's view), the unbiased pass@k of its
        scored samples (NaN when fewer than k were scored).
        """
        import numpy as np

        oc = self.body.get("outcomes") or {}
        ids = list(oc.get("id") or [])
        raw = oc.get("score") or []
        values = np.array(raw, dtype=float)  # None (a missing score) becomes NaN
        if not oc.get("sample") and not self.pass_k:
            return ids, values  # ids are unique without a sample column (checked at append)
        from logbook.stats.items import sample_means, sample_passes

        order, means, counts = sample_means(ids, values)
        if self.pass_k:
            from logbook.stats import pass_at_k_items

            passed = sample_passes(ids, values, order)
            return order, pass_at_k_items(counts.astype(np.int64), passed.astype(np.int64),
                                          self.pass_k)
        return order, means

    @property
    def item_scores(self) -> dict[str, float | None]:
        """Each item's score: its mean over scored samples; None when no sample was scored."""
        ids, values = self.item_arrays
        return {i: (None if v != v else float(v)) for i, v in zip(ids, values.tolist(),
                                                                  strict=True)}

    @cached_property
    def clusters(self) -> dict[str, str]:
        oc = self.body.get("outcomes") or {}
        cl = oc.get("cluster")
        if not cl:
            return {}
        return {i: str(c) for i, c in zip(oc.get("id") or [], cl, strict=False) if c is not None}

    @cached_property
    def score(self) -> float | None:
        import numpy as np

        _, values = self.item_arrays
        present = values[~np.isnan(values)]
        from logbook.stats._exact import xmean

        return xmean(present) if present.size else None

    def missing(self, n_items: int | None) -> tuple[int, int]:
        """(missing items, denominator): items never written count as missing, not absent."""
        import numpy as np

        ids, values = self.item_arrays
        present = int(np.count_nonzero(~np.isnan(values)))
        total = max(n_items or 0, len(ids))
        return total - present, total


def clusters_of(runs: list[RunView]) -> dict[str, str]:
    """Item id -> cluster, over the runs (a later run's label wins, as each run's own does)."""
    clusters: dict[str, str] = {}
    for r in runs:
        clusters.update(r.clusters)
    return clusters


def item_mean_arrays(runs: list[RunView]) -> tuple[list[str], Any, dict[str, str]]:
    """(ids, each item's mean over the runs that scored it (NaN if none did), clusters)."""
    from logbook.stats.items import mean_over_runs

    ids, means = mean_over_runs([r.item_arrays[0] for r in runs],
                                [r.item_arrays[1] for r in runs])
    return ids, means, clusters_of(runs)


def paired_arrays(a_runs: list[RunView], b_runs: list[RunView]) -> tuple[list[str], Any, Any]:
    """Items of both sets on one id axis: each item's mean per set, NaN where a set lacks it."""
    from logbook.stats.items import align

    ids_a, ma, _ = item_mean_arrays(a_runs)
    ids_b, mb, _ = item_mean_arrays(b_runs)
    return align(ids_a, ma, ids_b, mb)


def item_stack(runs: list[RunView], ids: list[str]) -> Any:
    """Runs x items scores on the axis ``ids`` (NaN where a run has no score for an item)."""
    from logbook.stats.items import stack_on

    return stack_on([r.item_arrays[0] for r in runs], [r.item_arrays[1] for r in runs], ids)


@dataclass
class PlanView:
    entry: Entry
    amendments: list[Entry]
    runs: list[RunView]
    retracted_by: list[Entry] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return self.entry.digest

    @property
    def seq(self) -> int:
        return self.entry.seq

    @property
    def original(self) -> dict[str, Any]:
        return self.entry.body

    @cached_property
    def body(self) -> dict[str, Any]:
        return apply_amendments(self.original, [a.body.get("changes", {})
                                                for a in self.amendments])

    @property
    def slug(self) -> str:
        return str(self.original.get("slug"))

    def arms(self) -> list[dict[str, Any]]:
        return list(self.body.get("arms") or [])

    def arm_runs(self, arm: str) -> list[RunView]:
        return [r for r in self.runs if r.arm == arm]


class LedgerView:
    """Everything analysis reads, loaded once from the ledger's indexes and entries."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.size = ledger.size()
        self.retractions: dict[str, list[Entry]] = {}
        for r in ledger.log(kind="retraction"):
            self.retractions.setdefault(str(r.body.get("target")), []).append(r)

    def retracted_by(self, digest: str) -> list[Entry]:
        return self.retractions.get(digest, [])

    @cached_property
    def _amendments(self) -> dict[str, list[Entry]]:
        amendments: dict[str, list[Entry]] = {}
        for a in self.ledger.log(kind="amendment"):
            if not self.retracted_by(a.digest):  # a withdrawn amendment no longer applies
                amendments.setdefault(str(a.body.get("plan")), []).append(a)
        return amendments

    @cached_property
    def _plan_entries(self) -> list[Entry]:
        return self.ledger.log(kind="plan")

    @cached_property
    def plans(self) -> dict[str, PlanView]:
        """Every plan, by digest, in ledger order."""
        runs_by_plan: dict[str, list[RunView]] = {}
        for run in self.runs:
            if run.plan:
                runs_by_plan.setdefault(run.plan, []).append(run)
        out = {}
        for p in self._plan_entries:
            out[p.digest] = PlanView(p, self._amendments.get(p.digest, []),
                                     runs_by_plan.get(p.digest, []), self.retracted_by(p.digest))
        return out

    @cached_property
    def runs(self) -> list[RunView]:
        # a pass@k plan scores its runs' items by pass@k, so each run learns its plan's k
        # (after amendments) before anything reads its scores
        pass_k: dict[str, int] = {}
        for p in self._plan_entries:
            metric = p.body.get("metric") or {}
            changes = [a.body.get("changes", {}) for a in self._amendments.get(p.digest, [])]
            if changes:
                metric = apply_amendments(p.body, changes).get("metric") or {}
            if metric.get("kind") == "pass_at_k" and isinstance(metric.get("k"), int):
                pass_k[p.digest] = metric["k"]
        return [RunView(e, self.retracted_by(e.digest), pass_k.get(str(e.body.get("plan"))))
                for e in self.ledger.log(kind="run")]

    @cached_property
    def runs_by_digest(self) -> dict[str, RunView]:
        return {r.digest: r for r in self.runs}

    def plan(self, ref: str) -> PlanView:
        from logbook.errors import InputError

        digest = self.ledger.resolve(ref, "PLAN")
        if digest not in self.plans:
            raise InputError(f"PLAN {ref}: that entry is not a plan")
        return self.plans[digest]

    def apparatus_key(self, run: RunView) -> tuple[Any, ...]:
        """Identical apparatus: same suite, metric and every non-identity apparatus field
        (what bands are matched on; it includes the evaluator config hash they carry)."""
        plan = self.plans.get(run.plan) if run.plan else None
        metric = (run.body.get("outcomes") or {}).get("metric")
        fields = tuple(sorted(run.compared.items()))
        return (suite_key(plan.original) if plan else None, metric, fields)

    def entries_of(self, kind: str) -> list[Entry]:
        return self.ledger.log(kind=kind)
