"""An adversary against the audit, and the honest twins it must not be confused with (issue 33,
item 4; docs/audit.md, "Calibration against an adversary").

`violations` builds each rule's textbook violation; this module plays strategies that adapt to
the rules instead, on data unlike the project's own simulator: items of persistent difficulty
(a mixture: most items ordinary, some very hard, some trivial), a shared shift per run on the
logit scale (decoding or batch noise), missing rates that vary by run, and apparatus that a
real workflow changes (a harness fix, a judge). Every ledger is written through the public
Python API (`scenarios.Book`) and audited whole.

A strategy is flagged when the audit reports any warning or error on its ledger; an honest twin
raises a false alarm on each rule that warns or errs on it. benchmarks/audit_calibration.py
prints both per strategy and per rule; tests/analysis/test_adversary.py holds the bounds
(flagged >= 95% of each strategy's ledgers, false alarms <= 1% of honest twins per rule).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from logbook.calibration.book import Book, suite_hash


@dataclass(frozen=True)
class World:
    """How one ledger's data are generated (see `worlds`)."""

    n: int = 300           # items in the suite
    k: int = 4             # runs per arm
    p: float = 0.7         # the control's accuracy on an ordinary item, before run shifts
    effect: float = 0.0    # treatment minus control on the logit scale
    run_sd: float = 0.1    # sd of each run's shared shift (logit scale)
    spread: float = 1.0    # sd of the ordinary items' difficulty (logit scale)
    missing: float = 0.005  # the mean missing rate; each run draws its own around it
    seed: int = 0


def worlds(count: int, seed: int) -> Iterator[World]:
    rng = random.Random(seed)
    for i in range(count):
        yield World(n=round(10 ** rng.uniform(2.2, 3.2)), k=rng.randint(3, 8),
                    p=rng.uniform(0.4, 0.9), effect=rng.choice([0.0, 0.0, 0.1, 0.25]),
                    run_sd=rng.choice([0.0, 0.05, 0.15, 0.3]), spread=rng.uniform(0.5, 1.5),
                    missing=rng.choice([0.0, 0.003, 0.008]), seed=seed * 1_000_003 + i)


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


class Sim:
    """One ledger's world: its items' difficulties, and runs drawn from them."""

    def __init__(self, book: Book, world: World) -> None:
        self.book, self.w = book, world
        self.rng = random.Random(world.seed)
        rng = self.rng
        self.ids = [f"q{i}" for i in range(world.n)]
        self.difficulty = [rng.gauss(0, world.spread) if rng.random() < 0.85
                           else rng.choice([-4.0, 4.0]) for _ in self.ids]
        self.logit = {"f16": _logit(world.p), "q8": _logit(world.p) + world.effect}
        self.suite = "suite"
        self.build = "b1234"
        self.judge: dict[str, Any] | None = None
        self.temperature = 0.0
        self.seeds: dict[str, int] = {}
        self.greedy_base: dict[str, list[float]] = {}

    # -- data --------------------------------------------------------------------------
    def outcomes(self, arm: str, missing: float | None = None, ids: list[str] | None = None,
                 null: set[str] | None = None, greedy: bool = False) -> dict[str, Any]:
        rng, w = self.rng, self.w
        shift = rng.gauss(0, w.run_sd)
        rate = missing if missing is not None else min(0.02, rng.uniform(0, 2 * w.missing))
        chosen = ids if ids is not None else self.ids
        score: list[float | None] = []
        error: list[str | None] = []
        base = self.greedy_base.get(arm) if greedy else None
        for i in chosen:
            d = self.difficulty[int(i[1:])]
            if base is not None:  # a greedy rerun: the same answers, a few flipped
                s: float | None = base[int(i[1:])]
                if rng.random() < 0.01:
                    s = 1.0 - float(s or 0.0)
            else:
                s = float(rng.random() < 1 / (1 + math.exp(-(self.logit[arm] + shift - d))))
            if (null and i in null) or rng.random() < rate:
                score.append(None)
                error.append("request timed out")
            else:
                score.append(s)
                error.append(None)
        cap = int(0.02 * len(chosen)) if null is None else len(chosen)
        while sum(e is not None for e in error) > cap:  # within the plan's limit
            j = error.index("request timed out")
            error[j], score[j] = None, 0.0
        return {"metric": "acc", "id": list(chosen), "score": score, "error": error}

    def apparatus(self, arm: str, suite: str | None = None) -> dict[str, Any]:
        app = self.book.apparatus(arm, suite or self.suite, self.temperature,
                                  engine_build=self.build)
        if arm in self.seeds:
            app["decoding"]["seed"] = self.seeds[arm]
        if self.judge is not None:
            app["evaluator"] = dict(self.judge)
        return app

    def run(self, plan: str | None, arm: str, status: str = "completed",
            suite: str | None = None, **data: Any) -> str:
        body: dict[str, Any] = {"plan": plan, "arm": arm if plan else None, "status": status,
                                "session": self.book.session,
                                "apparatus": self.apparatus(arm, suite)}
        if status == "completed":
            body["outcomes"] = self.outcomes(arm, **data)
        else:
            body["reason"] = "engine crashed (out of memory)"
        return self.book.append("run", body)

    def score(self, digest: str) -> float:
        oc = self.book.ledger.get(digest).body["outcomes"]
        xs = [s for s in oc["score"] if s is not None]
        return sum(xs) / len(xs)

    # -- the plan --------------------------------------------------------------------------
    def plan(self, k: int | None = None, **extra: Any) -> str:
        return self.book.plan("kv", k=k or self.w.k, n=self.w.n, **extra)

    def rounds(self, plan: str, start: int, stop: int, runs: dict[str, list[str]],
               each: Callable[[str, str], None] | None = None, **data: Any) -> None:
        """Rounds ``start`` to ``stop`` of both arms, interleaved in a random order."""
        for _ in range(start, stop):
            for arm in (["f16", "q8"] if self.rng.random() < 0.5 else ["q8", "f16"]):
                runs[arm].append(self.run(plan, arm, **data))
                if each is not None:
                    each(arm, runs[arm][-1])

    def claims(self, plan: str) -> None:
        self.book.claim(plan)
        self.book.claim(plan, arm="q8")


