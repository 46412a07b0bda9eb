"""Reading one Inspect AI log (``.eval`` zip archive or ``.json``) into its header and its
samples, each reduced to id, epoch, scores, error and the hashes of its input and target
(logbook.ingest.inspect makes the runs of them).

``.eval`` members are Zstandard-compressed (zip method 93), which :mod:`zipfile` cannot
decompress: logbook's own reader (logbook.ingest._eval_zip) takes names, offsets and sizes from
the zip directory and decompresses with ``zstandard``; it reads every log version this adapter
takes, ten times faster than ``inspect_ai.log.read_eval_log``, which is used only when asked
for (``reader="inspect_ai"``, to hold the two to the same runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from logbook.ingest._common import (
    as_dict,
    as_list,
    check_depth,
    check_text,
    fail,
    item_id,
    load_json_file,
    loads,
    shown,
    whole,
)
from logbook.ingest._eval_zip import INSTALL_HINT, EvalArchive, check_before_reading
from logbook.ingest.inspect_source import sample_digests
from logbook.ingest.traces import inspect_kept

SUPPORTED_VERSIONS = frozenset({2})
# Inspect's epochs are a handful: a bound, so that a damaged count cannot exhaust memory
MAX_EPOCHS = 10_000
Reader = Literal["auto", "inspect_ai", "zstd"]
Log = tuple[dict[str, Any], list[dict[str, Any]]]  # header without samples, minimal samples


def read_log(path: Path, *, reader: Reader = "auto") -> Log:
    """(header, samples) of one log; samples are reduced to id, epoch, scores, error and the
    hashes of their input and target."""
    if reader == "inspect_ai":
        header, samples = _read_with_inspect_ai(path)
    elif path.suffix == ".json":
        doc = load_json_file(path)
        if not isinstance(doc, dict):
            raise fail(path, "expected a JSON object (an Inspect log)")
        raw = doc.pop("samples", None)
        header, samples = doc, [_sample(path, s, i) for i, s in enumerate(as_list(raw))]
    else:
        header, samples = _read_eval_zip(path)
    version = header.get("version")
    if "eval" in header and not _supported(version):
        raise fail(path, f"field version is {shown(version)}; supported Inspect log versions: "
                         f"{', '.join(map(str, sorted(SUPPORTED_VERSIONS)))}")
    check_depth(header, str(path))  # its values are hashed and copied into the run
    return header, samples


def _supported(version: Any) -> bool:
    """True for a log version this reader knows (an integer: a list or object is not)."""
    return whole(version, 0, max(SUPPORTED_VERSIONS)) in SUPPORTED_VERSIONS


def _read_with_inspect_ai(path: Path) -> Log:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise fail(path, f"reading Inspect logs needs inspect_ai: {INSTALL_HINT}") from None
    if not path.is_file():
        raise fail(path, "file not found")
    check_before_reading(path)  # inspect_ai inflates and loads a log whole
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # any failure of Inspect's reader is a problem with this file
        detail = " ".join(str(exc).split())[:300]
        raise fail(path, f"Inspect could not read this log ({type(exc).__name__}: {detail})") \
            from None
    header = log.model_dump(mode="json", exclude={"samples"})
    samples = [{"id": s.id, "epoch": s.epoch,
                "scores": {k: {"value": v.value, "answer": v.answer,
                               "explanation": v.explanation}
                           for k, v in (s.scores or {}).items()},
                "error": s.error.message if s.error else None,
                **s.model_dump(mode="json", exclude_none=True,
                               include={"input", "target", "output"})}
               for s in log.samples or []]
    check_text(header, str(path))  # as loads does for the other readers
    for i, sample in enumerate(samples):
        check_text(sample, f"{path}: sample {i}")
    return header, [_sample(path, s, i) for i, s in enumerate(samples)]


def _read_eval_zip(path: Path) -> Log:
    """Read a ``.eval`` archive with the zipfile + zstandard reader."""
    with EvalArchive(path) as archive:

        def member(name: str) -> Any:
            return loads(archive.read(name), f"{path}: member {name}")

        if "header.json" in archive.infos:
            header = member("header.json")
        elif "_journal/start.json" in archive.infos:  # never finished: no header was written
            header = {"status": "started", **as_dict(member("_journal/start.json"))}
        else:
            raise fail(path, "has neither header.json nor _journal/start.json")
        if not isinstance(header, dict):
            raise fail(path, "member header.json is not a JSON object")
        if not _supported(header.get("version")):
            return header, []  # read_log reports the version
        names = [n for n in archive.infos if n.startswith("samples/") and n.endswith(".json")]
        return header, [_sample(path, member(n), n) for n in names]


def _sample(path: Path, raw: Any, where: int | str) -> dict[str, Any]:
    """id, epoch, scores, error message and input and target hashes of one logged sample."""
    label = f"sample {where}" if isinstance(where, int) else f"member {where}"
    if not isinstance(raw, dict):
        raise fail(path, f"{label}: expected a JSON object")
    sid, epoch = item_id(raw.get("id")), raw.get("epoch", 1)
    if sid is None:
        raise fail(path, f"{label}: field id is missing or not an id")
    if whole(epoch, 0, MAX_EPOCHS) is None:
        raise fail(path, f"{label}: field epoch is not a whole number from 0 to {MAX_EPOCHS}")
    given, target = sample_digests(raw)
    return {"id": sid, "epoch": epoch, "scores": as_dict(raw.get("scores")),
            "error": error_text(raw.get("error")), "input": given, "target": target,
            "trace": inspect_kept(raw)}


def error_text(error: Any) -> str | None:
    """An Inspect error (an object with a message, or a bare message) as text; None if none."""
    if isinstance(error, dict):
        error = error.get("message") or "error"
    if not error:
        return None
    return error if isinstance(error, str) else shown(error)
