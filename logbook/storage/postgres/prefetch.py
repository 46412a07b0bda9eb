"""What an append transaction reads about the plans its drafts name, in one round trip.

Every append holds the head's row lock from its first read to its COMMIT, so each round trip it
makes inside is time the other writers wait (benchmarks/team.py). A batch of runs of one plan
needs, before its first draft is checked: the ledger's keys (the signer's among them), the
plan's entry and its amendments (and their retractions), the plan's suite state row and which
of the runs' item ids its set holds. ``statements`` asks all of that in the same round trip as
the BEGIN and the lock (the statements run in turn, after the lock is held), ``absorb`` keeps
the answers in the transaction's ``Prefetched``, which the store's reads answer from until the
transaction writes something that changes them (an amendment, a retraction, a plan's suite
row). Nobody else can append while the lock is held, so nothing else changes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from logbook.storage.base import KeyRow, StoredEntry, SuiteRow, suite_row

_ENTRY = "e.seq, e.digest, e.entry, e.signature"


@dataclass
class Prefetched:
    entries: dict[str, StoredEntry] = field(default_factory=dict)  # plan entries, by digest
    amendments: dict[str, list[StoredEntry]] = field(default_factory=dict)  # by plan
    retractions: dict[str, list[str]] = field(default_factory=dict)  # amendment -> retractions
    suites: dict[str, SuiteRow | None] = field(default_factory=dict)  # by plan
    items: dict[str, tuple[int, set[str], set[str]]] = field(default_factory=dict)  # plan ->
    # (items_key, ids asked, those held)

    def wrote(self, kind: str, plan: str | None) -> None:
        """The transaction wrote an entry of ``kind``: forget what it may change."""
        if kind in ("amendment", "retraction"):
            self.amendments.clear()
            self.retractions.clear()

    def wrote_suite(self, plan: str) -> None:
        self.suites.pop(plan, None)
        self.items.pop(plan, None)

    def retractions_of(self, digests: list[str]) -> dict[str, list[str]] | None:
        """The retractions of ``digests`` when every one was prefetched, else None."""
        if not digests or not all(d in self.retractions for d in digests):
            return None
        return {d: list(self.retractions[d]) for d in digests if self.retractions[d]}

    def known_items(self, plan: str, items_key: int, ids: list[str]) -> set[str] | None:
        got = self.items.get(plan)
        if got is None or got[0] != items_key or not got[1].issuperset(ids):
            return None
        return got[2].intersection(ids)


def statements(conn: Any, plans: Mapping[str, list[str]], fingerprints: list[str]) -> str:
    """The statements that ask what the drafts will ask (see the module's text), as one text
    of several statements, their values bound client-side (psycopg's ClientCursor quotes
    them): sent with the transaction's BEGIN and lock, in its one round trip. Not pipeline
    mode: a session left idle after a pipeline is not ended by the server's
    idle-in-transaction timeout here, and that timeout is what frees the head's lock from a
    writer frozen mid-append."""
    asked: list[tuple[str, tuple[Any, ...]]] = [(KEYS_SQL, ())] if fingerprints else []
    for plan, ids in plans.items():
        asked += [
            (f"SELECT {_ENTRY}, i.kind FROM entries e JOIN entry_index i ON i.seq = e.seq "
             "WHERE e.seq IN (SELECT seq FROM entries WHERE digest = %s UNION ALL SELECT "
             "seq FROM entry_index WHERE plan = %s AND kind = 'amendment') ORDER BY i.seq",
             (plan, plan)),
            ("SELECT a.digest, r.digest FROM entry_index a LEFT JOIN entry_index r ON "
             "r.kind = 'retraction' AND r.target = a.digest WHERE a.plan = %s AND "
             "a.kind = 'amendment' ORDER BY r.seq", (plan,)),
            ("SELECT since, first_seq, first_hash, n_known, items_key FROM plan_suites "
             "WHERE plan = %s ORDER BY seq DESC LIMIT 1", (plan,)),
            ("SELECT item FROM plan_items WHERE plan = %s AND items_key = (SELECT "
             "items_key FROM plan_suites WHERE plan = %s ORDER BY seq DESC LIMIT 1) AND "
             "item = ANY(%s)", (plan, plan, ids))]
    from psycopg import ClientCursor

    with ClientCursor(conn) as cur:
        return "; ".join(cur.mogrify(q, args) for q, args in asked)


def absorb(results: list[list[tuple[Any, ...]]], cache: Prefetched,
           kinds: dict[str, tuple[int, str]], plans: Mapping[str, list[str]],
           fingerprints: list[str]) -> list[KeyRow] | None:
    """Keep the answers to ``statements`` (their result sets, in order); the ledger's keys,
    when they were asked (``fingerprints``)."""
    keys = key_rows(results.pop(0)) if fingerprints else None
    for plan, ids in plans.items():
        rows, retracted, suite, held = (results.pop(0) for _ in range(4))
        for r in rows:
            if str(r[1]) == plan and r[4] == "plan":
                cache.entries[plan] = StoredEntry(int(r[0]), str(r[1]), bytes(r[2]), str(r[3]))
                kinds[plan] = (int(r[0]), "plan")
        if plan not in cache.entries:
            continue  # no such plan: the door's own reads say so
        cache.amendments[plan] = [StoredEntry(int(r[0]), str(r[1]), bytes(r[2]), str(r[3]))
                                  for r in rows if r[4] == "amendment"]
        for amendment, retraction in retracted:
            cache.retractions.setdefault(str(amendment), [])
            if retraction is not None:
                cache.retractions[str(amendment)].append(str(retraction))
        row = suite_row(suite[0], plan) if suite else None
        cache.suites[plan] = row
        if row is not None:
            cache.items[plan] = (row[4], set(ids), {str(r[0]) for r in held})
    return keys


KEYS_SQL = ("SELECT fingerprint, name, public, added_seq, revoked_seq FROM signing_keys "
            "ORDER BY added_seq, fingerprint")


def key_rows(rows: list[tuple[Any, ...]]) -> list[KeyRow]:
    """The signing_keys rows ``KEYS_SQL`` reads, as KeyRows."""
    return [(r[0], r[1], r[2], int(r[3]), None if r[4] is None else int(r[4])) for r in rows]
