"""The field's formats (`logbook export --format FORMAT`): one registry, one module per format.

``FORMATS`` maps each format to the module holding its ``EXPORTER``; a module is imported only
when its format is asked for, so an extra a format needs (pyarrow for Parquet) is needed only
then. Every exporter writes from a ``Selection`` (logbook.exports.selection): runs and plans
read from a ledger the command has just verified, each record carrying its entry's digest and
the ledger's origin, so that a reader can check it back with `logbook prove` or `verify`.
Exports are reproducible: the same ledger and selection give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from logbook.errors import EnvironmentProblem, InputError

FORMATS = {
    "csv": "logbook.exports.csv_file",
    "parquet": "logbook.exports.parquet_file",
    "in-toto": "logbook.exports.intoto",
    "hf": "logbook.exports.hf",
    "mlflow": "logbook.exports.mlflow_store",
}


@dataclass(frozen=True)
class Exporter:
    name: str
    summary: str  # one line for --help and the docs
    # "file": --out is a file (stdout when text and no --out); "folder": --out is a folder;
    # "store": --out is a folder or URI the format's own client writes into
    writes: str
    text: bool  # whether the file may go to standard output
    # the modules the format needs beyond the package set, and the extra that installs them
    needs: tuple[str, ...]
    extra: str | None
    # (selection, where, options) -> what was written, for the command to print
    write: Callable[[Any, Any, dict[str, Any]], str]
    signs: bool = False  # whether it signs with the ledger key


def exporter_for(name: str) -> Exporter:
    """The exporter of format ``name``; InputError naming the formats there are."""
    if name not in FORMATS:
        raise InputError(f"--format {name!r} is not a format logbook exports: "
                         f"{', '.join(['jsonl', 'sqlite', *FORMATS])}")
    found: Exporter = import_module(FORMATS[name]).EXPORTER
    return found


def check_needs(found: Exporter) -> None:
    """EnvironmentProblem (exit 3) when the extra the format needs is not installed: said
    after the command line was found sound (exit 2 comes first)."""
    name = found.name
    for module in found.needs:
        try:
            import_module(module)
        except ImportError as exc:
            raise EnvironmentProblem(
                f"--format {name} needs {module}, which is not installed: "
                f"pip install 'logbook[{found.extra}]'") from exc


def folder(path: str | None, name: str) -> Path:
    """The folder a folder-writing format writes into (made when missing)."""
    if path is None:
        raise InputError(f"--format {name} writes a folder: give it with --out DIR")
    where = Path(path)
    if where.exists() and not where.is_dir():
        raise InputError(f"--out {path}: --format {name} writes a folder, and this is a file")
    return where
