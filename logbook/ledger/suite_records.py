"""A suite file as `logbook suite FILE` reads it, made into the body of a `suite` entry
(logbook.model.suites): each split's ids (given inline, or one a line in ``ids_file`` beside
the suite file) named by their digest and counted, a `test` split's holdout said out loud
(one look), the suite's item count the splits' sum when the file gives none. The model then
checks the body like any other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logbook.errors import InputError
from logbook.format.splits import HELD_OUT_BY_DEFAULT, id_set_digest
from logbook.reading import read_bytes


def suite_body(value: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The suite entry body a suite file gives (``folder``: where ``ids_file`` paths start)."""
    body = dict(value)
    splits = body.get("splits")
    if splits is None:
        splits = {}
    if not isinstance(splits, dict):
        raise InputError("splits: must be a table of splits by name (e.g. [splits.test])")
    out: dict[str, Any] = {}
    for name, split in splits.items():
        if not isinstance(split, dict):
            raise InputError(f"splits.{name}: must be a table (ids or ids_file, holdout)")
        out[name] = _split(name, dict(split), folder)
    body["splits"] = out
    if "n_items" not in body and out:
        body["n_items"] = sum(s.get("n_items", 0) for s in out.values()
                              if isinstance(s.get("n_items"), int))
    return body


def _split(name: str, split: dict[str, Any], folder: Path) -> dict[str, Any]:
    if "ids_file" in split:
        if "ids" in split:
            raise InputError(f"splits.{name}: give ids or ids_file, not both")
        path = split.pop("ids_file")
        if not isinstance(path, str) or not path:
            raise InputError(f"splits.{name}.ids_file: must be a file's path")
        data = read_bytes(folder / path, f"splits.{name}.ids_file", kind="a list of item ids")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"splits.{name}.ids_file {path}: not UTF-8 text (one item id "
                             "a line)") from None
        split["ids"] = [line.strip() for line in text.splitlines() if line.strip()]
    ids = split.get("ids")
    if isinstance(ids, list) and all(isinstance(i, str) for i in ids):
        split.setdefault("n_items", len(ids))
        split.setdefault("items", id_set_digest(ids))
    if name == HELD_OUT_BY_DEFAULT and "holdout" not in split:
        split["holdout"] = {"looks": 1}
    return split
