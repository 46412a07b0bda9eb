"""The audit compares binary runs item by item from their facts (logbook.format.runfacts:
bit masks of the items each run scored and scored 1), without reading the runs: A08's items
left out by one arm, A29's flips between greedy reruns, A26's clusters. What it finds is what
the runs' item scores give, and a binary run's figures are the ones its scores give, to the bit
(math.fsum over each term).

benchmarks/audit.py measures why: a 100,000-entry audit read every run whole for these three
rules (29 s against `verify`'s 6 s, over its budget of twice); it now reads none."""

from __future__ import annotations

import copy
import dataclasses
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_audit import append, make_plan, scored

from logbook.analysis.audit import run_audit
from logbook.analysis.audit.rules.repeats import flips_of
from logbook.analysis.view import LedgerView
from logbook.format.runfacts import facts_of, masks_of
from logbook.ledger.service import Ledger
from logbook.storage.sqlite.read_model import ReadModel
from logbook.verify.integrity import check

BINARY = [0, 1, None, True, False, 1.0, 0.0]


@pytest.mark.parametrize("seed", range(40))
def test_binary_figures_and_masks_are_the_scores(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([1, 2, 15, 100, 257, 3000])
    raw = [rng.choice(BINARY[:3] if seed % 2 else BINARY) for _ in range(n)]
    f = facts_of({"status": "completed", "outcomes": {"id": [f"i{j}" for j in range(n)],
                                                      "score": raw}})
    assert f is not None and f.binary and f.masks is not None
    values = [float(s) for s in raw if s is not None]
    assert f.scored == len(values)
    if values:
        mean = math.fsum(values) / len(values)
        assert f.score is not None and f.score.hex() == mean.hex()
        assert f.variance.hex() == (math.fsum([(v - mean) ** 2 for v in values])
                                    / len(values)).hex()
    else:
        assert f.score is None and f.variance == 0.0
    scored_mask, ones = masks_of(raw)
    assert (scored_mask, ones) == f.masks
    for j, s in enumerate(raw):
        assert (scored_mask >> j) & 1 == (s is not None)
        assert (ones >> j) & 1 == (s is not None and s == 1)


def test_a_column_of_negative_zeros_keeps_its_sign() -> None:
    f = facts_of({"status": "completed", "outcomes": {"id": ["a", "b"], "score": [-0.0, -0.0]}})
    assert f is not None and f.score is not None
    assert math.copysign(1.0, f.score) == math.copysign(1.0, math.fsum([-0.0, -0.0]) / 2)


def _greedy(scores: list[Any], arm: str, seed: int, plan: str | None = None,
            cluster: bool = False) -> dict[str, Any]:
    d = scored(plan, arm, 0.5, seed, n=len(scores))
    d["body"]["outcomes"]["score"] = scores
    d["body"]["outcomes"]["error"] = [None if x is not None else "timed out" for x in scores]
    d["body"]["apparatus"]["decoding"] = {"temperature": 0, "seed": 7}
    if cluster:
        d["body"]["outcomes"]["cluster"] = [f"c{i % 4}" for i in range(len(scores))]
    return d


def _view(work: Path) -> tuple[Ledger, Any, LedgerView]:
    ledger = Ledger.open(str(work), write=False)
    checked = check(ledger.entry_log, ReadModel.in_memory(),
                    ("plan", "amendment", "retraction", "claim", "band"), runs=True)
    return ledger, checked, LedgerView(ledger, checked)


def _plan_of_greedy_runs(tmp: Path, seed: int, n: int,
                         gone: Callable[[str, int], list[int]]) -> None:
    """A plan of 3 greedy runs an arm over ``n`` items, each leaving ``gone(arm, k)`` out."""
    rng = random.Random(seed)
    plan = make_plan(tmp, runs=3, n_items=n)
    drafts = []
    for k in range(3):
        for arm in ("f16", "q8"):
            s: list[Any] = [float(rng.random() < 0.7) for _ in range(n)]
            for j in gone(arm, k):
                s[j] = None
            drafts.append(_greedy(s, arm, k, plan))
    append(tmp, drafts)


def test_the_audit_reads_no_binary_run_whole(ledger_dir: Path, tmp_path: Path) -> None:
    # one missing item a run: never the same ones in every run of an arm
    _plan_of_greedy_runs(tmp_path, 3, 60, lambda _arm, k: [k])
    ledger, checked, view = _view(ledger_dir)
    with ledger, ledger.snapshot(), ledger.reading_checked(checked.kept, checked.reads):
        found = run_audit(view).findings
        assert not any(r.loaded for r in view.runs)
    assert any(f.check == "A29" for f in found)  # greedy reruns of one apparatus that flip


def test_masks_and_item_scores_find_the_same_flips(ledger_dir: Path, tmp_path: Path) -> None:
    rng = random.Random(5)
    base = [float(rng.random() < 0.6) for _ in range(40)]
    runs = []
    for k in range(4):
        s: list[Any] = list(base)
        for j in rng.sample(range(40), 3 + k):
            s[j] = None if j % 5 == 0 else 1.0 - s[j]
        runs.append(_greedy(s, "q8", k))
    append(tmp_path, runs)
    ledger, checked, view = _view(ledger_dir)
    with ledger, ledger.snapshot(), ledger.reading_checked(checked.kept, checked.reads):
        by_masks = flips_of(view.runs)
        assert not any(r.loaded for r in view.runs)
        twins = []
        for r in view.runs:  # the same runs, their masks unknown: read item by item
            twin = copy.copy(r)
            twin.facts = dataclasses.replace(r.facts, masks=None)
            twins.append(twin)
        by_items = flips_of(twins)
    assert by_masks is not None and by_items is not None
    assert [r.seq for r in by_masks[0]] == [r.seq for r in by_items[0]]
    assert by_masks[1] == by_items[1] == 40 and by_masks[3] == by_items[3] > 0
    assert [(a.seq, b.seq, c) for a, b, c in by_masks[2]] == \
        [(a.seq, b.seq, c) for a, b, c in by_items[2]]


def test_items_one_arm_leaves_out_are_still_found(ledger_dir: Path, tmp_path: Path) -> None:
    """A08 from the masks: an arm that leaves the same 8 items out of every run is found; the
    finding names them, as when the runs are read whole."""
    _plan_of_greedy_runs(tmp_path, 9, 80,
                         lambda arm, _k: list(range(70, 78)) if arm == "q8" else [])
    r = run_cli("audit", "--json")
    msgs = [f["message"] for f in r.json["findings"] if f["check"] == "A08"]
    assert any("8 items (q70, q71, q72, q73, q74 and more) are missing from every run of q8"
               in m for m in msgs), msgs


def test_unnamed_clusters_are_seen_in_the_facts(ledger_dir: Path, tmp_path: Path) -> None:
    plan = make_plan(tmp_path, runs=2, n_items=40)
    rng = random.Random(1)
    drafts = [_greedy([float(rng.random() < 0.5) for _ in range(40)], arm, k, plan,
                      cluster=True) for k in range(2) for arm in ("f16", "q8")]
    append(tmp_path, drafts)
    ledger, checked, view = _view(ledger_dir)
    with ledger, ledger.snapshot(), ledger.reading_checked(checked.kept, checked.reads):
        assert all(r.facts is not None and r.facts.clustered for r in view.runs)
