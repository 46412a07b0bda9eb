"""What the analysis reads of each run, worked out once from the run's checked bytes.

The audit's rules ask the same few things of every run in the ledger: its apparatus (as
dotted names), its score, how many items it scored and left missing, the spread of its item
scores, which items it lists, what its apparatus leaves unsaid. Reading them from each run's
body means parsing every run on every audit. Instead the analysis check works them out as it
checks each run's bytes (logbook.verify.integrity), keeps them with this machine's checked copy
of the ledger (logbook.storage.sqlite.read_model), and the analysis reads them from there
(logbook.analysis.view); a run of no facts (one this version cannot summarise) is read whole.

The figures are the ones the analysis would compute from the body: the score is the correctly
rounded mean (math.fsum, as logbook.stats._exact does), the variance the population variance
from that mean. A run whose items carry samples (Inspect epochs), or whose outcomes name a
reducer other than the mean, keeps its apparatus here and its figures in its body: its item
scores need the sample column and the reducer (logbook.format.reducers).

Pure Python; no numpy, nothing heavy: the check that computes these imports nothing heavy.
A caller that holds a long run's score column as an array already (the analysis, which needs
the array for its intervals) hands in `Figures` worked out from it, to the same bits
(logbook.analysis.run_view), instead of a second pass over the list here.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from logbook.format.apparatus import flatten, system_fields, system_gaps
from logbook.format.reducers import MEAN, reducer_of

# the layout of the facts (a checked copy of another version is made again)
FACTS_VERSION = 4
_SCORES = {int, float, bool, type(None)}
# from this many items up, scores of few distinct values are summed value by value (exact
# fractions: a few operations instead of one per item; slower below it)
BY_VALUE_FROM = 2048


@dataclass(frozen=True, slots=True)
class RunFacts:
    """One run's facts (see the module's docstring); ``figures`` False for a run whose item
    figures must come from its body (samples, a reducer), when score and the counts are None."""

    apparatus: dict[str, Any]  # the apparatus flattened (logbook.format.apparatus.flatten)
    # the fields that describe the system measured (not `is_identity`), sorted by name, as
    # JSON text [[name, value], ...]: runs of one system have the same text
    system: str
    metric: Any  # outcomes.metric
    gaps: tuple[str, ...]  # system_gaps of the body
    figures: bool
    score: float | None  # the mean of the scored items; None when none was scored
    variance: float  # the population variance of the scored items (0 when none)
    scored: int  # items with a score
    scores: int  # entries of the score column (scored or missing)
    binary: bool  # the score column is non-empty and every score is 0, 1 or missing
    # sha256 of the item ids as the run lists them: runs with the same text list the same
    # items in the same order (runs with other texts may still cover the same set of items)
    items: str
    # a binary run whose item scores are its score column (no samples, no reducer): the items
    # it scored and those it scored 1, as bit masks over its ids in order (bit i: the i-th
    # id); None otherwise. What the audit compares runs item by item with (A08, A29) without
    # reading them.
    masks: tuple[int, int] | None = None
    # an item of the run names its cluster (outcomes.cluster): what A26 reads the runs for
    clustered: bool = False
    # the digest of the run this one reproduces (body.reproduces), if any
    reproduces: str | None = None
    # what the run used (body.usage: tokens_in, tokens_out, wall_seconds, cost), the fields
    # it gives, as `usage_of` reads them; None when it records none
    usage: dict[str, Any] | None = None


class Figures(NamedTuple):
    """A score column's figures, as `RunFacts` keeps them."""

    scored: int
    score: float | None
    variance: float
    binary: bool
    masks: tuple[int, int] | None = None  # a binary column's, as masks_of gives them (None:
    # worked out here)


def facts_of(body: Any,
             figures: Callable[[list[Any]], Figures] | None = None) -> RunFacts | None:
    """The facts of a run's body; None for a body this version cannot summarise (an odd or
    hostile one: the analysis then reads that run whole).

    ``figures``: for a score column of at least BY_VALUE_FROM entries, each of them a number
    or None, the column's figures from the caller (who must give the very floats this module
    would: the correctly rounded mean, the population variance from it, summed exactly; and a
    binary column's masks as `masks_of` gives them, or None for this module to work out)."""
    try:
        return _facts(body, figures)
    except (TypeError, ValueError, AttributeError, OverflowError, orjson.JSONEncodeError):
        return None


