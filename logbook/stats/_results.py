"""Result types. All are frozen so a computed figure cannot be edited after the fact."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with a two-sided interval at ``confidence``.

    ``se`` is None where a standard error is not defined for the method.
    ``n`` is the number of observations the estimate rests on.
    """

    point: float
    se: float | None
    low: float
    high: float
    confidence: float
    method: str
    n: int


@dataclass(frozen=True, slots=True)
class MeanEstimate(Estimate):
    """Mean over runs (t interval); ``sd`` is the sample sd (ddof=1) of the values."""

    sd: float


@dataclass(frozen=True, slots=True)
class PairedEstimate(Estimate):
    """Effect b - a over the ``n`` complete pairs; ``n_dropped`` items were left out.

    ``pvalue`` is two-sided and agrees with the interval: it excludes 0 iff pvalue < 1 - confidence.
    """

    n_dropped: int
    pvalue: float


@dataclass(frozen=True, slots=True)
class WelchEstimate(Estimate):
    """Difference of means b - a with Welch's t: ``statistic``, ``pvalue``, ``df``."""

    statistic: float
    pvalue: float
    df: float | None


@dataclass(frozen=True, slots=True)
class ClusteredEstimate(Estimate):
    """Mean with a cluster-robust ``se``; ``naive_se`` assumes independent items.

    ``design_effect`` is the variance ratio (se / naive_se) ** 2, None when naive_se is 0.
    """

    naive_se: float
    design_effect: float | None
    n_clusters: int


@dataclass(frozen=True, slots=True)
class TestResult:
    """A hypothesis test: ``statistic`` and two-sided ``pvalue``."""

    __test__ = False  # not a pytest test class despite the name

    statistic: float
    pvalue: float


@dataclass(frozen=True, slots=True)
class McNemarResult(TestResult):
    """Exact McNemar test. ``statistic`` is min(b_better, a_better), as in statsmodels.

    ``b_better``: pairs where b scored 1 and a scored 0; ``a_better``: the reverse.
    """

    n: int
    b_better: int
    a_better: int


@dataclass(frozen=True, slots=True)
class WorstCaseBounds:
    """Effect b - a over all ``n`` items with the ``n_dropped`` incomplete ones imputed.

    ``worst`` scores every dropped item against the claimed ``direction``, ``best`` in its
    favour; ``low``/``high`` are the two sorted. ``complete_case`` is the effect over the
    complete pairs (None if there are none). With one run per side ``n_dropped`` counts the
    incomplete items; with several, every missing item-run.
    """

    worst: float
    best: float
    low: float
    high: float
    complete_case: float | None
    n: int
    n_dropped: int
    direction: int


@dataclass(frozen=True, slots=True)
class VarianceBand:
    """Run-to-run spread over ``k`` runs: a result inside mean ± band is a wobble.

    ``sd_rel_uncertainty`` ≈ 1/sqrt(2(k-1)) is the relative standard error of ``sd`` itself.
    """

    k: int
    mean: float
    sd: float
    band: float
    z: float
    observed_range: float
    sd_rel_uncertainty: float


@dataclass(frozen=True, slots=True)
class VarianceComponents:
    """Between-item and within-item variance of single scores (items sampled k_i times).

    ``mean`` is the mean of the item means (the benchmark score); ``var_mean`` =
    var(item means)/n_items its variance, which estimates (between + mean(within_i/k_i)) /
    n_items; ``dominant`` ("between" or "within") names the larger of the two contributions.
    """

    n_items: int
    n_scores: int
    k_mean: float
    mean: float
    between: float
    within: float
    var_mean: float
    se_mean: float
    dominant: str


@dataclass(frozen=True, slots=True)
class MultipleTestResult:
    """Adjusted p-values and reject decisions, in the order of the input."""

    pvalues_adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    alpha: float
    method: str


@dataclass(frozen=True, slots=True)
class FormattedEstimate:
    """Strings rounded to ``digits`` decimal places; ``str()`` gives "84.0 (82.1–85.6)"."""

    point: str
    low: str
    high: str
    digits: int

    def __str__(self) -> str:
        # An en dash between negative numbers reads as a minus sign; spell the range out.
        sep = " to " if self.low.startswith("-") or self.high.startswith("-") else "–"
        return f"{self.point} ({self.low}{sep}{self.high})"
