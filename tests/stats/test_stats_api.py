"""The package surface: exports, purity (numpy/scipy only, scipy lazily), frozen results."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import logbook.stats as st

PACKAGE = Path(st.__file__).parent
TOP_LEVEL_ALLOWED = {
    "__future__",
    "math",
    "functools",  # lru_cache over pure functions (_dist.py, _stream.py)
    "numbers",
    "statistics",  # the standard library's NormalDist, in _dist.py
    "collections",
    "dataclasses",
    "typing",
    "numpy",
}


def test_every_public_name_is_exported() -> None:
    assert sorted(st.__all__) == sorted(set(st.__all__))
    for name in st.__all__:
        obj = getattr(st, name)
        assert obj.__doc__, f"{name} has no docstring"
    functions = {n for n in st.__all__ if inspect.isfunction(getattr(st, n))}
    assert functions == {
        "wilson", "clopper_pearson", "t_interval", "bootstrap", "clustered_se", "paired",
        "worst_case_bounds", "mcnemar_exact", "welch", "variance_band", "sample_size",
        "min_detectable_effect", "bonferroni", "benjamini_hochberg", "pass_at_k",
        "pass_at_k_items", "logit_t_interval", "format_estimate", "decimals_supported",
        "variance_components", "paired_over_runs", "newcombe_paired", "cluster_check",
    }  # fmt: skip


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_module_imports_are_pure_and_scipy_is_lazy(path: Path) -> None:
    tree = ast.parse(path.read_text())
    assert len(path.read_text().splitlines()) <= 300, "keep modules small"
    for node in tree.body:  # module level only: function bodies may import scipy
        if isinstance(node, ast.Import):
            roots = {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: must stay inside logbook.stats
                assert node.level == 1, f"{path.name} imports from outside the stats package"
                continue
            roots = {(node.module or "").split(".")[0]}
        else:
            continue
        assert roots <= TOP_LEVEL_ALLOWED, f"{path.name} imports {roots} at module level"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level:
            assert not (node.module or "").startswith("logbook"), path.name
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("logbook") for a in node.names), path.name


def test_import_does_not_load_scipy() -> None:
    # Compare against importing the parent package, so other modules' imports do not count.
    code = (
        "import sys, logbook; before = set(sys.modules); import logbook.stats; "
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] == 'scipy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_results_are_frozen_dataclasses() -> None:
    for name in st.__all__:
        obj = getattr(st, name)
        if inspect.isclass(obj):
            assert dataclasses.is_dataclass(obj) and obj.__dataclass_params__.frozen, name
    r = st.t_interval([0.1, 0.2, 0.3])
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.point = 1.0  # type: ignore[misc]
    assert {f.name for f in dataclasses.fields(r)} >= {
        "point",
        "se",
        "low",
        "high",
        "confidence",
        "method",
        "n",
        "sd",
    }
