"""The violations of the audit's rules on the practices the book asks for (issue 36): hand
spot-checks and contamination checks (A33-A36), held-out splits (A37), requested versus
applied settings (A38) and the search budget (A39); the rest are in
logbook.calibration.violations, which lists them all (`VIOLATIONS`)."""

from __future__ import annotations

import random

from logbook.calibration.book import Book, suite_hash
from logbook.calibration.scenarios import Shape, checked, honest, with_shape


def a33(book: Book, s: Shape) -> None:
    """Spot-checks of a pilot plan's scorer, none of the claimed plan's: the claim's scorer
    was never read by hand."""
    honest(book, with_shape(s, checks=False))
    rng = random.Random(s.seed + 33)
    pilot = book.plan("pilot", k=2, n=s.n, suite="pilot",
                      arms=[{"name": "q8", "role": "control"}])
    runs = [book.run(pilot, "q8", s.p, s.n, rng, suite="pilot") for _ in range(2)]
    book.spot_check(runs[0], 30, rng.randrange(2**31), 0.01, rng)


def a34(book: Book, s: Shape) -> None:
    """A scorer that is wrong on about a third of the items a reader judges (a regex that
    misses answers phrased another way), spot-checked and claimed on all the same."""
    h = honest(book, with_shape(s, checks=False))
    checked(book, s, h["runs"], wrong=0.35)


def a35(book: Book, s: Shape) -> None:
    """Contamination checked, but for the exploratory series' suite, not the claim's."""
    honest(book, with_shape(s, checks=False))
    book.contamination("m-7b", "nightly", "clean", 0.002)


def a36(book: Book, s: Shape) -> None:
    """The claim's suite found contaminated for its model, and the claim left standing."""
    honest(book, with_shape(s, checks=True))
    rate = round(random.Random(s.seed + 36).uniform(0.08, 0.4), 3)
    book.contamination("m-7b", random.Random(s.seed).choice(["suite", suite_hash("suite")]),
                       "contaminated", rate)


def a37(book: Book, s: Shape) -> None:
    """A second look at the held-out test split, in one of the ways it is taken: a peek at
    test before writing the plan, a test run retracted and made again, a second plan on test
    after the first one's claims, or test items run under the dev split's name (the suite
    entry lists the test split's ids, not dev's, so the door cannot tell)."""
    rng = random.Random(s.seed + 37)
    way = rng.choice(["peek", "retract", "second-plan", "renamed"])
    if way == "renamed":
        book.suite(s.n, {"dev": "dev-q", "test": "q"}, listed=("test",))
        book.run(None, "q8", s.p, s.n, rng, app={"suite": "suite", "split": "dev"})
        honest(book, with_shape(s, holdout=False, calibration=False), split="test")
        return
    if way in ("peek", "retract"):
        book.suite(s.n, {"dev": "dev-q", "test": "q"})
        peek = book.run(None, "q8", s.p, s.n, rng, app={"suite": "suite", "split": "test"})
        if way == "retract":
            book.retract(peek, "run on the wrong split by mistake")
        honest(book, with_shape(s, holdout=False, calibration=False), split="test")
        return
    h = honest(book, with_shape(s, holdout=True))
    again = book.plan("kv-2", k=s.k, n=s.n, split="test")
    for _ in range(s.k):
        for arm in ("f16", "q8"):
            book.run(again, arm, h["truth"][arm], s.n, h["rng"])


def a39(book: Book, s: Shape) -> None:
    """A search on the suite before the plan: one to five other KV-cache settings tried by
    exploratory runs, then the plan and its claims, whose statements say nothing of it."""
    rng = random.Random(s.seed + 39)
    for setting in rng.sample(["q4_0", "q4_1", "q5_0", "q5_1", "q6_k", "iq4_nl"],
                              rng.randint(1, 5)):
        book.run(None, setting, s.p, s.n, rng, temperature=s.temperature)
    honest(book, with_shape(s, holdout=False))


def a38(book: Book, s: Shape) -> None:
    """A q8 run whose load log shows the engine applied another KV cache or a shorter
    context than the run asked for, recorded and claimed all the same."""
    honest(book, with_shape(s, applied=random.Random(s.seed + 38).choice(["kv_cache",
                                                                          "context"])))
