"""The Ledger service: read and resolve (its appends: logbook.ledger.writer), composing store,
model, canonical and crypto.

Callers read through the methods here and two ports: ``reads`` (the read model of a check,
inside `reading_checked`; the store otherwise) and ``entry_log`` (the store itself: what the
auditor compares, and the records kept beside the chain: checkpoints, audits, logs).
"""

from __future__ import annotations

import re
import uuid as uuidlib
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logbook import config
from logbook.crypto.signing import SigningKey, load_key
from logbook.errors import EnvironmentProblem, InputError, StorageDamaged
from logbook.format import canonical
from logbook.format.suite import SuiteFold
from logbook.ledger import suites
from logbook.ledger.entry import Entry, parse_stored
from logbook.ledger.writer import Appending
from logbook.storage import describe, is_url, open_store
from logbook.storage import index as derive
from logbook.storage.base import EntryLog, Txn
from logbook.tlog import merkle

if TYPE_CHECKING:
    from logbook.ledger.recording import RecordingContext
    from logbook.verify.checked_reads import CheckedReads

LEDGER_DIR = ".logbook"
DB_NAME = "ledger.db"
_HEX = re.compile(r"^[0-9a-f]+$")


def locate(start: Path | str | None = None) -> Path | str:
    """Where the ledger is: a URL given to --ledger or LOGBOOK_DIR as it is (open_store says
    which backends serve one), else the database file ``find_db`` finds."""
    named = start if start is not None else config.ledger_dir()
    if isinstance(named, str) and is_url(named):
        return named
    return find_db(Path(start) if start is not None else None)


def find_db(start: Path | None = None) -> Path:
    """The ledger database: --ledger / LOGBOOK_DIR, else walking up from the working directory."""
    named = config.ledger_dir()
    if start is not None or named:
        p = Path(start if start is not None else named or ".").expanduser()
        for cand in (p, p / DB_NAME, p / LEDGER_DIR / DB_NAME):
            if cand.is_file():
                return cand
        raise EnvironmentProblem(f"no ledger at {p} (expected {p / LEDGER_DIR / DB_NAME})")
    here = Path.cwd()
    for d in (here, *here.parents):
        cand = d / LEDGER_DIR / DB_NAME
        if cand.is_file():
            return cand
    raise EnvironmentProblem("no ledger found in this directory or any parent "
                             "(run `logbook init`, or name one with --ledger or LOGBOOK_DIR)")


