"""Statistics engine: intervals, paired tests, power and honest formatting for eval scores.

Pure numpy/scipy; scipy is imported lazily inside the functions that need it. See
docs/statistics.md for when the logbook uses each method and its source.
"""

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
from .clustered import clustered_se, variance_components
from .comparison import mcnemar_exact, paired, worst_case_bounds
from .formatting import decimals_supported, format_estimate
from .multiple import benjamini_hochberg, bonferroni
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

__all__ = [
    "ClusteredEstimate",
    "Estimate",
    "FormattedEstimate",
    "McNemarResult",
    "MeanEstimate",
    "MultipleTestResult",
    "PairedEstimate",
    "TestResult",
    "VarianceBand",
    "VarianceComponents",
    "WelchEstimate",
    "WorstCaseBounds",
    "benjamini_hochberg",
    "bonferroni",
    "bootstrap",
    "clopper_pearson",
    "clustered_se",
    "decimals_supported",
    "format_estimate",
    "logit_t_interval",
    "mcnemar_exact",
    "min_detectable_effect",
    "paired",
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
