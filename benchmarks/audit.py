"""Budget (issue 8): `logbook audit` of a ledger of about 100,000 entries (4,000 plans with
24 runs each, 2 arms x 12, of 100 items per run, and 500 claims) against `logbook verify` of
the same ledger, both timed as subprocesses of the console script; ratio <= 2.0.

The ledger is built through the Python API (`Ledger.append_many`, batches of about 1,000
entries; see `FastCanonical` for how run envelopes are encoded quickly). It is a realistic mix,
so the audit's rules have something to find: plans spread over 200 suites (so A11 groups 20
plans a suite), a failed run in some plans, claims that cite every run (and a few that leave one
out), plans that are never anchored by a checkpoint. Set LOGBOOK_BENCH_REPEAT=1 to time each
command once instead of the median of 3.

Prints the ratio and never fails on it (exit 0): CI machines are noisy.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import orjson
from _common import report, shared_ledger

from logbook.crypto.signing import SigningKey
from logbook.ledger.service import Ledger

BIN = Path(sys.executable).parent
PLANS = 4000
RUNS_PER_ARM = 12
ITEMS = 100
CLAIMS = 500
SUITES = 200
PLANS_PER_BATCH = 40  # 40 x 25 entries = 1,000 per transaction
IDS = [f"item-{i:03d}" for i in range(ITEMS)]


def plan_body(i: int) -> dict[str, Any]:
    suite = i % SUITES
    return {
        "slug": f"bench-plan-{i:05d}", "title": f"Bench plan {i}", "decision": "ship or not",
        "hypothesis": "no difference", "runs_per_arm": RUNS_PER_ARM, "min_effect": 0.02,
        "variable": ["kv_cache_precision"],
        "metric": {"name": "acc", "kind": "proportion", "higher_is_better": True},
        "suite": {"name": f"suite-{suite}", "version": "1",
                  "dataset_hash": f"sha256:{suite:064x}", "n_items": ITEMS},
        "arms": [{"name": "f16", "role": "control"}, {"name": "q8", "role": "treatment"}],
        "success": [{"stat": "effect_low", "op": ">", "value": -0.02}],
        "failure": [{"stat": "effect_high", "op": "<", "value": -0.02}],
    }


def run_body(plan: str, i: int, arm: str, k: int, rng: random.Random) -> dict[str, Any]:
    p = 0.7 + (0.02 if arm == "q8" else 0.0)
    score = [1 if rng.random() < p else 0 for _ in IDS]  # JCS writes 1.0 as 1 too
    error: list[str | None] = [None] * ITEMS
    if rng.random() < 0.3:  # a timed-out request now and then: missing, never zero
        score[k] = None  # type: ignore[call-overload]
        error[k] = "request timed out"
    body: dict[str, Any] = {
        "plan": plan, "arm": arm, "session": f"s-{i}",
        "apparatus": {"model": f"m-{i % 50}", "engine": "llama.cpp", "engine_build": "b1234",
                      "kv_cache_precision": arm, "dataset_hash": f"sha256:{i % SUITES:064x}",
                      "evaluator": {"name": "exact", "config_hash": "sha256:" + "e" * 64},
                      "decoding": {"temperature": 0, "seed": k}},
    }
    if i % 97 == 5 and k == 0 and arm == "q8":
        body.update(status="failed", reason="engine crashed")
    else:
        body.update(status="completed",
                    outcomes={"metric": "acc", "id": IDS, "score": score, "error": error})
    return body


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def claim_body(ledger: Ledger, plan: str, runs: dict[str, list[tuple[str, float]]],
               n: int) -> dict[str, Any]:
    """A claim by hand, as `logbook claim` would write it (mean +- a rough t half-width)."""
    size = ledger.size()
    c = [s for _, s in runs["f16"]]
    t = [s for _, s in runs["q8"]]
    cited = [d for arm in ("f16", "q8") for d, _ in runs[arm]]
    if n % 50 == 8:
        cited = cited[1:]  # leaves a completed run out: A01
    if n % 2:
        value, half = mean(t), 2.2 * statistics.stdev(t) / len(t) ** 0.5
        arm: Any = "q8"
        figure = "arm_mean"
        cited = [d for d, _ in runs["q8"]]
    else:
        value, half = mean(t) - mean(c), 0.04
        arm, figure = ["f16", "q8"], "effect"
    return {"statement": f"q8 scores {value * 100:.0f} points (bench)", "plan": plan,
            "arm": arm, "value": value, "interval": [value - half, value + half],
            "runs": cited, "ledger_size": size, "ledger_root": ledger.root(size).hex(),
            "figure": figure, "method": "run-level"}


class FastCanonical:
    """RFC 8785 bytes of run envelopes by orjson, for building the ledger in minutes.

    The pure-Python JCS encoder takes about 2.5 ms a run of 100 items. For these envelopes
    (ASCII keys and strings, integers, no floats) sorted-key orjson writes the same bytes;
    one envelope in 50 is also encoded by the real encoder and must match, or the build stops.
    Every other kind of entry (plans and claims carry floats) goes through the real encoder.
    """

    def __init__(self) -> None:
        import logbook.format.canonical as canonical

        self.module = canonical
        self.real = canonical.canonical_bytes
        self.calls = 0

    def __call__(self, value: Any) -> bytes:
        if not isinstance(value, dict) or value.get("kind") != "run":
            return self.real(value)
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        self.calls += 1
        if self.calls % 50 == 1 and out != self.real(value):
            raise SystemExit("benchmark build: orjson bytes differ from RFC 8785 bytes")
        return out

    def __enter__(self) -> FastCanonical:
        self.module.canonical_bytes = self  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        self.module.canonical_bytes = self.real


def build(folder: Path, key: SigningKey, plans: int | None = None) -> Ledger:
    """The benchmark ledger, through the Python API in batches of about 1,000 entries;
    ``plans`` (a multiple of PLANS_PER_BATCH; PLANS when None) for a smaller one of the same
    mix (a claim for one plan in PLANS // CLAIMS)."""
    with FastCanonical():
        return _build(folder, key, PLANS if plans is None else plans)


def make(dest: Path) -> int:
    """The benchmark ledger at full size in ``dest``, signed by a key of its own; its size."""
    with build(dest, SigningKey.generate()) as ledger:
        return ledger.size()


def built(folder: Path) -> int:
    """The benchmark ledger at full size in ``folder`` (built once a run of every benchmark:
    _common.shared_ledger); its size."""
    return shared_ledger("audit", folder, make)


def _build(folder: Path, key: SigningKey, n_plans: int) -> Ledger:
    folder.mkdir(parents=True)
    ledger = Ledger.init(folder, "bench-audit", key)
    rng = random.Random(8)
    claim_every = PLANS // CLAIMS
    pending: list[tuple[str, dict[str, list[tuple[str, float]]], int]] = []
    for start in range(0, n_plans, PLANS_PER_BATCH):
        claims = [("claim", claim_body(ledger, d, runs, n)) for d, runs, n in pending]
        pending = []
        if claims:
            ledger.append_many(claims, key)
        plans = ledger.append_many([("plan", plan_body(i))
                                    for i in range(start, start + PLANS_PER_BATCH)], key)
        drafts: list[tuple[str, dict[str, Any]]] = []
        for i, plan in zip(range(start, start + PLANS_PER_BATCH), plans, strict=True):
            for k in range(RUNS_PER_ARM):
                for arm in ("f16", "q8"):  # interleaved, one session per plan
                    drafts.append(("run", run_body(plan.digest, i, arm, k, rng)))
        written = ledger.append_many(drafts, key)
        for j, plan in enumerate(plans):
            i = start + j
            if i % claim_every:
                continue
            runs: dict[str, list[tuple[str, float]]] = {"f16": [], "q8": []}
            for e in written[j * 2 * RUNS_PER_ARM:(j + 1) * 2 * RUNS_PER_ARM]:
                b = e.body
                if b["status"] == "completed":
                    vals = [s for s in b["outcomes"]["score"] if s is not None]
                    runs[b["arm"]].append((e.digest, sum(vals) / len(vals)))
            pending.append((plan.digest, runs, i // claim_every))  # n: the claim's number
    if pending:
        ledger.append_many([("claim", claim_body(ledger, d, runs, n)) for d, runs, n in pending],
                           key)
    return ledger


def timed(args: list[str], env: dict[str, str], repeat: int) -> tuple[float, int, bytes]:
    """Median seconds of `repeat` runs of the console script; its last exit code and stdout."""
    times, code, out = [], 0, b""
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run(args, env=env, capture_output=True)
        times.append(time.perf_counter() - t)
        code, out = r.returncode, r.stdout
        if r.returncode not in (0, 1):
            raise SystemExit(f"benchmark step failed: {' '.join(args)}\n{r.stderr.decode()}")
    return statistics.median(times), code, out


def main() -> None:
    repeat = int(os.environ.get("LOGBOOK_BENCH_REPEAT", "3"))
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-audit-"))
    try:
        # the audit as it is on a machine's first look at the ledger: checked in full
        env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "cfg"), "LOGBOOK_STATE_DIR": "off"}
        env.pop("LOGBOOK_DIR", None)
        env.pop("LOGBOOK_KEY", None)
        t = time.perf_counter()
        size = built(tmp / "ledger")
        print(f"made a {size:,}-entry ledger ({PLANS:,} plans x {2 * RUNS_PER_ARM} runs of "
              f"{ITEMS} items, {CLAIMS} claims) in {time.perf_counter() - t:.1f} s", flush=True)
        where = ["--ledger", str(tmp / "ledger")]
        logbook = str(BIN / "logbook")
        t_verify, _, _ = timed([logbook, *where, "verify"], env, repeat)
        t_audit, code, out = timed([logbook, *where, "audit", "--json"], env, repeat)
        counts: dict[str, int] = {}
        for f in orjson.loads(out)["findings"]:
            counts[f["check"]] = counts.get(f["check"], 0) + 1
        summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        report("audit", t_audit / t_verify, "<= 2.0",
               f"audit {t_audit:.2f} s vs verify {t_verify:.2f} s of {size:,} entries, "
               f"median of {repeat}; audit exit {code}; findings: {summary or 'none'}")
        # and resumed from this machine's checked copy (docs/auditing.md §7): the first run
        # below checks in full and keeps the copy, the next ones check what came since
        resumed = {**env, "LOGBOOK_STATE_DIR": str(tmp / "state")}
        timed([logbook, *where, "audit", "--json"], resumed, 1)
        t_resumed, code_r, out_r = timed([logbook, *where, "audit", "--json"], resumed, repeat)
        assert orjson.loads(out_r)["findings"] == orjson.loads(out)["findings"]
        report("audit resumed", t_resumed / t_verify, "(beside the above)",
               f"audit {t_resumed:.2f} s vs verify {t_verify:.2f} s, the same findings; exit "
               f"{code_r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
