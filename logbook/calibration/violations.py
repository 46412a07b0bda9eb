"""Each audit rule's violation, built on an honest ledger of a given shape (`scenarios`).

`VIOLATIONS[rule](book, shape)` writes a ledger that breaks that rule once, the way people do;
the honest twin is `scenarios.honest(book, shape)`. Used by `logbook audit --selftest` and by
`benchmarks/audit_calibration.py`, which measures how often each rule fires on each.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from logbook.calibration.book import Book, suite_hash
from logbook.calibration.practices import a33, a34, a35, a36, a37, a38, a39
from logbook.calibration.scenarios import Shape, honest, with_shape


def score_of(book: Book, digest: str) -> float:
    from logbook.analysis.view import LedgerView

    run = LedgerView(book.ledger).runs_by_digest[digest]
    assert run.score is not None
    return run.score


def surprise(p: float, n: int, k: int) -> float:
    """A true score far enough from p (8 prediction sd of k earlier runs, and 10 points at
    least) to be a surprise at any suite size, kept inside [0.02, 0.98]."""
    d = max(0.10, 8 * math.sqrt(max(p * (1 - p), 0.05) / n) * math.sqrt(1 + 1 / k))
    return p - d if p - d >= 0.02 else min(0.98, p + d)


def a01(book: Book, s: Shape) -> None:
    h = honest(book, s)
    runs = h["runs"]["q8"][1:]  # the first q8 run left out
    mean = sum(score_of(book, d) for d in runs) / len(runs)
    book.hand_claim(h["plan"], "q8", mean, [0.0, 1.0], runs, "q8 scores as shown over its runs")


def a02(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    q8 = []
    for i in range(s.k):  # the last q8 run came out 5 points above the others
        book.run(plan, "f16", s.p, s.n, rng, exact=True)
        q8.append(book.run(plan, "q8", min(0.98, s.p + (0.05 if i == s.k - 1 else 0.0)), s.n,
                           rng, exact=True))
    best = max(score_of(book, d) for d in q8)
    book.hand_claim(plan, "q8", best, [best - 0.1, best + 0.1], q8, f"q8 scores {best:.1%}")


def a03(book: Book, s: Shape) -> None:
    rng = random.Random(s.seed + 1)
    book.run(None, "q8", s.p, s.n, rng, temperature=s.temperature)  # a peek, on the suite
    honest(book, with_shape(s, calibration=False))


def a04(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for _ in range(s.k):
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, temperature=s.temperature)
    book.run(plan, "q8", s.p, s.n, rng, temperature=s.temperature)  # one more, to see


def a05(book: Book, s: Shape) -> None:
    h = honest(book, s)
    book.append("amendment", {"plan": h["plan"], "changes": {"min_effect": 0.1},
                              "reason": "the effect came out smaller than planned"})


def a06(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for _ in range(s.k):
        book.run(plan, "f16", s.p, s.n, rng, temperature=s.temperature)
        book.run(plan, "q8", s.p + s.effect, s.n, rng, temperature=s.temperature,
                 app={"engine_build": "b9999"})


def a07(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for arm, session in (("f16", "last-month"), ("q8", "today")):
        for _ in range(s.k):
            book.run(plan, arm, s.p, s.n, rng, session=session, temperature=s.temperature)


def a08(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for i in range(s.k):  # the first q8 run lost 15% of its items (a flaky server)
        book.run(plan, "f16", s.p, s.n, rng, temperature=s.temperature)
        book.run(plan, "q8", s.p, s.n, rng, temperature=s.temperature,
                 missing=0.0 if i else 0.15, limit=1.0)
    book.claim(plan, arm="q8")


def a09(book: Book, s: Shape) -> None:
    h = honest(book, s)
    book.retract(h["runs"]["q8"][-1], "the prompt template was stale")


def a10(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    book.run(plan, "q8", s.p, s.n, rng, status="failed")
    for _ in range(s.k):
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, temperature=s.temperature)
    book.claim(plan, arm="q8")


def a11(book: Book, s: Shape) -> None:
    honest(book, with_shape(s, calibration=False))
    plan = book.plan("kv-b", k=s.k, n=s.n)  # a second comparison on the same suite
    rng = random.Random(s.seed + 7)
    for _ in range(s.k):
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, temperature=s.temperature)


def a12(book: Book, s: Shape) -> None:
    rng = random.Random(s.seed)
    p, k = rng.uniform(0.2, 0.9), max(2, s.explore or 3)
    for _ in range(k):
        book.run(None, "nightly", p, s.n, rng, suite="nightly", temperature=s.temperature)
    book.run(None, "nightly", surprise(p, s.n, k), s.n, rng, suite="nightly",
             temperature=s.temperature)
    honest(book, with_shape(s, explore=0))


def a13(book: Book, s: Shape) -> None:
    h = honest(book, s)
    from logbook.analysis.claims import claim_body
    from logbook.analysis.view import LedgerView

    body = claim_body(LedgerView(book.ledger), h["plan"], "-", arm="q8")
    body["statement"] = f"q8 scores {body['value']:.3%} over all its runs"
    book.append("claim", body)


def a14(book: Book, s: Shape) -> None:
    honest(book, s)
    rng = random.Random(s.seed)
    d = book.run(None, "q8", s.p, s.n, rng, suite="other")
    x = score_of(book, d)
    book.hand_claim(None, "q8", x, [max(0.0, x - 0.05), min(1.0, x + 0.05)], [d],
                    f"m-7b scores {x:.0%}")


def a15(book: Book, s: Shape) -> None:
    arms: list[dict[str, Any]] = [
        {"name": "f16", "role": "control"}, {"name": "q8", "role": "treatment"},
        {"name": "shuffled", "role": "negative_control", "expected": 0.25, "tolerance": 0.05}]
    plan = book.plan("kv", k=s.k, n=s.n, arms=arms)
    rng = random.Random(s.seed)
    for _ in range(s.k):
        for arm, p in (("f16", s.p), ("q8", s.p), ("shuffled", 0.5)):
            book.run(plan, arm, p, s.n, rng, temperature=s.temperature,
                     app={"prompt_template_hash": "sha256:" + "0" * 64} if arm == "shuffled"
                     else None)


def a16(book: Book, s: Shape) -> None:
    honest(book, with_shape(s, k=1, calibration=False, retract=False))


def a17(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n, anchor=False)
    rng = random.Random(s.seed)
    for _ in range(s.k):
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, temperature=s.temperature)


def a18(book: Book, s: Shape) -> None:
    rng = random.Random(s.seed)
    cal = book.plan("cal", k=10, n=s.n, arms=[{"name": "q8", "role": "control"}])
    for _ in range(10):  # the q8 pipeline's band, from ten runs
        book.run(cal, "q8", s.p, s.n, rng)
    book.band("cal:q8")
    k = max(s.k, 4)
    plan = book.plan("kv", k=k, n=s.n)
    d = surprise(s.p, s.n, 10) - s.p
    for i in range(k):  # q8 alternates between two regimes (a flaky dependency)
        book.run(plan, "f16", s.p, s.n, rng)
        book.run(plan, "q8", s.p + (d if i % 2 else 0.0), s.n, rng)


def a19(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for i in range(s.k):
        book.run(plan, "f16", s.p, s.n, rng, temperature=s.temperature)
        if i < s.k - 1:
            book.run(plan, "q8", s.p, s.n, rng, temperature=s.temperature)
    # the last q8 run recorded by hand without its system: its apparatus names the suite only
    book.append("run", {"plan": plan, "arm": "q8", "status": "completed",
                        "session": book.session, "apparatus": {"dataset_hash": suite_hash("suite")},
                        "outcomes": book.outcomes(s.p, s.n, rng, 0.0, False, 0.02)})


def a20(book: Book, s: Shape) -> None:
    rng = random.Random(s.seed)
    p = rng.uniform(0.2, 0.9)
    book.run(None, "nightly", p, s.n, rng, suite="nightly", temperature=s.temperature)
    book.run(None, "nightly", surprise(p, s.n, 1), s.n, rng, suite="nightly",
             temperature=s.temperature)
    honest(book, with_shape(s, explore=0))


def a21(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for _ in range(s.k):
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, temperature=0.7,
                     app={"decoding": {"temperature": 0.7, "seed": 1234}})


def a22(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    worst = book.run(plan, "q8", max(0.0, s.p - 0.15), s.n, rng, exact=True)
    for _ in range(s.k):
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, exact=True)
    book.retract(worst, "a harness defect, found on review")  # after the better runs came


def a23(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n, due="2020-06-30")
    rng = random.Random(s.seed)
    for _ in range(s.k - 1):  # one run per arm short, long after the date
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, temperature=s.temperature)


def a26(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)  # names no cluster_field
    rng = random.Random(s.seed)
    size = 5  # items share a passage: each passage is mostly right or mostly wrong
    ease = [rng.random() for _ in range(s.n // size + 1)]
    ids = [f"q{i}" for i in range(s.n)]
    for _ in range(s.k):
        for arm in ("f16", "q8"):
            score = [float(rng.random() < 0.1 + 0.8 * ease[i // size]) for i in range(s.n)]
            book.append("run", {
                "plan": plan, "arm": arm, "status": "completed", "session": book.session,
                "apparatus": book.apparatus(arm, "suite", s.temperature),
                "outcomes": {"metric": "acc", "id": ids, "score": score,
                             "error": [None] * s.n,
                             "cluster": [f"passage-{i // size}" for i in range(s.n)]}})


def _refused(book: Book, plan: str, s: Shape, rng: random.Random, why: str) -> str:
    """A q8 run meant for the plan that it refused, kept as exploratory with ``intended``."""
    return book.append("run", {
        "plan": None, "arm": None, "status": "completed", "session": book.session,
        "apparatus": book.apparatus("q8", "suite", s.temperature),
        "outcomes": book.outcomes(s.p, s.n, rng, exact=True),
        "intended": {"plan": plan, "arm": "q8", "reason": f"not counted in plan kv: {why}"}})


def a24(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for _ in range(s.k):  # every q8 run refused: the arm never fills
        book.run(plan, "f16", s.p, s.n, rng, temperature=s.temperature)
        _refused(book, plan, s, rng, "body.apparatus.engine_build: the run's is 'b1235', but "
                 "plan kv pins 'b1234'")


def a25(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for _ in range(s.k - 1):
        book.run(plan, "f16", s.p, s.n, rng, temperature=s.temperature)
    refused = [_refused(book, plan, s, rng, "a pin spelt as the harness does not write it")
               for _ in range(2)]
    book.append("admission", {"run": refused[0], "plan": plan, "arm": "q8"})  # not the other


def a27(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=max(3, s.k), n=s.n)
    rng = random.Random(s.seed)
    for _ in range(max(3, s.k) - 1):  # a look one round before the end: claimed there
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, temperature=s.temperature)
    book.claim(plan)


def a28(book: Book, s: Shape) -> None:
    plan = book.plan("kv", k=s.k, n=s.n)
    rng = random.Random(s.seed)
    for i in range(s.k):  # the judge's prompt revised after the first round
        rubric = suite_hash(f"rubric-{min(i, 1)}")
        judge = {"evaluator": {"model": "judge-70b", "prompt_hash": rubric}}
        for arm in ("f16", "q8"):
            book.run(plan, arm, s.p, s.n, rng, temperature=s.temperature, app=judge)
    book.claim(plan)


def a29(book: Book, s: Shape) -> None:
    """Greedy reruns with one seed that give other answers on some items."""
    rng = random.Random(s.seed)
    app = {"decoding": {"temperature": 0.0, "seed": 7}}
    first = book.run(None, "nightly", s.p, s.n, rng, suite="nightly", app=app, exact=True)
    oc = book.ledger.get(first).body["outcomes"]
    flipped = [None if v is None else (1.0 - v if rng.random() < 0.02 else v)
               for v in oc["score"]]
    if flipped == oc["score"]:
        flipped[0] = 1.0 - float(oc["score"][0] or 0.0)
    book.append("run", {"plan": None, "arm": None, "status": "completed",
                        "session": book.session,
                        "apparatus": {**book.ledger.get(first).body["apparatus"]},
                        "outcomes": {**oc, "score": flipped}})
    honest(book, with_shape(s, explore=0))


def a30(book: Book, s: Shape) -> None:
    """Another lab reproduces a claimed q8 run and gets a score far from it: a difference of
    at least 6 standard errors of the paired difference (and 15 points)."""
    h = honest(book, with_shape(s, reproduce=False))
    p = h["truth"]["q8"]
    d = max(0.15, 6 * math.sqrt(2 * max(p * (1 - p), 0.05) / s.n))
    far = p - d if p - d >= 0.02 else min(0.98, p + d)
    book.reproduce(h["runs"]["q8"][0], far, s.n, random.Random(s.seed + 30),
                   temperature=s.temperature)


def a31(book: Book, s: Shape) -> None:
    """A stamp backfilled: the plan's anchoring checkpoint went unstamped until after a
    checkpoint holding its runs was stamped; then it was stamped, later."""
    h = honest(book, with_shape(s, stamp=False))
    book.checkpoint()  # holds the runs
    book.stamp(book.notes[-1])
    seq = book.ledger.get(h["plan"]).seq
    anchor = next(n for n in book.notes if n.split("\n")[1] == str(seq + 1))
    book.stamp(anchor)


def a32(book: Book, s: Shape) -> None:
    """A ledger that stamps its checkpoints, but only once the runs were in."""
    honest(book, with_shape(s, stamp=False))
    book.stamping = True
    book.checkpoint()


_BUILT: dict[str, Callable[[Book, Shape], Any]] = {
    "A01": a01, "A02": a02, "A03": a03, "A04": a04, "A05": a05, "A06": a06, "A07": a07,
    "A08": a08, "A09": a09, "A10": a10, "A11": a11, "A12": a12, "A13": a13, "A14": a14,
    "A15": a15, "A16": a16, "A17": a17, "A18": a18, "A19": a19, "A20": a20, "A21": a21, "A22": a22,
    "A23": a23, "A24": a24, "A25": a25, "A26": a26, "A27": a27, "A28": a28,
    "A29": a29, "A30": a30, "A31": a31, "A32": a32, "A33": a33, "A34": a34, "A35": a35,
    "A36": a36, "A37": a37, "A38": a38, "A39": a39,
}


def _on_one_suite(build: Callable[[Book, Shape], Any]) -> Callable[[Book, Shape], Any]:
    """A violation built on a shape without a suite entry: more plans and runs on "suite"
    than the honest shape's would name no split of it (A37's builds its own)."""
    def violate(book: Book, s: Shape) -> Any:
        return build(book, with_shape(s, holdout=False))
    violate.__doc__ = build.__doc__
    return violate


VIOLATIONS: dict[str, Callable[[Book, Shape], Any]] = {
    rule: build if rule == "A37" else _on_one_suite(build) for rule, build in _BUILT.items()}