class Ledger(Appending):
    def __init__(self, store: EntryLog, locator: Path | str | None = None) -> None:
        self._store = store
        self._locator = locator
        self._genesis: Entry | None = None
        # entries a check just read, by kind (logbook.verify.integrity): served by `log`
        self._checked: Mapping[str, list[tuple[int, str, dict[str, Any], str, bytes]]] = {}
        self._reads: CheckedReads | None = None  # inside reading_checked

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path | str | None = None, write: bool = True) -> Ledger:
        """The ledger at ``path`` (or found from the working directory); read-only on request."""
        where = locate(path)
        return cls(open_store(where, write=write), where)

    @classmethod
    def init(cls, directory: Path | str, name: str, key: SigningKey) -> Ledger:
        """A new ledger in ``directory``/.logbook/, or at a postgresql:// URL."""
        if not name.strip():
            raise InputError("--name must not be empty")
        if isinstance(directory, str) and is_url(directory):
            ledger = cls(open_store(directory, create=True), directory)
        else:
            db = Path(directory) / LEDGER_DIR / DB_NAME
            store = open_store(db, create=True)
            ignore = db.parent / ".gitignore"  # the ledger's folder never dirties a git tree
            if not ignore.exists():
                ignore.write_text("*\n")
                ignore.chmod(0o644)  # whatever the umask: nobody else may rewrite it
            ledger = cls(store)
        ledger_id = str(uuidlib.uuid4())
        body = {"name": name, "uuid": ledger_id,
                "keys": [{"name": "default", "public": key.public.b64}]}
        ledger.append("genesis", body, key, ledger_id=ledger_id)
        return ledger

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def path(self) -> Path:
        return self._store.path

    @property
    def location(self) -> str:
        """Where the ledger is, for messages: its file, or its URL without the password."""
        return describe(self._locator) if self._locator is not None else str(self.path)

    @property
    def genesis(self) -> Entry:
        if self._genesis is None:
            found = self._store.entries_at([0])
            if not found:
                raise EnvironmentProblem(f"ledger {self.location} has no genesis entry")
            self._genesis = Entry.from_stored(found[0])
        return self._genesis

    @property
    def uuid(self) -> str:
        return str(self.genesis.body.get("uuid"))

    @property
    def name(self) -> str:
        return str(self.genesis.body.get("name"))

    def size(self) -> int:
        return self.reads.head()[0]

    # -- read ports ----------------------------------------------------------------------
    def snapshot(self) -> AbstractContextManager[None]:
        """One read transaction: every read inside sees the ledger as at the first one,
        whatever is appended meanwhile."""
        return self._store.snapshot()

    @property
    def entry_log(self) -> EntryLog:
        """The store itself: what the auditor (logbook.verify) compares with the entries'
        bytes, and the records kept beside the chain (checkpoints, audits, kept logs)."""
        return self._store

    def brief_reads(self) -> CheckedReads:
        """What `brief` reads after its check (logbook.analysis.brief): the read model of
        logbook.verify.checked_reads, handed out inside `reading_checked` only."""
        if self._reads is None:
            raise RuntimeError("brief_reads() outside reading_checked(): nothing is checked")
        return self._reads

    @property
    def reads(self) -> EntryLog | CheckedReads:
        """Where a read goes: inside `reading_checked`, the read model of the check; else the
        store itself (the writes, and what they look up, always go to the store)."""
        return self._store if self._reads is None else self._reads

    # -- reading -------------------------------------------------------------------------
    def resolve(self, ref: str, field: str = "reference") -> str:
        """A full digest for a digest, a unique prefix of 8+ hex digits, @SEQ / #SEQ, or a slug."""
        r = ref.strip()
        if r[:1] in ("@", "#"):
            digits = r[1:]
            if not (digits.isascii() and digits.isdigit()):
                raise InputError(f"{field}: {ref!r} is not @SEQ with a number")
            seq = int(digits)
            at = self.reads.entries_at([seq]) if seq < 2**63 else []  # bytes, not parsed
            if not at:
                raise InputError(f"{field}: there is no entry {r} (the ledger has "
                                 f"{self.size()} entries)")
            return at[0].digest
        low = r.lower()
        if _HEX.match(low):
            if len(low) == 64:
                if self.reads.kind_of(low) is None:
                    raise InputError(f"{field}: no entry has digest {low}")
                return low
            if len(low) < 8:
                raise InputError(f"{field}: digest prefix {ref!r} is shorter than 8 hex digits")
            found = self.reads.digests_with_prefix(low)
            if not found:
                raise InputError(f"{field}: no entry digest starts with {ref!r}")
            if len(found) > 1:
                raise InputError(f"{field}: digest prefix {ref!r} is ambiguous")
            return found[0]
        digest = self.reads.plan_digest_by_slug(r)
        if digest is None:
            raise InputError(f"{field}: {ref!r} is not a digest, @SEQ or the slug of a plan")
        return digest

    def get(self, ref: str) -> Entry:
        digest = self.resolve(ref)
        stored = self.reads.entry_by_digest(digest)
        if stored is None:  # @SEQ found a row whose digest column is damaged
            raise StorageDamaged(f"{ref}: the entry's stored digest {digest[:16]!r} is damaged "
                                 "(`logbook verify` lists what is wrong)")
        return Entry.from_stored(stored)

    def entries(self) -> Iterator[Entry]:
        for stored in self.reads.entries():
            yield Entry.from_stored(stored)

    def log(self, kind: str | None = None, plan: str | None = None,
            last: int | None = None) -> list[Entry]:
        plan_digest = self.resolve(plan, "--plan") if plan else None
        found = self.reads.kind_of(plan_digest) if plan_digest is not None else None
        if found is not None and found[1] != "plan":
            raise InputError(f"--plan {plan}: that entry is not a plan")
        if last is not None:
            last = min(last, 2**62)  # more than any ledger holds; SQLite integers are 64-bit
        if plan is None and kind is not None and kind in self._checked:
            every = self._checked[kind]
            picked = every if last is None else every[max(0, len(every) - last):]
            return [Entry(*t) for t in picked]
        stored = self.reads.entries_where(kind, plan_digest, last)
        return [Entry.from_stored(s) for s in stored]

    @contextmanager
    def reading_checked(self, kept: Mapping[str, list[tuple[int, str, dict[str, Any], str,
                                                             bytes]]],
                        reads: CheckedReads) -> Iterator[None]:
        """While the read transaction of a check is open, every read goes through ``reads``
        (logbook.verify.checked_reads: this machine's checked copy, in memory when none is
        kept, each entry's bytes held to its checked digest), and `log(kind=K)` for the kinds
        in ``kept`` returns the entries as that check read and parsed them (the same bytes,
        read and parsed once), not a second read of the store."""
        self._checked, self._reads = kept, reads
        try:
            yield
        finally:
            self._checked, self._reads = {}, None

    def plan_body(self, plan_digest: str, without: str | None = None) -> dict[str, Any]:
        """A plan's body with its standing amendments applied in ledger order (all but the
        amendment ``without``: what the plan becomes if that one is withdrawn)."""
        from logbook.model import amended

        stored = self.reads.entry_by_digest(plan_digest)
        if stored is None:
            raise InputError(f"no plan {plan_digest}")
        plan = parse_stored(stored)["body"]
        amendments = [Entry.from_stored(s)
                      for s in self.reads.entries_where("amendment", plan_digest)]
        withdrawn = self.reads.retractions_of([a.digest for a in amendments])
        return amended(plan, amendments, withdrawn, without=without)

    def root(self, size: int | None = None) -> bytes:
        n = self.size() if size is None else size
        return merkle.root_from_nodes(n, self.reads.tree_node)

    def entry_at(self, seq: int) -> Entry | None:
        """The entry at ``seq``, or None beyond the head."""
        found = self.reads.entries_at([seq]) if 0 <= seq < 2**63 else []
        return Entry.from_stored(found[0]) if found else None

    def check_source(self, body: dict[str, Any]) -> None:
        """AlreadyRecorded (exit 2) when a run body's source is already in the ledger."""
        from logbook.ledger.intake import check_source

        check_source(self._store, body)

    def completed_in_arm(self, plan_digest: str, arm: str) -> int:
        """The completed runs standing in a plan's arm, counted as the door counts them."""
        from logbook.ledger.intake import completed_in_arm

        return completed_in_arm(self._store, plan_digest, arm)

    # -- recording runs from Python -------------------------------------------------------
    def append_run(self, plan: str | None, arm: str | None, status: str,
                   apparatus: dict[str, Any], outcomes: dict[str, Any] | None = None,
                   key: SigningKey | None = None, **optional: Any) -> Entry:
        """Append one run; ``optional`` holds session, started, finished, logs, note, reason."""
        from logbook.ledger.recording import run_body

        body = run_body(plan, arm, status, apparatus, outcomes, **optional)
        return self.append("run", body, key or load_key())

    def recording(self, plan: str | None = None, arm: str | None = None, metric: str = "score",
                  apparatus: dict[str, Any] | None = None, session: str | None = None,
                  key: SigningKey | None = None) -> RecordingContext:
        """``with ledger.recording(plan=..., arm=...) as run: run.item(id, score)``."""
        from logbook.ledger.recording import RecordingContext

        return RecordingContext(self, key or load_key(), plan, arm, metric, apparatus,
                                session)

    # -- derived tables ------------------------------------------------------------------
    def reindex(self) -> dict[str, int]:
        """Rebuild every derived table from the stored bytes, in one transaction."""

        def rows(txn: Txn) -> None:
            fold, last = SuiteFold(), -1
            for stored in self._store.entries():
                env = parse_stored(stored)
                if canonical.digest_bytes(stored.entry).hex() != stored.digest:
                    raise StorageDamaged(
                        f"entry {stored.seq} is damaged: its bytes do not hash to its stored "
                        "digest, so the derived tables cannot be rebuilt from it (`logbook "
                        "verify` lists what is wrong)")
                derive.index_entry(txn, stored.seq, stored.digest, env)
                fold.add(stored.seq, stored.digest, env)
                last = stored.seq
            suites.rebuild(txn, fold, last)

        return self._store.rebuild_derived(rows)

    def keep_audit(self, size: int, findings: list[dict[str, Any]]) -> None:
        """Keep a whole-ledger audit's findings over the first ``size`` entries beside the
        chain (unsigned, not an entry: `brief` shows the last)."""
        import orjson

        from logbook.ledger.entry import now_rfc3339

        with self._store.transaction() as txn:
            txn.record_audit(size, now_rfc3339(), orjson.dumps(findings).decode())