Strategy = Callable[[Sim], None]


def _runs() -> dict[str, list[str]]:
    return {"f16": [], "q8": []}


# -- honest twins ----------------------------------------------------------------------------
def honest_plain(sim: Sim) -> None:
    """Plan, every run, both claims: items of persistent difficulty, run noise, varied
    missingness."""
    plan, runs = sim.plan(), _runs()
    sim.rounds(plan, 0, sim.w.k, runs)
    sim.claims(plan)


def honest_fix(sim: Sim) -> None:
    """A harness defect found after the first round: both its runs retracted, the harness
    fixed (a new build), every run made again with the fix."""
    plan, runs = sim.plan(), _runs()
    sim.rounds(plan, 0, 1, runs)
    for arm in ("f16", "q8"):
        sim.book.retract(runs[arm].pop(), "the scorer dropped answers after a newline; "
                         "fixed in b1235", "harness_defect")
    sim.build = "b1235"
    sim.rounds(plan, 0, sim.w.k, runs)
    sim.claims(plan)


def honest_missing_by_run(sim: Sim) -> None:
    """Missing rates that differ from run to run (a flaky endpoint on some days), every run
    within the plan's limit."""
    plan, runs = sim.plan(), _runs()
    for _ in range(sim.w.k):
        for arm in ("f16", "q8"):
            runs[arm].append(sim.run(plan, arm, missing=sim.rng.choice([0.0, 0.002, 0.019])))
    sim.claims(plan)


def honest_greedy(sim: Sim) -> None:
    """Greedy decoding, one seed: reruns give nearly the same answers (a few flip, as
    inference on a GPU is not bit-for-bit deterministic)."""
    sim.temperature = 0.0
    sim.seeds = {"f16": 7, "q8": 7}
    for arm in ("f16", "q8"):
        first = sim.outcomes(arm, missing=0.0)
        sim.greedy_base[arm] = [float(s or 0.0) for s in first["score"]]
    plan, runs = sim.plan(), _runs()
    sim.rounds(plan, 0, sim.w.k, runs, greedy=True)
    sim.claims(plan)


def honest_smoke(sim: Sim) -> None:
    """Before the plan, a smoke test of the treatment's apparatus on another suite."""
    sim.book.append("run", {"plan": None, "arm": None, "status": "completed",
                            "session": sim.book.session,
                            "apparatus": sim.apparatus("q8", "smoke"),
                            "outcomes": {"metric": "acc", "id": [f"smoke-{i}" for i in
                                                                 range(40)],
                                         "score": [1.0] * 30 + [0.0] * 10}})
    honest_plain(sim)


