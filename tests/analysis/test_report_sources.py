"""Variance by source (issue 36 item 6), through the commands as a user runs them: the typed
apparatus fields at the door, the report's spread by source (execution, decoding, items) on
scenario ledgers, and a plan's prompt variants: admission, the audit's confound rule and the
variance line, its figures against scipy's and statsmodels' one-way ANOVA."""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import draft, plan_body, write_json, write_jsonl
from conftest import run_cli


def _plan(tmp: Path, **kw: Any) -> str:
    r = run_cli("plan", str(write_json(tmp / "plan.json", plan_body(**kw))), "--json")
    assert r.code == 0, r.err
    return str(r.json["digest"])


def _append(tmp: Path, drafts: list[dict[str, Any]], name: str = "runs.jsonl") -> Any:
    return run_cli("append", "--jsonl", str(write_jsonl(tmp / name, drafts)), "--json")


def _scores(n: int, right: int, seed: int) -> list[float]:
    """n item scores, `right` of them 1, shuffled by `seed` (so items differ between runs)."""
    s = [1.0] * right + [0.0] * (n - right)
    random.Random(seed).shuffle(s)
    return s


def _run(plan: str, arm: str, scores: list[float], seed: int, temperature: float | None,
         **apparatus: Any) -> dict[str, Any]:
    decoding: dict[str, Any] = {"seed": seed}
    if temperature is not None:
        decoding["temperature"] = temperature
    return draft("run", {
        "plan": plan, "arm": arm, "status": "completed", "session": "s1",
        "apparatus": {"model": "m", "kv_cache_precision": arm, "decoding": decoding,
                      **apparatus},
        "outcomes": {"metric": "acc", "id": [f"q{i:03d}" for i in range(len(scores))],
                     "score": scores}})


def _state() -> tuple[str, int]:
    v = run_cli("verify", "--json")
    assert v.code == 0, v.err
    return v.json["head"], v.json["entries"]


N = 200
DOCS = Path(__file__).parents[2] / "docs"


def _documented() -> list[str]:
    """The spread-by-source and variants lines docs/reporting.md shows (its bare blocks)."""
    text = (DOCS / "reporting.md").read_text()
    blocks = re.findall(r"```report\n(.*?)\n *```", text, flags=re.S)
    lines = [line.strip() for b in blocks for line in b.splitlines()]
    return [line for line in lines if line.startswith(("spread by source:", "variant"))]


def test_execution_and_decoding_spread_are_told_apart(ledger_dir: Path, tmp_path: Path) -> None:
    """Arm a: three greedy runs of one apparatus (execution noise only: a point or two) and
    five runs at T=0.7 with five seeds (decoding noise: several points). Arm b: runs that
    record no temperature, so neither source can be told, and the report says why."""
    plan = _plan(tmp_path, slug="sources", runs_per_arm=8, n_items=N, arms=("a", "b"))
    greedy = [150, 152, 149]
    sampled = [140, 156, 132, 161, 147]
    drafts = [_run(plan, "a", _scores(N, r, k), k, 0.0,
                   execution={"batch_size": 8, "concurrency": 4, "batch_invariant": False},
                   retries={"cap": 3, "used": k}) for k, r in enumerate(greedy)]
    drafts += [_run(plan, "a", _scores(N, r, 10 + k), 10 + k, 0.7,
                    execution={"batch_size": 8, "concurrency": 4, "batch_invariant": False},
                    retries={"cap": 3, "used": 0}) for k, r in enumerate(sampled)]
    drafts += [_run(plan, "b", _scores(N, r, 20 + k), 20 + k, None)
               for k, r in enumerate((150, 151))]
    assert _append(tmp_path, drafts).code == 0
    arms = {a["name"]: a for a in run_cli("report", "sources", "--json").json["arms"]}
    so = arms["a"]["sources"]
    ex, de = so["execution"], so["decoding"]
    assert ex["sd"] == pytest.approx(float(np.std(np.array(greedy) / N, ddof=1)), rel=1e-12)
    assert de["sd"] == pytest.approx(float(np.std(np.array(sampled) / N, ddof=1)), rel=1e-12)
    assert (ex["runs"], ex["groups"], ex["how"]) == (3, 1, "greedy")
    assert (de["runs"], de["groups"], de["how"]) == (5, 1, "seeds at T=0.7")
    assert de["sd"] > 4 * ex["sd"]
    assert so["items"] == pytest.approx(arms["a"]["spread"]["items"])
    # retries.used differs run to run: the run's own figure, not a difference of apparatus
    assert not any(k.startswith("retries") for k in arms["a"]["differing_apparatus"])
    b = arms["b"]["sources"]
    assert b["execution"]["sd"] is None and b["decoding"]["sd"] is None
    assert "at greedy decoding or one fixed seed" in b["execution"]["why"]
    text = run_cli("report", "sources").out
    want = (f"spread by source: execution (identical apparatus, greedy, 3 runs) sd "
            f"{ex['sd'] * 100:.2f}; decoding (identical apparatus, seeds at T=0.7, 5 runs) sd "
            f"{de['sd'] * 100:.2f}; items (the finite suite) sd {so['items'] * 100:.2f}")
    assert want in text
    assert ("execution not estimated (no two runs of one apparatus at greedy decoding or one "
            "fixed seed); decoding not estimated (no two runs of one apparatus with different "
            "seeds at temperature > 0)") in text
    assert want in _documented()[0]  # docs/reporting.md shows this scenario's line


