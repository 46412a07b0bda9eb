"""Scratch ledgers for calibrating the audit: honest work of many shapes, written through the
public Python API (and, when a command runner is given, through `logbook run` and `logbook
append --from`), the way a careful user writes it.

`honest(book, shape)` is a plan written first and anchored by a checkpoint, its arms interleaved
in one session, every planned run done and claimed with `logbook claim`'s figures; around it, an
exploratory series of one unchanged apparatus. `audit_calibration` (benchmarks/) and
`logbook audit --selftest` build on it; `violations` makes each rule's violation of it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from logbook.calibration import loadlog
from logbook.calibration.book import Book, suite_hash


@dataclass(frozen=True)
class Shape:
    """One honest ledger's shape (see `shapes`)."""

    n: int = 200                  # items in the suite
    k: int = 3                    # runs per arm
    p: float = 0.7                # the control's true accuracy
    effect: float = 0.0           # treatment minus control, true
    missing: float = 0.0          # each item fails with this probability (within the limit)
    temperature: float = 0.0
    explore: int = 0              # exploratory runs of one unchanged apparatus (another suite)
    band: bool = False            # a band measured on them (when there are 5 or more)
    calibration: bool = False     # a one-arm calibration plan and band on the q8 pipeline
    recorder: str = "api"         # api | run | from | mixed (the last three need a runner)
    due: str | None = None
    retract: bool = False         # a run that broke mid-way, kept as failed, then withdrawn
    seed: int = 0
    reproduce: bool = False       # another lab, under its own key, reproduces a q8 run
    stamp: bool = False           # every checkpoint stamped by a time-stamping authority
    checks: bool = False          # the suite checked for contamination, the scorer by hand
    holdout: bool = False         # the suite named with dev and test splits; the plan on test
    applied: str = ""             # the plan's runs name their load log ("honest"; a violation
    #                               names what the engine applied otherwise: calibration.loadlog)


def shapes(count: int, seed: int, cli: bool = True) -> Iterator[Shape]:
    """Honest shapes: 2-10 runs per arm, 100-10,000 items (log-uniform), accuracies
    0.1-0.95, true effects 0-5 points, missing within the plan's 2% limit."""
    rng = random.Random(seed)
    for i in range(count):
        p = rng.uniform(0.1, 0.95)
        yield Shape(
            n=round(10 ** rng.uniform(2, 4)), k=rng.randint(2, 10), p=p,
            effect=min(rng.uniform(0, 0.05), 0.99 - p), missing=rng.choice([0.0, 0.0, 0.005,
                                                                            0.01]),
            temperature=rng.choice([0.0, 0.0, 0.7]), explore=rng.choice([0, 0, 3, 5, 8]),
            band=rng.random() < 0.5, calibration=rng.random() < 0.3,
            recorder=(rng.choice(["api", "api", "from", "mixed"]) if cli else "api"),
            due=rng.choice([None, "2999-12-31"]), retract=rng.random() < 0.2,
            seed=seed * 100_003 + i,
            # drawn from a stream of its own: the shapes' own draws stay as they were
            reproduce=random.Random(seed * 100_003 + i + 0x5EED).random() < 0.3,
            stamp=random.Random(seed * 100_003 + i + 0x57A3).random() < 0.3,
            checks=random.Random(seed * 100_003 + i + 0xC4EC).random() < 0.35,
            holdout=random.Random(seed * 100_003 + i + 0x401D).random() < 0.35,
            applied="honest" if random.Random(seed * 100_003 + i + 0xA991).random() < 0.35
            else "")


def how_of(shape: Shape, rng: random.Random) -> str:
    if shape.recorder == "mixed":  # `logbook run` (which probes the machine) now and then
        return rng.choice(["api", "api", "from", "run"])
    return shape.recorder


# an honest scorer: a reader disagrees with it on about 1 item in 100 (the reader's slips), so
# the Wilson lower bound of the disagreement stays below the 5% tolerance (A34) almost surely
HONEST_DISAGREEMENT = 0.01