def honest_failure_said(sim: Sim) -> None:
    """A run crashed; the plan's runs were all made; the claims say a run failed."""
    plan, runs = sim.plan(), _runs()
    sim.run(plan, "q8", status="failed")
    sim.rounds(plan, 0, sim.w.k, runs)
    for arm in (None, "q8"):
        body = _claim(sim, plan, arm)
        body["statement"] += "; 1 q8 run failed (the engine ran out of memory) and was re-run"
        sim.book.append("claim", body)


def honest_judged(sim: Sim) -> None:
    """A judge scores every run, the same judge throughout."""
    sim.judge = {"model": "judge-70b", "prompt_hash": "sha256:" + "1" * 64}
    honest_plain(sim)


HONEST: dict[str, Strategy] = {
    "plain": honest_plain, "fix-and-rerun": honest_fix, "missing-by-run": honest_missing_by_run,
    "greedy-reruns": honest_greedy, "smoke-test": honest_smoke,
    "failure-said": honest_failure_said, "one-judge": honest_judged,
}


def _claim(sim: Sim, plan: str, arm: str | None) -> dict[str, Any]:
    from logbook.analysis.claims import claim_body
    from logbook.analysis.view import LedgerView
    from logbook.calibration.book import honest_statement

    body = claim_body(LedgerView(sim.book.ledger), plan, "-", arm=arm)
    body["statement"] = honest_statement(body, arm)
    return body


# -- the adversary ---------------------------------------------------------------------------
def _worst(sim: Sim, digests: list[str], best: bool = False) -> str:
    return (max if best else min)(digests, key=sim.score)


def retract_worst(sim: Sim) -> None:
    """Every run made; the treatment's worst run retracted as a 'harness defect'."""
    plan, runs = sim.plan(), _runs()
    sim.rounds(plan, 0, sim.w.k, runs)
    sim.book.retract(_worst(sim, runs["q8"]))
    sim.claims(plan)


def retract_control_best(sim: Sim) -> None:
    plan, runs = sim.plan(), _runs()
    sim.rounds(plan, 0, sim.w.k, runs)
    sim.book.retract(_worst(sim, runs["f16"], best=True))
    sim.claims(plan)


def retract_as_they_land(sim: Sim) -> None:
    """Each treatment run that lands below the control's best run so far is retracted at once
    and run again (three tries, the third kept); when none was, the worst is, at the end, and
    run again."""
    plan, runs = sim.plan(), _runs()
    withdrawn = 0
    for _ in range(sim.w.k):
        runs["f16"].append(sim.run(plan, "f16"))
        bar = max(map(sim.score, runs["f16"]))
        for attempt in range(3):
            runs["q8"].append(sim.run(plan, "q8"))
            if sim.score(runs["q8"][-1]) >= bar or attempt == 2:  # the third one stays
                break
            sim.book.retract(runs["q8"].pop())
            withdrawn += 1
    if not withdrawn:
        worst = _worst(sim, runs["q8"])
        runs["q8"].remove(worst)
        sim.book.retract(worst)
        runs["q8"].append(sim.run(plan, "q8"))
    sim.claims(plan)