def _facts(body: Any, figures: Callable[[list[Any]], Figures] | None) -> RunFacts | None:
    if type(body) is not dict:
        return None
    for name in ("plan", "arm", "session"):
        if body.get(name) is not None and type(body.get(name)) is not str:
            return None  # the index keeps such a field as NULL: the body says otherwise
    if type(body.get("status")) is not str:
        return None
    app = body.get("apparatus") or {}
    if type(app) is not dict:
        return None
    oc = body.get("outcomes") or {}
    if type(oc) is not dict:
        return None
    flat = flatten(app)
    system = orjson.dumps(system_fields(flat)).decode()
    metric = oc.get("metric")
    ids, raw = oc.get("id") or [], oc.get("score") or []
    if type(ids) is not list or type(raw) is not list:
        return None
    items = items_digest(ids)
    cl = oc.get("cluster")
    clustered = bool(cl) and any(c is not None for _i, c in zip(ids, cl or [], strict=False))
    gaps = tuple(system_gaps(body))
    reproduces = body.get("reproduces")
    if reproduces is not None and type(reproduces) is not str:
        return None
    usage = usage_of(body)
    reduced = bool(oc.get("sample")) or reducer_of(oc) != MEAN  # item scores need a reducer
    if figures is not None and len(raw) >= BY_VALUE_FROM and not reduced:
        if not set(map(type, raw)) <= _SCORES:
            return None
        n, score, variance, binary, masks = figures(raw)
        if binary and masks is None:
            masks = masks_of(raw)
        return RunFacts(flat, system, metric, gaps, True, score, variance, n, len(raw),
                        binary, items, masks if binary else None, clustered, reproduces, usage)
    # few distinct scores (0/1 items, a rubric's levels): the sums are worked out per value
    head = set(raw[:256])
    few = head if len(raw) <= 256 else set(raw) if len(head) <= 16 else None
    # (more than 16 distinct scores among the first 256 are not 0, 1 and missing alone)
    binary = few is not None and bool(raw) and all(s in (0, 1, None) for s in few)
    if reduced:
        return RunFacts(flat, system, metric, gaps, False, None, 0.0, 0, len(raw), binary, items,
                        None, clustered, reproduces, usage)
    if not set(map(type, raw if few is None else few)) <= _SCORES:
        return None
    plain = few is not None and not any(s == 0 and math.copysign(1.0, s) < 0
                                        for s in few if s is not None)  # no -0.0 alone
    masks = masks_of(raw) if binary else None
    if masks is not None and plain:
        # 0/1 items: the counts give the sums exactly (math.fsum of each term, as below)
        n, k = masks[0].bit_count(), masks[1].bit_count()
        score, variance = None, 0.0
        if n:
            score = k / n
            zero, one = (0.0 - score) * (0.0 - score), (1.0 - score) * (1.0 - score)
            variance = math.fsum([one] * k + [zero] * (n - k)) / n
    elif few is not None and plain and len(raw) >= BY_VALUE_FROM and len(few) <= 64:
        n, score, variance = _by_value(raw)
    else:
        values = [float(s) for s in raw if s is not None]
        n = len(values)
        score, variance = None, 0.0
        if n:
            score = math.fsum(values) / n
            variance = math.fsum([(v - score) * (v - score) for v in values]) / n
    return RunFacts(flat, system, metric, gaps, True, score, variance, n, len(raw), binary, items,
                    masks, clustered, reproduces, usage)


_COUNTS = ("tokens_in", "tokens_out")


def usage_of(body: Any) -> dict[str, Any] | None:
    """A run body's usage as the analysis sums it: the fields of ``body.usage`` it gives, each
    of its type (a count an int, wall_seconds a number, cost an {amount, currency}); None when
    it records none of them."""
    raw = body.get("usage") if type(body) is dict else None
    if type(raw) is not dict:
        return None
    out: dict[str, Any] = {}
    for key in _COUNTS:
        if type(raw.get(key)) is int and raw[key] >= 0:
            out[key] = raw[key]
    wall: Any = raw.get("wall_seconds")
    if type(wall) in (int, float) and math.isfinite(wall) and wall >= 0:
        out["wall_seconds"] = float(wall)
    cost = raw.get("cost")
    if type(cost) is dict and type(cost.get("currency")) is str \
            and type(cost.get("amount")) in (int, float) and math.isfinite(cost["amount"]) \
            and cost["amount"] >= 0:
        out["cost"] = {"amount": float(cost["amount"]), "currency": cost["currency"]}
    return out or None


# a binary score as one letter (True, 1.0 and 1 are one key; so are False, 0.0 and -0.0),
# then that letter as its digit in each mask
_LETTER = {None: "n", 0: "z", 1: "o"}
_SCORED_DIGITS = str.maketrans("nzo", "011")
_ONE_DIGITS = str.maketrans("nzo", "001")


def masks_of(raw: list[Any]) -> tuple[int, int]:
    """(scored, scored 1) of a binary score column as bit masks (bit i: the i-th score)."""
    letters = "".join(map(_LETTER.__getitem__, reversed(raw))) or "n"
    return int(letters.translate(_SCORED_DIGITS), 2), int(letters.translate(_ONE_DIGITS), 2)


def items_digest(ids: list[Any]) -> str:
    """sha256 of the item ids as JSON (`RunFacts.items`); for a list `shared_ids` named, the
    digest kept with it."""
    kept = _shared.get(id(ids))
    if kept is not None and kept[0] is ids:
        return kept[1]
    return hashlib.sha256(orjson.dumps(ids)).hexdigest()


