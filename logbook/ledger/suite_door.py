"""Suites at the door (docs/recording.md, "Suites and held-out splits"): a suite entry names
a suite and version once; a plan that names a suite entry's split agrees with it; a run that
names a split of a suite entry holds only that split's items. And the filling in of a plan's
suite and of a run's `--suite`/`--split` from the suite entry, before they are signed.

Each refusal is one InputError naming the field; nothing is written."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from logbook.errors import InputError
from logbook.storage.base import EntryLog

Suite = tuple[int, dict[str, Any]]  # (seq, body) of a suite entry


def stored_suites(reads: EntryLog) -> list[Suite]:
    """Every suite entry, oldest first (a ledger holds few)."""
    return [(s.seq, dict(orjson.loads(s.entry)["body"]))
            for s in reads.entries_where(kind="suite")]


def find(suites: Iterable[Suite], name: str, version: str | None, field: str) -> Suite | None:
    """The suite entry of ``name`` (and ``version``, when given): None when the ledger names
    no suite so; with no version and several versions, InputError naming ``field``."""
    mine = [s for s in suites if s[1].get("name") == name
            and (version is None or s[1].get("version", "") == version)]
    if len(mine) > 1:
        versions = ", ".join(repr(s[1].get("version", "")) for s in mine)
        raise InputError(f"{field}: suite {name!r} has {len(mine)} versions ({versions}): "
                         "name the version")
    return mine[0] if mine else None


def admit_suite(at: Any, body: dict[str, Any]) -> None:
    """A suite's name and version are named once: a changed suite is a new version."""
    name, version = body["name"], body.get("version", "")
    for seq, other in stored_suites(at.reads):
        if other.get("name") == name and other.get("version", "") == version:
            raise InputError(f"body.version: suite {name!r} version {version!r} is already "
                             f"entry @{seq}; a changed suite needs a new version")


def admit_plan(at: Any, body: dict[str, Any]) -> None:
    """A plan naming a split names a split of a suite entry, and agrees with the entry on the
    suite's identity and the split's size."""
    suite = body.get("suite") or {}
    split = suite.get("split")
    found = find(stored_suites(at.reads), str(suite.get("name")), suite.get("version", ""),
                 "body.suite.version")
    if found is None:
        if split is not None:
            raise InputError(f"body.suite.split: no suite entry names suite "
                             f"{suite.get('name')!r} version {suite.get('version', '')!r}; "
                             "append it first (`logbook suite FILE`)")
        return
    seq, entry = found
    if split is not None and split not in (entry.get("splits") or {}):
        raise InputError(f"body.suite.split: suite {entry['name']!r} (@{seq}) has no split "
                         f"{split!r} (its splits: {sorted(entry.get('splits') or {})})")
    want = entry["splits"][split]["n_items"] if split is not None else entry["n_items"]
    if suite.get("n_items") != want:
        raise InputError(f"body.suite.n_items: the suite entry @{seq} gives "
                         f"{'split ' + repr(split) if split else 'the suite'} {want} items, "
                         f"the plan {suite.get('n_items')}")
    mine, theirs = suite.get("dataset_hash"), entry.get("dataset_hash")
    if mine and theirs and mine != theirs:
        raise InputError(f"body.suite.dataset_hash: the suite entry @{seq} gives {theirs}, "
                         f"the plan {mine}")


def check_run_split(at: Any, body: dict[str, Any], plan: dict[str, Any] | None) -> None:
    """A run on a split of a suite entry: the split exists, agrees with its plan's, and holds
    every item the run scored (when the entry lists the split's ids)."""
    app: dict[str, Any] = body["apparatus"] if isinstance(body.get("apparatus"), dict) \
        else {}
    declared = (plan or {}).get("suite") or {}
    split = app.get("split")
    if plan is not None and declared.get("split") is not None and split is not None \
            and split != declared["split"]:
        raise InputError(f"body.apparatus.split: the run says {split!r}, its plan's suite "
                         f"split is {declared['split']!r}")
    split = split if split is not None else declared.get("split")
    name = app.get("suite") if app.get("suite") is not None else declared.get("name")
    if not isinstance(split, str) or not isinstance(name, str):
        return
    version = declared.get("version", "") if plan is not None else None
    suites = stored_suites(at.reads)
    found = find(suites, name, version, "body.apparatus.suite") if version is not None \
        else latest(suites, name, app.get("dataset_hash"), app.get("suite_version"))
    if found is None:
        return  # a suite the ledger does not name: the run's words alone
    seq, entry = found
    splits = entry.get("splits") or {}
    if split not in splits:
        raise InputError(f"body.apparatus.split: suite {name!r} (@{seq}) has no split "
                         f"{split!r} (its splits: {sorted(splits)})")
    ids = splits[split].get("ids")
    if ids is None:
        return
    held = set(ids)
    outside = [i for i in ((body.get("outcomes") or {}).get("id") or []) if i not in held]
    if outside:
        raise InputError(f"body.outcomes.id: item {outside[0]!r} is not in split {split!r} "
                         f"of suite {name!r} (@{seq}; {len(outside)} item row(s) outside it)")