def test_one_fixed_seed_at_temperature_is_execution(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="fixed-seed", runs_per_arm=3, n_items=N, arms=("a", "b"))
    drafts = [_run(plan, "a", _scores(N, r, k), 7, 0.7) for k, r in enumerate((140, 141, 143))]
    assert _append(tmp_path, drafts).code == 0
    so = run_cli("report", "fixed-seed", "--json").json["arms"][0]["sources"]
    assert so["execution"]["how"] == "one fixed seed" and so["execution"]["runs"] == 3
    assert so["decoding"]["sd"] is None


@pytest.mark.parametrize(("field", "value", "words"), [
    ("execution", {"batch_size": "auto"}, "execution.batch_size is \"auto\": a whole number of 1"),
    ("execution", {"batch_size": 0}, "execution.batch_size is 0: a whole number of 1"),
    ("execution", {"concurrency": 2.5}, "execution.concurrency is 2.5: a whole number of 1"),
    ("execution", {"batch_invariant": "yes"}, "execution.batch_invariant is \"yes\": true or"),
    ("execution", 8, "execution is 8: an object of batch_size, concurrency, batch_invariant"),
    ("retries", {"cap": -1}, "retries.cap is -1: a whole number of 0 or more"),
    ("retries", {"used": True}, "retries.used is true: a whole number of 0"),
    ("scoring", {"order": 3}, "scoring.order is 3: a non-empty text"),
])
def test_typed_fields_of_the_wrong_type_are_refused(ledger_dir: Path, tmp_path: Path,
                                                    field: str, value: Any, words: str) -> None:
    plan = _plan(tmp_path, slug="typed", runs_per_arm=1, n_items=20, arms=("a", "b"))
    before = _state()
    r = _append(tmp_path, [_run(plan, "a", _scores(20, 10, 0), 0, 0.0, **{field: value})])
    assert r.code == 2
    assert "body.apparatus: " + words in r.err, r.err
    assert _state() == before
    # the same body without a plan (the lean path) is refused alike
    body = _run(plan, "a", _scores(20, 10, 0), 0, 0.0, **{field: value})
    body["body"].update(plan=None, arm=None)
    r = _append(tmp_path, [body], "free.jsonl")
    assert r.code == 2 and words in r.err and _state() == before


def _hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


VARIANTS = [_hash(p) for p in ("Answer:", "The answer is", "Q: ... A:")]


def _variant_plan(tmp: Path) -> str:
    return _plan(tmp, slug="paraphrase", runs_per_arm=9, n_items=N, arms=("a", "b"),
                 variable=["kv_cache_precision"], variants=VARIANTS)