def checked(book: Book, shape: Shape, runs: dict[str, list[str]],
            wrong: float = HONEST_DISAGREEMENT) -> None:
    """The checks a careful evaluator makes before claiming (its own random stream: the
    shape's draws stay as they were): the plan's suite checked for contamination, clean, for
    the model its runs name (by name or dataset hash), and one counted run spot-checked by
    hand on 20-40 items, the scorer wrong on a share ``wrong`` of them."""
    rng = random.Random(shape.seed + 0xC4EC)
    suite = rng.choice(["suite", suite_hash("suite")])
    book.contamination("m-7b", suite, "clean", round(rng.uniform(0.0, 0.01), 4))
    run = rng.choice(runs["f16"] + runs["q8"])
    book.spot_check(run, rng.randint(20, 40), rng.randrange(2**31), wrong, rng)


def honest(book: Book, shape: Shape, **plan_extra: Any) -> dict[str, Any]:
    """An honest ledger of `shape`; returns what violations need (plan, runs by arm, rng)."""
    rng = random.Random(shape.seed)
    book.stamping = shape.stamp
    if shape.holdout:  # the suite named with its splits (dev and a held-out test)
        book.suite(shape.n, {"dev": "dev-q", "test": "q"})
    if shape.explore:  # a nightly series of one unchanged apparatus, on another suite
        p = rng.uniform(0.2, 0.9)
        for _ in range(shape.explore):
            book.run(None, "nightly", p, shape.n, rng, suite="nightly",
                     temperature=shape.temperature)
        if shape.band and shape.explore >= 5:
            book.band("kv_cache_precision=nightly")
    if shape.calibration:  # the q8 pipeline's band, measured by a calibration plan
        cal = book.plan("cal", k=8, n=shape.n, arms=[{"name": "q8", "role": "control"}],
                        split="dev" if shape.holdout else None)
        for _ in range(8):  # with a held-out test split, on dev
            book.run(cal, "q8", shape.p + shape.effect, shape.n, rng, "suite",
                     temperature=shape.temperature, items="dev-q" if shape.holdout else "q")
        book.band("cal:q8")
    if shape.holdout:  # tuning on dev, after any calibration (its own stream)
        tune = random.Random(shape.seed + 0x401D)
        for _ in range(tune.randint(1, 3)):
            book.run(None, "q8", shape.p, shape.n, tune, items="dev-q",
                     app={"suite": "suite", "split": "dev"}, temperature=shape.temperature)
    split = plan_extra.pop("split", "test" if shape.holdout else None)
    plan = book.plan("kv", k=shape.k, n=shape.n, due=shape.due, split=split, **plan_extra)
    runs: dict[str, list[str]] = {"f16": [], "q8": []}
    truth = {"f16": shape.p, "q8": shape.p + shape.effect}
    for i in range(shape.k):
        for arm in (["f16", "q8"] if rng.random() < 0.5 else ["q8", "f16"]):
            if shape.retract and i == 0 and arm == "q8":  # it broke mid-run: kept as failed,
                book.retract(book.run(plan, arm, truth[arm], shape.n, rng,  # then withdrawn
                                      status="failed"), "the engine lost its GPU mid-run")
            wrong = shape.applied if shape.applied != "honest" and i == 0 and arm == "q8" \
                else None
            app = loadlog.loaded(arm, wrong) if shape.applied else None
            runs[arm].append(book.run(plan, arm, truth[arm], shape.n, rng, how=how_of(shape, rng),
                                      temperature=shape.temperature, missing=shape.missing,
                                      app=app))
    if shape.checks:  # before claiming: the suite checked, and the scorer by hand
        checked(book, shape, runs)
    book.claim(plan)
    book.claim(plan, arm="q8")
    if shape.stamp:  # the finished work stamped too
        book.checkpoint()
    if shape.reproduce:  # after the claims, another lab repeats a q8 run (its own stream)
        book.reproduce(runs["q8"][0], truth["q8"], shape.n, random.Random(shape.seed + 0x5EED),
                       temperature=shape.temperature, missing=shape.missing)
    return {"plan": plan, "runs": runs, "rng": rng, "truth": truth}


def with_shape(shape: Shape, **changes: Any) -> Shape:
    return replace(shape, **changes)