def latest(suites: Iterable[Suite], name: str, dataset_hash: Any = None,
           version: Any = None) -> Suite | None:
    """The suite entry a run names by ``name``: the one of its ``suite_version``, else of its
    dataset hash, else the latest version."""
    mine = [s for s in suites if s[1].get("name") == name]
    if isinstance(version, str):
        return next((s for s in mine if s[1].get("version", "") == version), None)
    same = [s for s in mine if dataset_hash and s[1].get("dataset_hash") == dataset_hash]
    return (same or mine)[-1] if mine else None


def complete_plan(suites: list[Suite], body: dict[str, Any]) -> dict[str, Any]:
    """A plan file's suite filled in from the suite entry it names: ``suite = "NAME"`` or
    ``suite = "NAME:SPLIT"``, or a table with ``name`` (and ``split``, ``version``) and no
    ``n_items``, takes version, dataset hash, item count (the split's) and cluster field from
    the entry. A suite given in full is left as written (the door holds it to the entry)."""
    suite = body.get("suite")
    if isinstance(suite, str):
        name, _, named = suite.partition(":")
        suite = {"name": name, **({"split": named} if named else {})}
    if not isinstance(suite, dict) or "n_items" in suite or not isinstance(suite.get("name"),
                                                                          str):
        return body
    version = suite.get("version")
    found = find(suites, str(suite["name"]), version if isinstance(version, str) else None,
                 "suite.version")
    if found is None:
        raise InputError(f"suite: no suite entry names {suite['name']!r}"
                         + (f" version {version!r}" if version is not None else "")
                         + "; append it first (`logbook suite FILE`) or give the suite's "
                         "n_items")
    seq, entry = found
    part = suite.get("split")
    splits = entry.get("splits") or {}
    if part is not None and part not in splits:
        raise InputError(f"suite.split: suite {entry['name']!r} (@{seq}) has no split "
                         f"{part!r} (its splits: {sorted(splits)})")
    filled = {"name": entry["name"], "version": entry.get("version", ""),
              "n_items": splits[part]["n_items"] if part is not None else entry["n_items"]}
    for key in ("dataset_hash", "cluster_field"):
        if entry.get(key) is not None:
            filled[key] = entry[key]
    return {**body, "suite": {**filled, **suite, "n_items": filled["n_items"]}}


def run_fields(suites: list[Suite], suite: str | None, split: str | None) -> dict[str, Any]:
    """What `--suite NAME[@VERSION]` and `--split NAME` put in a run's apparatus (``suite``,
    ``suite_version`` when the entry has one, ``split``), checked against the suite entry.
    Not its dataset hash: that is the harness's to say, and the door compares them."""
    if suite is None:
        if split is not None:
            raise InputError("--split goes with --suite (the suite whose split it is)")
        return {}
    name, _, version = suite.partition("@")
    found = find(suites, name, version or None, "--suite")
    if found is None:
        raise InputError(f"--suite: no suite entry names {name!r}"
                         + (f" version {version!r}" if version else "")
                         + " (append it with `logbook suite FILE`)")
    seq, entry = found
    splits = entry.get("splits") or {}
    if split is not None and split not in splits:
        raise InputError(f"--split: suite {name!r} (@{seq}) has no split {split!r} (its "
                         f"splits: {sorted(splits)})")
    out: dict[str, Any] = {"suite": name}
    if entry.get("version"):
        out["suite_version"] = entry["version"]
    if split is not None:
        out["split"] = split
    return out


def suites_of(ledger: Any) -> list[Suite]:
    """Every suite entry of an open Ledger, oldest first."""
    return [(e.seq, e.body) for e in ledger.log(kind="suite")]


def with_suite(declared: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """``declared`` apparatus with `--suite`/`--split`'s ``fields``; InputError when the
    declared apparatus already says otherwise."""
    for key, value in fields.items():
        if key in declared and declared[key] != value:
            raise InputError(f"--{'split' if key == 'split' else 'suite'}: the declared "
                             f"apparatus says {key} {declared[key]!r}, the option "
                             f"{value!r}")
    return {**declared, **fields}