def shared_ids(ids: list[Any], digest: str) -> None:
    """Keep ``digest`` (items_digest's) with ``ids``: the list runs of one suite share once
    checked (logbook.verify.stored.Keep), whose digest the runs' facts then take instead of
    encoding the ids once per run. Bodies are never changed once parsed; the list is held (so
    its id is not reused) among the last SHARED_KEPT named, which bounds what outlives the
    command's own reads."""
    if len(_shared) >= SHARED_KEPT:
        with suppress(KeyError, RuntimeError, StopIteration):  # another thread's first
            del _shared[next(iter(_shared))]  # the oldest
    _shared[id(ids)] = (ids, digest)


SHARED_KEPT = 4  # suites
_shared: dict[int, tuple[list[Any], str]] = {}


def _by_value(raw: list[Any]) -> tuple[int, float | None, float]:
    """(scored, mean, population variance) of scores that take few distinct values: each
    sum is the exact sum of every (float) term, correctly rounded once, as math.fsum over
    all of them gives it (a count times a float is exact as a fraction)."""
    from fractions import Fraction

    counts = Counter(raw)
    counts.pop(None, None)
    floats: dict[float, int] = {}
    for s, c in counts.items():  # 1, 1.0 and True are one key already; so are their floats
        floats[float(s)] = floats.get(float(s), 0) + c
    n = sum(floats.values())
    if not n:
        return 0, None, 0.0
    mean = float(sum(Fraction(x) * c for x, c in floats.items())) / n
    spread = sum(Fraction((x - mean) * (x - mean)) * c for x, c in floats.items())
    return n, mean, float(spread) / n


def encode(facts: RunFacts | None) -> str | None:
    """The facts as the checked copy keeps them (JSON text), None for none."""
    if facts is None:
        return None
    try:
        masks = None if facts.masks is None else [f"{m:x}" for m in facts.masks]
        return orjson.dumps([facts.apparatus, facts.system, facts.metric, list(facts.gaps),
                             facts.figures, facts.score, facts.variance, facts.scored,
                             facts.scores, facts.binary, facts.items, masks,
                             facts.clustered, facts.reproduces, facts.usage]).decode()
    except (TypeError, orjson.JSONEncodeError):  # an integer past 64 bits: read whole
        return None


_NO_USAGE = ",null]"
_HEX = frozenset("0123456789abcdef")


def reproduces_in_text(text: str) -> tuple[bool, str | None]:
    """(True, what the run reproduces) read off the end of `encode`'s text, or (False,
    None) when it cannot be read so. The text is a JSON array written without spaces whose
    last elements are `reproduces` (null or a string) and `usage` (null or an object): with no
    usage it ends `,null,null]` (reproduces none) or `,"DIGEST",null]`, a digest being 64 hex
    digits (an unescaped quote only ever opens or closes a string, so these ends say no more
    than decoding would). A run that records its usage is decoded instead."""
    if not text.endswith(_NO_USAGE):
        return False, None
    if text.endswith(",null" + _NO_USAGE):
        return True, None
    end = len(text) - len(_NO_USAGE)
    if text[end - 67:end - 65] == ',"' and text[end - 1] == '"' \
            and _HEX.issuperset(text[end - 65:end - 1]):
        return True, text[end - 65:end - 1]
    return False, None


def decode(text: str | bytes | RunFacts | None) -> RunFacts | None:
    """The facts `encode` wrote (or facts as they are); None for none, or for text that does
    not hold them."""
    if text is None or isinstance(text, RunFacts):
        return text
    try:
        (app, system, metric, gaps, figures, score, variance, scored, scores, binary,
         items, masks, clustered, reproduces, usage) = orjson.loads(text)
        if masks is not None:
            masks = (int(masks[0], 16), int(masks[1], 16))
        if type(app) is not dict or type(gaps) is not list or type(items) is not str or (
                reproduces is not None and type(reproduces) is not str) or (
                usage is not None and type(usage) is not dict) or type(
                metric) not in _SCALARS or not _system_text(system) or not _SCALARS.issuperset(
                map(type, app.values())) or not _STR.issuperset(map(type, gaps)):
            return None  # what flatten, system_fields and system_gaps never make
        found = RunFacts(app, system, metric, tuple(gaps), bool(figures),
                         None if score is None else float(score), float(variance), int(scored),
                         int(scores), bool(binary), items, masks, bool(clustered), reproduces,
                         usage)
        if not (0 <= found.scored <= found.scores and 0.0 <= found.variance < math.inf) or (
                found.score is not None and not math.isfinite(found.score)):
            return None
        return found
    except (orjson.JSONDecodeError, TypeError, ValueError, IndexError, KeyError,
            OverflowError):
        return None  # facts of another shape (a damaged copy): the run is read whole


_SCALARS = frozenset({str, int, float, bool, type(None)})
_STR = frozenset({str})


@functools.lru_cache(maxsize=4096)
def _system_text(text: Any) -> bool:
    """Whether ``text`` is a `RunFacts.system`: JSON text of [[name, scalar], ...] (once for
    all the runs of one system)."""
    try:
        pairs = orjson.loads(text) if type(text) is str else None
    except orjson.JSONDecodeError:
        return False
    return type(pairs) is list and all(
        type(p) is list and len(p) == 2 and type(p[0]) is str and type(p[1]) in _SCALARS
        for p in pairs)


def _name(pair: tuple[str, Any]) -> str:
    return pair[0]