def retract_midway(sim: Sim) -> None:
    """Half the plan run, its treatment's worst run retracted, the plan left there."""
    plan, runs = sim.plan(), _runs()
    sim.rounds(plan, 0, max(2, sim.w.k // 2), runs)
    sim.book.retract(_worst(sim, runs["q8"]))


def stop_early(sim: Sim) -> None:
    """A plan of 8 runs an arm, looked at after each round from the second: claimed at the
    first look whose effect interval excludes zero in the treatment's favour (or, failing
    that, at a random look: the plan is never finished)."""
    plan, runs = sim.plan(k=8), _runs()
    stop = sim.rng.randint(2, 6)
    for r in range(7):
        sim.rounds(plan, r, r + 1, runs)
        if r + 1 >= 2:
            body = _claim(sim, plan, None)
            if body["interval"][0] > 0 or r + 1 == stop:
                break
    sim.claims(plan)


def drop_hard_items(sim: Sim) -> None:
    """The treatment's runs leave out the suite's hardest items (1-2% of them)."""
    hard = _hardest(sim)
    keep = [i for i in sim.ids if i not in hard]
    plan, runs = sim.plan(), _runs()
    for _ in range(sim.w.k):
        runs["f16"].append(sim.run(plan, "f16"))
        runs["q8"].append(sim.run(plan, "q8", ids=keep))
    sim.claims(plan)


def null_hard_items(sim: Sim) -> None:
    """The treatment's runs report the suite's hardest items as failed requests (1-2%,
    within the plan's missing limit)."""
    hard = _hardest(sim)
    plan, runs = sim.plan(), _runs()
    for _ in range(sim.w.k):
        runs["f16"].append(sim.run(plan, "f16", missing=0.0))
        runs["q8"].append(sim.run(plan, "q8", missing=0.0, null=hard))
    sim.claims(plan)


def _hardest(sim: Sim) -> set[str]:
    share = sim.rng.uniform(0.01, 0.018)
    order = sorted(sim.ids, key=lambda i: -sim.difficulty[int(i[1:])])
    return set(order[:max(1, round(share * len(order)))])


def peek_partial(sim: Sim) -> None:
    """Before the plan, the treatment's apparatus run on part of the suite (a limited run,
    so its dataset identity differs)."""
    part = sim.rng.sample(sim.ids, max(5, len(sim.ids) * sim.rng.randint(2, 6) // 10))
    sim.book.append("run", {"plan": None, "arm": None, "status": "completed",
                            "session": sim.book.session,
                            "apparatus": {**sim.apparatus("q8"),
                                          "dataset_hash": suite_hash(f"part-{len(part)}")},
                            "outcomes": sim.outcomes("q8", ids=sorted(part))})
    honest_plain(sim)


DENIALS = ("no run failed", "all runs completed cleanly", "every run finished",
           "without a single failure", "no runs were lost", "zero failures")


def deny_failure(sim: Sim) -> None:
    """A treatment run crashed; the claim denies it in words the audit did not look for."""
    plan, runs = sim.plan(), _runs()
    sim.run(plan, "q8", status="failed")
    sim.rounds(plan, 0, sim.w.k, runs)
    body = _claim(sim, plan, None)
    body["statement"] += "; " + sim.rng.choice(DENIALS)
    sim.book.append("claim", body)


def quote_best_bare(sim: Sim) -> None:
    """The treatment's best run quoted as its score, without a unit or on the 0-1 scale."""
    plan, runs = sim.plan(), _runs()
    sim.rounds(plan, 0, sim.w.k, runs)
    best = sim.score(_worst(sim, runs["q8"], best=True))
    body = _claim(sim, plan, "q8")
    body["statement"] = sim.rng.choice([f"q8 scores {best * 100:.1f}",
                                        f"q8 reaches {best:.3f} accuracy",
                                        f"q8: {best * 100:.1f} on the suite"])
    sim.book.append("claim", body)


def rerun_until(sim: Sim) -> None:
    """The plan run, then all its runs retracted and the plan run again, until the effect
    interval excludes zero in the treatment's favour (at least once, at most three times)."""
    plan, runs = sim.plan(), _runs()
    sim.rounds(plan, 0, sim.w.k, runs)
    for attempt in range(3):
        if attempt and _claim(sim, plan, None)["interval"][0] > 0:
            break
        for arm in ("f16", "q8"):
            for d in runs[arm]:
                sim.book.retract(d, "unstable numbers; re-running", "other")
        runs = _runs()
        sim.rounds(plan, 0, sim.w.k, runs)
    sim.claims(plan)


def change_judge(sim: Sim) -> None:
    """A judge scores the runs; halfway through the plan, it is swapped for another."""
    sim.judge = {"model": "judge-70b", "prompt_hash": "sha256:" + "1" * 64}
    plan, runs = sim.plan(), _runs()
    half = max(1, sim.w.k // 2)
    sim.rounds(plan, 0, half, runs)
    sim.judge = sim.rng.choice([{"model": "judge-405b", "prompt_hash": "sha256:" + "1" * 64},
                                {"model": "judge-70b", "prompt_hash": "sha256:" + "2" * 64}])
    sim.rounds(plan, half, sim.w.k, runs)
    sim.claims(plan)


ADVERSARY: dict[str, Strategy] = {
    "retract-worst": retract_worst, "retract-control-best": retract_control_best,
    "retract-as-they-land": retract_as_they_land, "retract-midway": retract_midway,
    "stop-early": stop_early, "drop-hard-items": drop_hard_items,
    "null-hard-items": null_hard_items, "peek-partial": peek_partial,
    "deny-failure": deny_failure, "quote-best-bare": quote_best_bare,
    "rerun-until": rerun_until, "change-judge": change_judge,
}