def test_a_variant_plan_reports_the_variance_between_variants(ledger_dir: Path,
                                                              tmp_path: Path) -> None:
    from scipy.stats import f_oneway

    plan = _variant_plan(tmp_path)
    right = {VARIANTS[0]: (150, 152, 148), VARIANTS[1]: (140, 143, 139),
             VARIANTS[2]: (158, 155, 157)}
    drafts = [_run(plan, "a", _scores(N, r, 3 * i + k), 3 * i + k, 0.0, prompt_hash=v)
              for i, (v, rs) in enumerate(right.items()) for k, r in enumerate(rs)]
    # arm b ran two of the three variants so far: not a confound (A06) but the declared factor
    drafts += [_run(plan, "b", _scores(N, r, 40 + k), 40 + k, 0.0, prompt_hash=v)
               for k, (v, r) in enumerate(((VARIANTS[0], 151), (VARIANTS[1], 141),
                                           (VARIANTS[0], 149)))]
    assert _append(tmp_path, drafts).code == 0
    arms = {a["name"]: a for a in run_cli("report", "paraphrase", "--json").json["arms"]}
    va = arms["a"]["variants"]
    groups = [np.array(rs) / N for rs in right.values()]
    want = f_oneway(*groups)
    assert va["f"] == pytest.approx(float(want.statistic), rel=1e-9)
    assert va["p"] == pytest.approx(float(want.pvalue), rel=1e-9)
    msw = float(np.mean([np.var(g, ddof=1) for g in groups]))
    msb = 3 * float(np.var([g.mean() for g in groups], ddof=1))
    assert va["within"] == pytest.approx(msw, rel=1e-12)
    assert va["between"] == pytest.approx((msb - msw) / 3, rel=1e-12)
    assert (va["declared"], va["seen"], va["runs"], va["df_between"], va["df_within"]) == \
        (3, 3, 9, 2, 6)
    assert arms["a"]["differing_apparatus"] == {}  # the declared variant is no difference
    b = arms["b"]["variants"]
    assert (b["seen"], b["runs"], b["df_between"], b["df_within"]) == (2, 3, 1, 1)
    text = run_cli("report", "paraphrase").out
    assert (f"variants: 3 of 3 declared prompt variants over 9 runs: between variants sd "
            f"{va['between'] ** 0.5 * 100:.2f}, within a variant sd "
            f"{va['within'] ** 0.5 * 100:.2f}; F = {va['f']:.2f} on 2 and 6 df") in text
    shown = [line.strip() for line in text.splitlines() if "variant" in line][:2]
    assert shown == _documented()[1:]  # docs/reporting.md shows this scenario's lines
    audit = run_cli("audit", "--json").json
    assert not [f for f in audit["findings"] if f["check"] == "A06"], audit["findings"]


def test_variant_figures_match_statsmodels_anova(ledger_dir: Path, tmp_path: Path) -> None:
    """Unbalanced variants (4, 2 and 3 runs): the mean squares, F and p as statsmodels'
    anova_lm of an OLS on the variant (to 1e-9 relative)."""
    pd = pytest.importorskip("pandas")
    smf = pytest.importorskip("statsmodels.formula.api")
    from statsmodels.stats.anova import anova_lm

    plan = _variant_plan(tmp_path)
    right = {VARIANTS[0]: (150, 152, 148, 153), VARIANTS[1]: (140, 146),
             VARIANTS[2]: (158, 151, 157)}
    drafts = [_run(plan, "a", _scores(N, r, 5 * i + k), 5 * i + k, 0.0, prompt_hash=v)
              for i, (v, rs) in enumerate(right.items()) for k, r in enumerate(rs)]
    assert _append(tmp_path, drafts).code == 0
    va = run_cli("report", "paraphrase", "--json").json["arms"][0]["variants"]
    df = pd.DataFrame([(v, r / N) for v, rs in right.items() for r in rs],
                      columns=["variant", "score"])
    table = anova_lm(smf.ols("score ~ C(variant)", data=df).fit())
    row = table.loc["C(variant)"]
    assert va["f"] == pytest.approx(float(row["F"]), rel=1e-9)
    assert va["p"] == pytest.approx(float(row["PR(>F)"]), rel=1e-9)
    assert va["within"] == pytest.approx(float(table.loc["Residual", "mean_sq"]), rel=1e-9)
    n0 = (9 - (16 + 4 + 9) / 9) / 2
    assert va["between"] == pytest.approx((float(row["mean_sq"]) - va["within"]) / n0,
                                          rel=1e-9)


def test_a_run_of_an_undeclared_variant_is_refused(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _variant_plan(tmp_path)
    before = _state()
    other = _hash("Respond with the number only.")
    r = _append(tmp_path, [_run(plan, "a", _scores(N, 150, 0), 0, 0.0, prompt_hash=other)])
    assert r.code == 2 and "body.apparatus.prompt_hash: the run gives" in r.err, r.err
    assert "declares the variants" in r.err and _state() == before
    r = _append(tmp_path, [_run(plan, "a", _scores(N, 150, 0), 0, 0.0)], "none.jsonl")
    assert r.code == 2 and "prompt_hash: the run gives none" in r.err and _state() == before


@pytest.mark.parametrize(("variants", "words"), [
    ([VARIANTS[0]], "variants: a within-arm factor needs two or more distinct prompt hashes"),
    ([VARIANTS[0], VARIANTS[0]], "two or more distinct prompt hashes"),
    (["nohash", VARIANTS[0]], "body.variants[0]"),
])
def test_bad_variants_are_refused(ledger_dir: Path, tmp_path: Path, variants: list[str],
                                  words: str) -> None:
    before = _state()
    r = run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(
        slug="bad-variants", variants=variants))), "--json")
    assert r.code == 2 and words in r.err, r.err
    assert _state() == before
