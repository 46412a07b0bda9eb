"""One run as analysis reads it (`RunView`): its index fields and facts at hand, its entry read
when first asked for; the system its apparatus describes (`System`), shared by every run of
that system; a pass over runs that lets each go after its turn (`one_at_a_time`). Runs are
lined up item by item in logbook.analysis.item_arrays."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from logbook.format.apparatus import flatten, system_fields, system_gaps, temperature_of
from logbook.format.runfacts import Figures, RunFacts, decode, facts_of, reproduces_in_text
from logbook.ledger.entry import Entry


@dataclass(frozen=True)
class System:
    """What analysis compares of a run's system (its non-identity apparatus fields, by name):
    shared by every run of one system."""

    compared: dict[str, str]  # name -> repr of the value
    pairs: tuple[tuple[str, str], ...]  # the same, as sorted pairs: the apparatus key's
    temperature: float | None

    @classmethod
    def of(cls, fields: list[tuple[str, Any]]) -> System:
        compared = {str(k): repr(v) for k, v in fields}
        return cls(compared, tuple(compared.items()), temperature_of(fields))


@lru_cache(maxsize=4096)
def _system_of(text: str) -> System:
    """The `System` of a run's facts (RunFacts.system, its fields sorted by name): once for
    all the runs of one system."""
    return System.of([(str(k), v) for k, v in orjson.loads(text)])


class RunView:
    """One run as analysis reads it. Its index fields (seq, digest, plan, arm, status,
    session) and its facts (logbook.format.runfacts: apparatus, score, counts) are at hand;
    its entry (the body, the item columns) is read only when something asks for it: after a
    check resumed from this machine's checked copy, the audit's rules never do for a run with
    facts, so a large ledger's runs are never parsed again (logbook.verify.checked_reads holds
    an entry read later to its checked digest).

    A large ledger has a hundred thousand of these, each asked for its facts, score and
    system many times over: their fields are slots, and what is worked out on first use
    (`_LAZY`: the entry, the facts, the apparatus, ...) is kept in its own slot, which
    `__getattr__` fills the first time it is read unset; every later read is a plain slot's
    (the audit's rules read them a couple of million times on a ledger of 100,000 runs)."""

    __slots__ = (
        "_facts_text",
        "_load",
        "_system",
        "admitted",
        "apparatus",
        "arm",
        "clusters",
        "digest",
        "entry",
        "facts",
        "item_arrays",
        "pass_k",
        "plan",
        "retracted_by",
        "score",
        "seq",
        "session",
        "status",
    )
    # worked out on first use (``__getattr__``)
    _system: System
    apparatus: dict[str, Any]
    clusters: dict[str, str]
    entry: Entry
    facts: RunFacts | None
    item_arrays: tuple[list[str], Any]  # (item ids, numpy array of item scores)
    score: float | None

    def __init__(self, seq: int, digest: str, plan: str | None, arm: str | None, status: str,
                 session: str | None, retracted_by: list[Entry] | None = None,
                 pass_k: int | None = None, *, entry: Entry | None = None,
                 facts: RunFacts | None = None, facts_text: str | None = None,
                 load: Callable[[int], Entry] | None = None) -> None:
        self.seq, self.digest, self.plan, self.arm = seq, digest, plan, arm
        self.admitted: Entry | None = None  # the admission that counts it in plan and arm
        self.status, self.session = status, session
        self.retracted_by = retracted_by if retracted_by is not None else []
        self.pass_k = pass_k  # the plan's k when its metric is pass@k
        self._load = load
        self._facts_text = facts_text  # the facts as the checked copy keeps them, decoded
        if entry is not None:  # otherwise read when first asked for
            self.entry = entry
        if facts is not None:
            self.facts = facts

    def __getattr__(self, name: str) -> Any:
        """A lazy slot read before it is filled: worked out now and kept (`_LAZY`)."""
        make = _LAZY.get(name)
        if make is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = make(self)
        setattr(self, name, value)
        return value

    @classmethod
    def of(cls, entry: Entry, retracted_by: list[Entry] | None = None,
           pass_k: int | None = None, facts: RunFacts | None = None) -> RunView:
        """The run of a parsed entry (its fields read from the body, as the index reads
        them for a well-formed run)."""
        body = entry.body
        return cls(entry.seq, entry.digest, body.get("plan"), body.get("arm"),
                   str(body.get("status")), body.get("session"), retracted_by, pass_k,
                   entry=entry, facts=facts)

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """What a copy (or a pickle) carries: the slots that hold a value, a lazy one not
        worked out yet left unset (the default state reads every slot by name, which would
        work out each lazy one through `__getattr__`)."""
        state = {}
        for slot, held in _SLOTS.items():
            try:
                state[slot] = held.__get__(self, RunView)
            except AttributeError:
                continue
        return None, state

    def counted_by(self, admission: Entry, pass_k: int | None) -> RunView:
        """The same run counted in the plan and arm an admission names (its body still says
        what it was appended as)."""
        twin = copy.copy(self)
        twin.plan, twin.arm = admission.body.get("plan"), admission.body.get("arm")
        twin.pass_k, twin.admitted = pass_k, admission
        return twin

    def unretracted(self) -> RunView:
        """The same run as if nothing had retracted it."""
        twin = copy.copy(self)
        twin.retracted_by = []
        return twin

    def __repr__(self) -> str:
        return f"RunView(seq={self.seq}, digest={self.digest[:12]}, arm={self.arm!r})"

    @property
    def loaded(self) -> bool:
        """Whether the entry is at hand (read, or given)."""
        return _filled(self, "entry")

    def forget(self) -> None:
        """Let the entry go when it can be read again (a pass over every run's items then
        holds one plan's runs at a time, not the ledger's)."""
        if self._load is not None and self.loaded:
            del self.entry
            for slot in ("item_arrays", "clusters"):
                if _filled(self, slot):
                    delattr(self, slot)

    def _entry(self) -> Entry:
        if self._load is None:
            raise LookupError(f"run @{self.seq} has no entry to read")
        return self._load(self.seq)

    @property
    def body(self) -> dict[str, Any]:
        return self.entry.body

    def _facts(self) -> RunFacts | None:
        """logbook.format.runfacts of the body (None for a body it cannot summarise); a long
        score column's figures from the item array, which the analysis builds anyway. The
        checked copy's text of them, when the run came from it, decoded instead."""
        if self._facts_text is not None:
            kept = decode(self._facts_text)
            if kept is not None:
                return kept
        return facts_of(self.body, None if self.pass_k else self._array_figures)

    def _array_figures(self, raw: list[Any]) -> Figures:
        """The figures of the score column (``raw``, as `item_arrays` reads it), to the bits
        logbook.format.runfacts gives: xsum is math.fsum's correctly rounded sum, and each
        squared deviation is the same IEEE product."""
        from fractions import Fraction

        import numpy as np

        from logbook.stats._exact import xsum

        values = self.item_arrays[1]  # ``raw`` as floats: no samples, no pass@k here
        scored = ~np.isnan(values)
        present = values[scored]
        n = int(present.size)
        ones = int(np.count_nonzero(present == 1.0))
        binary = bool(values.size) and ones + int(np.count_nonzero(present == 0.0)) == n
        # a binary column's masks (runfacts.masks_of's bits: bit i, the i-th score)
        masks = (_bits(scored), _bits(values == 1.0)) if binary else None
        if not n:
            return Figures(0, None, 0.0, binary, masks)
        if binary:  # the sums are exact in integers: the mean, and ones * (1 - mean)² +
            score = ones / n  # zeros * mean², each square the same IEEE product as below
            spread = Fraction((1.0 - score) * (1.0 - score)) * ones + Fraction(
                (0.0 - score) * (0.0 - score)) * (n - ones)
            return Figures(n, score, float(spread) / n, True, masks)
        score = xsum(present) / n
        d = present - score
        return Figures(n, score, xsum(d * d) / n, False)

    @property
    def reproduces(self) -> str | None:
        """The digest of the run this one reproduces (body.reproduces), from its facts when
        its entry is not read: read off the end of the checked copy's text of them while they
        are not decoded, when it can be (runfacts.reproduces_in_text; the reproductions of one
        plan ask it of every run)."""
        if not self.loaded and self._facts_text is not None and not _filled(self, "facts"):
            read, target = reproduces_in_text(self._facts_text)
            if read:
                return target
        f = self.facts if not self.loaded else None
        if f is not None:
            return f.reproduces
        value = self.body.get("reproduces")
        return value if isinstance(value, str) else None

    @property
    def usage(self) -> dict[str, Any] | None:
        """What the run used (logbook.format.runfacts.usage_of: tokens_in, tokens_out,
        wall_seconds, cost), from its facts when its entry is not read; None: none recorded."""
        f = self.facts if not self.loaded else None
        if f is not None:
            return f.usage
        from logbook.format.runfacts import usage_of

        return usage_of(self.body)

    @property
    def figures(self) -> RunFacts | None:
        """The facts, when their figures stand for the run's own: no samples, not pass@k."""
        f = self.facts
        return f if f is not None and f.figures and not self.pass_k else None

    @property
    def retracted(self) -> bool:
        return bool(self.retracted_by)

    @property
    def usable(self) -> bool:
        """Counts in the figures: completed and not retracted."""
        return self.status == "completed" and not self.retracted

    def _apparatus(self) -> dict[str, Any]:
        f = self.facts
        return f.apparatus if f is not None else flatten(self.body.get("apparatus") or {})

    @property
    def metric(self) -> Any:
        """The metric the run's outcomes name."""
        f = self.facts
        return f.metric if f is not None else (self.body.get("outcomes") or {}).get("metric")

    @property
    def gaps(self) -> list[str]:
        """What the run, completed in a plan, leaves unsaid of its system (system_gaps)."""
        f = self.facts
        return list(f.gaps) if f is not None else system_gaps(self.body)

    @property
    def compared(self) -> dict[str, str]:
        """The apparatus fields that describe the system measured (not this run's identity:
        `is_identity`), each with its value as `repr` text, by name: what confounds and
        apparatus keys compare. Runs of one system share one dict (never change it)."""
        return self._system.compared

    @property
    def system(self) -> tuple[tuple[str, str], ...]:
        """`compared` as sorted (name, repr) pairs: the apparatus key's fields."""
        return self._system.pairs

    @property
    def temperature(self) -> float | None:
        """The sampling temperature the system decodes at (format.apparatus.temperature_of
        over its fields by name), None when it records none."""
        return self._system.temperature

    def _make_system(self) -> System:
        f = self.facts
        if f is not None:
            return _system_of(f.system)
        return System.of(system_fields(self.apparatus))

    def _item_arrays(self) -> tuple[list[str], Any]:
        """(item ids, numpy array of each item's score; NaN when no sample was scored).

        An item sampled several times (Inspect epochs) scores what the run's reducer
        (``outcomes.reducer``, logbook.format.reducers: the mean when it names none) makes of
        its scored samples, or, in a pass@k plan (``pass_k`` set by the plan's view), the
        unbiased pass@k of its scored samples (NaN when fewer than k were scored). A reducer
        other than the mean applies to an item scored once too (``at_least_2`` makes it 0).
        """
        import numpy as np

        from logbook.format.reducers import MEAN, reducer, reducer_of

        oc = self.body.get("outcomes") or {}
        ids = list(oc.get("id") or [])
        raw = oc.get("score") or []
        values = np.array(raw, dtype=float)  # None (a missing score) becomes NaN
        name = reducer_of(oc)
        if not oc.get("sample") and not self.pass_k and name == MEAN:
            return ids, values  # ids are unique without a sample column (checked at append)
        from logbook.stats.items import sample_means, sample_passes, sample_reduced

        if name != MEAN and not self.pass_k:
            return sample_reduced(ids, values, reducer(name))
        order, means, counts = sample_means(ids, values)
        if self.pass_k:
            from logbook.stats import pass_at_k_items

            passed = sample_passes(ids, values, order)
            return order, pass_at_k_items(counts.astype(np.int64), passed.astype(np.int64),
                                          self.pass_k)
        return order, means

    @property
    def item_scores(self) -> dict[str, float | None]:
        """Each item's score (`item_arrays`: its samples reduced); None when it has none."""
        ids, values = self.item_arrays
        return {i: (None if v != v else float(v)) for i, v in zip(ids, values.tolist(),
                                                                  strict=True)}

    def _clusters(self) -> dict[str, str]:
        oc = self.body.get("outcomes") or {}
        cl = oc.get("cluster")
        if not cl:
            return {}
        return {i: str(c) for i, c in zip(oc.get("id") or [], cl, strict=False) if c is not None}

    def _score(self) -> float | None:
        f = self.figures
        if f is not None:  # the same correctly rounded mean as below, kept with the facts
            return f.score
        import numpy as np

        _, values = self.item_arrays
        present = values[~np.isnan(values)]
        from logbook.stats._exact import xmean

        return xmean(present) if present.size else None

    def missing(self, n_items: int | None) -> tuple[int, int]:
        """(missing items, denominator): items never written count as missing, not absent."""
        facts = self.figures
        if facts is not None and facts.figures:  # one row an item: its counts are its facts'
            total = max(n_items or 0, facts.scores)
            return total - facts.scored, total
        import numpy as np

        ids, values = self.item_arrays
        present = int(np.count_nonzero(~np.isnan(values)))
        total = max(n_items or 0, len(ids))
        return total - present, total


# what a lazy slot of RunView is worked out by (RunView.__getattr__)
_LAZY: dict[str, Callable[[RunView], Any]] = {
    "entry": RunView._entry, "facts": RunView._facts, "apparatus": RunView._apparatus,
    "_system": RunView._make_system, "item_arrays": RunView._item_arrays,
    "clusters": RunView._clusters, "score": RunView._score}


# each slot's own descriptor: read through it, an unset slot is an AttributeError, not a
# call of RunView.__getattr__
_SLOTS: dict[str, Any] = {slot: RunView.__dict__[slot] for slot in RunView.__slots__}


def _filled(run: RunView, slot: str) -> bool:
    """Whether a lazy slot holds its value (read without working it out)."""
    try:
        _SLOTS[slot].__get__(run, RunView)
    except AttributeError:
        return False
    return True


def one_at_a_time(runs: Iterable[RunView]) -> Iterator[RunView]:
    """Each run in turn, its entry let go after its turn when this pass read it (a run read
    before stays read): a pass over every run's body holds one run's at a time, not the
    ledger's."""
    for run in runs:
        held = run.loaded
        yield run
        if not held:
            run.forget()


def _bits(mask: Any) -> int:
    """A boolean array as an int whose bit i is its i-th element."""
    import numpy as np

    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")
