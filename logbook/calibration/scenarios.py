"""Scratch ledgers for calibrating the audit: honest work of many shapes, written through the
public Python API (and, when a command runner is given, through `logbook run` and `logbook
append --from`), the way a careful user writes it.

`honest(book, shape)` is a plan written first and anchored by a checkpoint, its arms interleaved
in one session, every planned run done and claimed with `logbook claim`'s figures; around it, an
exploratory series of one unchanged apparatus. `audit_calibration` (benchmarks/) and
`logbook audit --selftest` build on it; `violations` makes each rule's violation of it.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from logbook.calibration import loadlog
from logbook.crypto.signing import SigningKey
from logbook.ledger.service import Ledger

# runs a command line of logbook (argv after `logbook`) against the book's ledger; returns its
# exit code. Given by the caller, so that analysis never imports the command line.
Runner = Callable[[list[str], dict[str, str]], int]


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


def suite_hash(name: str) -> str:
    return "sha256:" + hashlib.sha256(name.encode()).hexdigest()


@dataclass
class Book:
    """A scratch ledger in `directory`, with its own key."""

    directory: Path
    runner: Runner | None = None
    key: SigningKey = field(default_factory=SigningKey.generate)
    session: str = "s1"
    counter: int = 0
    other: SigningKey | None = None  # a second lab's key (`reproduce`)
    stamping: bool = False  # each checkpoint is stamped as it is made (`stamp`)
    notes: list[str] = field(default_factory=list)  # every checkpoint made, in order
    clock: int = 0  # minutes the time-stamping authority's clock has moved on

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.key_path = self.directory / "book.key"
        self.key.write(self.key_path)
        Ledger.init(self.directory, "scenario", self.key).close()
        self.ledger = Ledger.open(self.directory)

    def close(self) -> None:
        self.ledger.close()

    def __enter__(self) -> Book:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- entries -----------------------------------------------------------------------------
    def append(self, kind: str, body: dict[str, Any]) -> str:
        return self.ledger.append(kind, body, self.key).digest

    def plan(self, slug: str = "kv", k: int = 3, n: int = 200, suite: str = "suite",
             arms: list[dict[str, Any]] | None = None, anchor: bool = True,
             split: str | None = None, **extra: Any) -> str:
        body: dict[str, Any] = {
            "slug": slug, "title": f"Plan {slug}", "decision": "ship q8 or not",
            "hypothesis": "q8 is within 5 points of f16", "runs_per_arm": k,
            "min_effect": 0.05, "variable": ["kv_cache_precision"],
            "metric": {"name": "acc", "kind": "proportion", "higher_is_better": True},
            "suite": {"name": suite, "version": "1", "n_items": n,
                      "dataset_hash": suite_hash(suite), **({"split": split} if split else {})},
            "arms": arms or [{"name": "f16", "role": "control"},
                             {"name": "q8", "role": "treatment"}],
            "success": [{"stat": "effect_low", "op": ">", "value": -0.05}],
            "failure": [{"stat": "effect_high", "op": "<", "value": -0.05}],
            **{k2: v for k2, v in extra.items() if v is not None}}
        digest = self.append("plan", body)
        if anchor:
            self.checkpoint()
        return digest

    def suite(self, n: int, splits: dict[str, str],
              listed: tuple[str, ...] | None = None) -> str:
        """The suite entry of "suite" (`logbook suite`): a split of ``n`` items for each name
        in ``splits`` (its items' id prefix), ``test`` held out (one look); the splits
        ``listed`` (default: every one) list their ids, the others only their digest."""
        from logbook.format.splits import id_set_digest

        parts = {}
        for name, prefix in splits.items():
            ids = [f"{prefix}{i}" for i in range(n)]
            parts[name] = {"n_items": n, "items": id_set_digest(ids),
                           **({"ids": ids} if listed is None or name in listed else {}),
                           **({"holdout": {"looks": 1}} if name == "test" else {})}
        return self.append("suite", {"name": "suite", "version": "1", "n_items": n * len(parts),
                                     "dataset_hash": suite_hash("suite"), "splits": parts})

    def checkpoint(self) -> None:
        from logbook.ledger.checkpoints import make_checkpoint

        self.notes.append(make_checkpoint(self.ledger, self.key))
        if self.stamping:
            self.stamp(self.notes[-1])

    def stamp(self, note: str) -> str:
        """A time-stamping authority stamps the checkpoint ``note`` now (its clock moves on a
        minute a stamp: logbook.calibration.tsa), appended as `checkpoint --timestamp` does."""
        import base64
        import datetime

        from logbook.calibration.tsa import Authority
        from logbook.crypto.timestamps import read_response
        from logbook.tlog.checkpoint import body_text, parse_checkpoint

        cp = parse_checkpoint(note)[0]
        self.clock += 1
        when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(
            minutes=self.clock)
        answer = Authority(b"calibration").answer(body_text(cp), when, self.clock)
        time = read_response(answer, body_text(cp), "the calibration TSA's answer").time
        return self.append("timestamp", {"size": cp.size, "root": cp.root.hex(),
                                         "tsa": "https://tsa.calibration.invalid/",
                                         "time": time,
                                         "response": base64.b64encode(answer).decode()})

    def apparatus(self, arm: str, suite: str, temperature: float = 0.0,
                  **extra: Any) -> dict[str, Any]:
        self.counter += 1
        return {"model": "m-7b", "engine": "llama.cpp", "engine_build": "b1234",
                "kv_cache_precision": arm, "dataset_hash": suite_hash(suite),
                "decoding": {"temperature": temperature, "seed": self.counter}, **extra}

    def outcomes(self, p: float, n: int, rng: random.Random, missing: float = 0.0,
                 exact: bool = False, limit: float = 0.02, items: str = "q") -> dict[str, Any]:
        """n items scored 1 with probability p (exactly round(p * scored) of them when
        `exact`); each fails with probability `missing`, never more than `limit` of them."""
        fail = [rng.random() < missing for _ in range(n)]
        cap = int(limit * n)
        while sum(fail) > cap:
            fail[fail.index(True)] = False
        present = [i for i in range(n) if not fail[i]]
        if exact:
            right = set(rng.sample(present, min(len(present), round(p * len(present)))))
            score = [None if fail[i] else float(i in right) for i in range(n)]
        else:
            score = [None if fail[i] else float(rng.random() < p) for i in range(n)]
        return {"metric": "acc", "id": [f"{items}{i}" for i in range(n)], "score": score,
                "error": ["request timed out" if f else None for f in fail]}

    def run(self, plan: str | None, arm: str, p: float, n: int, rng: random.Random,
            suite: str = "suite", how: str = "api", session: str | None = None,
            temperature: float = 0.0, missing: float = 0.0, exact: bool = False,
            status: str = "completed", app: dict[str, Any] | None = None,
            limit: float = 0.02, items: str = "q") -> str:
        """Append one run of `arm` (recorded `how`: api, run or from) and return its digest."""
        apparatus = {**self.apparatus(arm, suite, temperature), **(app or {})}
        body: dict[str, Any] = {"plan": plan, "arm": arm if plan else None, "status": status,
                                "session": session or self.session, "apparatus": apparatus}
        if status == "completed":
            body["outcomes"] = self.outcomes(p, n, rng, missing, exact, limit, items)
        else:
            body["reason"] = "engine crashed (out of memory)"
        if how == "api" or plan is None or status != "completed" or self.runner is None:
            return self.append("run", body)
        return self._record(body, how)

    def reproduce(self, original: str, p: float, n: int, rng: random.Random,
                  temperature: float = 0.0, missing: float = 0.0) -> str:
        """Another lab's run, under a key of its own (added to the ledger the first time),
        that reproduces run ``original``: the same suite and metric, its own machine's
        apparatus and seed, items scored 1 with probability ``p``."""
        if self.other is None:
            import base64

            self.other = SigningKey.generate()
            self.append("key", {"action": "add", "name": "another lab",
                                "public": base64.b64encode(self.other.public.raw).decode(),
                                "reason": "a second lab reproduces the runs"})
        body = {"plan": None, "arm": None, "status": "completed", "session": "lab-2",
                "apparatus": self.apparatus("q8", "suite", temperature),
                "outcomes": self.outcomes(p, n, rng, missing), "reproduces": original}
        return self.ledger.append("run", body, self.other).digest

    def _record(self, body: dict[str, Any], how: str) -> str:
        """Through the command line: `logbook run -- cp ...` or `logbook append --from`."""
        assert self.runner is not None
        oc = body["outcomes"]
        self.counter += 1
        src = self.directory / f"items-{self.counter}.jsonl"
        src.write_text("".join(json.dumps({"id": i, "score": s, **({"error": e} if e else {})})
                               + "\n" for i, s, e in zip(oc["id"], oc["score"], oc["error"],
                                                         strict=True)))
        app = self.directory / f"app-{self.counter}.json"
        declared = dict(body["apparatus"])
        applied = declared.pop("applied", None)
        app.write_text(json.dumps(declared))
        where = ["--plan", body["plan"], "--arm", body["arm"], "--session", body["session"],
                 "--apparatus", str(app)]
        if applied is not None:  # the engine's load log, read by logbook as a user's is
            log = self.directory / f"load-{self.counter}.log"
            log.write_text(loadlog.text(applied))
            where += ["--log", str(log)]
        if how == "run":
            out = self.directory / f"out-{self.counter}.jsonl"
            argv = ["run", *where, "--outcomes", str(out), "--", "cp", str(src), str(out)]
        else:
            argv = ["append", "--from", "jsonl", str(src), *where]
        code = self.runner(["--ledger", str(self.directory), *argv],
                           {"LOGBOOK_KEY": str(self.key_path)})
        if code != 0:
            raise RuntimeError(f"logbook {' '.join(argv)} exited {code}")
        return self.ledger.log(kind="run")[-1].digest

    def claim(self, plan: str, statement: str | None = None, arm: str | None = None) -> str:
        """`logbook claim PLAN [--arm ARM]`, its statement printing the report's figure."""
        from logbook.analysis.claims import claim_body
        from logbook.analysis.view import LedgerView

        body = claim_body(LedgerView(self.ledger), plan, statement or "-", arm=arm)
        if statement is None:
            body["statement"] = honest_statement(body, arm)
        return self.append("claim", body)

    def hand_claim(self, plan: str | None, arm: Any, value: float, interval: list[float],
                   runs: list[str], statement: str, figure: str = "arm_mean") -> str:
        size = self.ledger.size()
        return self.append("claim", {
            "statement": statement, "plan": plan, "arm": arm, "value": value,
            "interval": interval, "runs": runs, "ledger_size": size,
            "ledger_root": self.ledger.root(size).hex(), "figure": figure,
            "method": "run-level"})

    def contamination(self, model: str, suite: str, verdict: str = "clean",
                      rate: float | None = None) -> str:
        """A contamination check of ``suite`` (its name or dataset hash) for ``model``, as
        `logbook check contamination` appends it."""
        result: dict[str, Any] = {"verdict": verdict}
        if rate is not None:
            result["rate"] = rate
        return self.append("check", {"type": "contamination", "model": model, "suite": suite,
                                     "method": "ngram-overlap", "result": result,
                                     "description": "13-gram overlap with the pretraining "
                                                    "corpus index"})

    def spot_check(self, run: str, n: int, seed: int, wrong: float,
                   rng: random.Random) -> str:
        """A hand spot-check of ``run`` as `logbook spot-check RUN --verdicts FILE` appends
        it: the items the draw gives, each judged to disagree with the scorer with probability
        ``wrong`` (a scorer wrong that often), unsure now and then."""
        from logbook.analysis.items import items_of
        from logbook.format.spotcheck import draw

        rows = items_of(self.ledger.get(run).body, self.ledger.blob)
        drawn = draw(run, [r.id for r in rows], n, seed)
        verdicts = []
        for item in drawn:
            x = rng.random()
            said = "disagree" if x < wrong else "unsure" if x > 0.97 else "agree"
            verdicts.append({"id": item, "verdict": said,
                             **({"note": "the reference answer is right"}
                                if said == "disagree" else {})})
        return self.append("check", {"type": "spot-check", "run": run,
                                     "draw": {"n": n, "seed": seed}, "verdicts": verdicts,
                                     "reviewer": "calibration"})

    def retract(self, target: str, reason: str = "the scorer crashed on this run",
                category: str = "harness_defect") -> str:
        return self.append("retraction", {"target": target, "reason": reason,
                                          "category": category})

    def band(self, selector: str) -> str:
        from logbook.analysis.bands import band_body
        from logbook.analysis.view import LedgerView

        return self.append("band", band_body(LedgerView(self.ledger), selector))

    def audit(self) -> list[Any]:
        from logbook.analysis.audit import run_audit
        from logbook.analysis.view import LedgerView

        return list(run_audit(LedgerView(self.ledger)).findings)


def honest_statement(body: dict[str, Any], arm: str | None) -> str:
    from logbook.stats import format_estimate

    low, high = body["interval"]
    f = format_estimate(body["value"], low, high, scale=100.0)
    if arm is None:
        return f"q8 changes accuracy by {f.point} points ({f.low} to {f.high}) against f16"
    return f"{arm} scores {f.point}% ({f.low} to {f.high}) over all its runs"


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
