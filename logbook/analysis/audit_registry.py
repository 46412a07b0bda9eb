"""The audit's rules: id -> (severity, title, what it finds, the function that checks it),
and the modules those functions live in, by theme. Thresholds: docs/audit.md."""

from __future__ import annotations

# id: (severity, title, what it finds, the function's name in one of RULE_MODULES)
RULES: dict[str, tuple[str, str, str, str]] = {
    "A01": ("error", "unreported runs", "a claim leaves out completed runs its plan held for "
            "its arms when it was made", "a01_unreported_runs"),
    "A02": ("error", "best of N", "a claimed figure is the best single run of an arm, not the "
            "mean, beyond what rounding explains", "a02_best_of_n"),
    "A03": ("warning", "plan after data", "exploratory runs on the plan's suite with its arms' "
            "apparatus were appended before the plan", "a03_plan_after_data"),
    "A04": ("error", "optional stopping", "an arm has more completed runs than planned, or an "
            "amendment changed the run count after runs began", "a04_optional_stopping"),
    "A05": ("error", "goalposts moved", "an amendment changed the metric, criteria, minimum "
            "effect, analysis or exclusions after the first run", "a05_goalposts_moved"),
    "A06": ("warning", "confound", "control and treatment runs differ in apparatus fields "
            "besides the plan's declared variable", "a06_confound"),
    "A07": ("warning", "historical baseline", "control runs come from other sessions than the "
            "treatment runs, or were not interleaved with them", "a07_historical_baseline"),
    "A08": ("warning", "missing data", "a plan's run misses more items than the plan allows, "
            "or a claim's missing items cluster on one arm", "a08_missing_data"),
    "A09": ("error", "retracted support", "a standing claim rests on a retracted run or plan",
            "a09_retracted_support"),
    "A10": ("error", "hidden failures", "a claim's arms have failed or aborted runs that the "
            "claim does not mention", "a10_hidden_failures"),
    "A11": ("warning", "many comparisons", "several comparisons test the same suite: "
            "Bonferroni and Benjamini-Hochberg verdicts", "a11_many_comparisons"),
    "A12": ("warning", "surprise not re-measured", "the last run of an apparatus lies outside "
            "the prediction interval of its earlier runs or band, and was not re-run",
            "a12_surprise"),
    "A13": ("warning", "false precision", "a claim's statement prints more digits than its "
            "interval supports", "a13_false_precision"),
    "A14": ("info", "unplanned claim", "a claim with no plan", "a14_unplanned_claim"),
    "A15": ("error", "negative control failed", "a negative-control arm's score lies away from "
            "its expected value", "a15_negative_control"),
    "A16": ("warning", "no rerun of a good surprise", "a claim rests on a single run of an arm",
            "a16_single_run"),
    "A17": ("info", "unanchored plan", "no checkpoint was made between a plan and its first run",
            "a17_unanchored_plan"),
    "A18": ("warning", "runs beyond their band", "an arm's runs of one apparatus vary more "
            "than the band measured on it allows (F-test, p < 0.01)", "a18_beyond_band"),
    "A19": ("warning", "score without its system", "a completed run of a plan names no model "
            "or no decoding policy in its apparatus", "a19_system_unsaid"),
    "A20": ("warning", "two runs disagree", "two runs of one apparatus disagree beyond their "
            "sampling error, and no third run says which to believe", "a20_two_runs_disagree"),
    "A21": ("warning", "fixed seed", "repeats of one apparatus sample (temperature > 0) with "
            "one fixed seed, which hides the variance between runs", "a21_fixed_seed"),
    "A22": ("error", "laundering retraction", "a retraction, made after later runs, removed "
            "an arm's worst run or changed the verdict, and nothing replaced it",
            "a22_laundering_retraction"),
    "A23": ("warning", "past due", "a plan's due date has passed and it has no verdict (info "
            "before the date)", "a23_past_due"),
}
# the modules that hold the rules' functions, by theme
RULE_MODULES = ("audit_rules", "audit_claims", "audit_bands", "audit_repeats",
                "audit_retractions", "audit_plans")
