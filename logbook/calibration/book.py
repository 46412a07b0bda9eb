"""The scratch ledger the audit's calibration writes (`Book`): a ledger of its own in a
folder, with its own key, and the entries honest work and each violation append, through the
public Python API or, given a runner, through `logbook run` and `logbook append --from`
(logbook.calibration.scenarios holds the honest work, .violations and .practices the
violations)."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logbook.calibration import loadlog
from logbook.crypto.signing import SigningKey
from logbook.ledger.service import Ledger

# runs a command line of logbook (argv after `logbook`) against the book's ledger; returns its
# exit code. Given by the caller, so that analysis never imports the command line.
Runner = Callable[[list[str], dict[str, str]], int]


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
        return self._last("run")

    def _last(self, kind: str) -> str:
        """The digest of the latest entry of ``kind`` (read from the head back, not the log)."""
        seq = self.ledger.size() - 1
        while (entry := self.ledger.entry_at(seq)) is not None and entry.kind != kind:
            seq -= 1
        if entry is None:
            raise RuntimeError(f"no {kind} entry in {self.directory}")
        return entry.digest

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

        rows = items_of(self.ledger.get(run).body, self.ledger.entry_log.blob)
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
