"""Statistics engine: intervals, paired tests, power and honest formatting for eval scores.

Pure numpy/scipy; scipy is imported lazily inside the functions that need it. See
docs/statistics.md for when the logbook uses each method and its source.
"""

from typing import TYPE_CHECKING, Any

# Every public name, by the module that defines it: imported on first use (PEP 562), so that
# a caller of one function (the audit's spreads, the report's intervals) loads that module
# only, not the whole engine.
_HOME = {
    "ClusteredEstimate": "_results",
    "Estimate": "_results",
    "FormattedEstimate": "_results",
    "McNemarResult": "_results",
    "MeanEstimate": "_results",
    "MultipleTestResult": "_results",
    "PairedEstimate": "_results",
    "TestResult": "_results",
    "VarianceBand": "_results",
    "VarianceComponents": "_results",
    "WelchEstimate": "_results",
    "WorstCaseBounds": "_results",
    "ClusterCheck": "clustered",
    "RunsPairedEstimate": "paired_runs",
    "cluster_check": "clustered",
    "clustered_se": "clustered",
    "newcombe_paired": "paired_runs",
    "paired_over_runs": "paired_runs",
    "variance_components": "clustered",
    "mcnemar_exact": "comparison",
    "paired": "comparison",
    "worst_case_bounds": "comparison",
    "decimals_supported": "formatting",
    "format_estimate": "formatting",
    "benjamini_hochberg": "multiple",
    "bonferroni": "multiple",
    "min_detectable_effect": "power",
    "sample_size": "power",
    "clopper_pearson": "proportions",
    "wilson": "proportions",
    "bootstrap": "resampling",
    "logit_t_interval": "runs",
    "pass_at_k": "runs",
    "pass_at_k_items": "runs",
    "t_interval": "runs",
    "variance_band": "runs",
    "welch": "runs",
}

if TYPE_CHECKING:
    from ._results import (
        ClusteredEstimate,
        Estimate,
        FormattedEstimate,
        McNemarResult,
        MeanEstimate,
        MultipleTestResult,
        PairedEstimate,
        TestResult,
        VarianceBand,
        VarianceComponents,
        WelchEstimate,
        WorstCaseBounds,
    )
    from .clustered import ClusterCheck, cluster_check, clustered_se, variance_components
    from .comparison import mcnemar_exact, paired, worst_case_bounds
    from .formatting import decimals_supported, format_estimate
    from .multiple import benjamini_hochberg, bonferroni
    from .paired_runs import RunsPairedEstimate, newcombe_paired, paired_over_runs
    from .power import min_detectable_effect, sample_size
    from .proportions import clopper_pearson, wilson
    from .resampling import bootstrap
    from .runs import (
        logit_t_interval,
        pass_at_k,
        pass_at_k_items,
        t_interval,
        variance_band,
        welch,
    )


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "ClusterCheck",
    "ClusteredEstimate",
    "Estimate",
    "FormattedEstimate",
    "McNemarResult",
    "MeanEstimate",
    "MultipleTestResult",
    "PairedEstimate",
    "RunsPairedEstimate",
    "TestResult",
    "VarianceBand",
    "VarianceComponents",
    "WelchEstimate",
    "WorstCaseBounds",
    "benjamini_hochberg",
    "bonferroni",
    "bootstrap",
    "clopper_pearson",
    "cluster_check",
    "clustered_se",
    "decimals_supported",
    "format_estimate",
    "logit_t_interval",
    "mcnemar_exact",
    "min_detectable_effect",
    "newcombe_paired",
    "paired",
    "paired_over_runs",
    "pass_at_k",
    "pass_at_k_items",
    "sample_size",
    "t_interval",
    "variance_band",
    "variance_components",
    "welch",
    "wilson",
    "worst_case_bounds",
]
