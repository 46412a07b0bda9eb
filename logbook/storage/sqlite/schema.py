"""The ledger database's schema as numbered migrations (read by store.py only).

Each migration runs once, in its own transaction, when the store is opened for writing; a
read-only open never migrates (DESIGN §5).
"""

MIGRATIONS: list[str] = [
    # 1: entries (source of truth) and the derived index
    """
    CREATE TABLE entries (
        seq INTEGER PRIMARY KEY,
        digest TEXT NOT NULL UNIQUE,
        entry BLOB NOT NULL,
        signature TEXT NOT NULL
    );
    CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
        BEGIN SELECT RAISE(ABORT, 'logbook entries are append-only'); END;
    CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
        BEGIN SELECT RAISE(ABORT, 'logbook entries are append-only'); END;
    CREATE TABLE entry_index (
        seq INTEGER PRIMARY KEY, digest TEXT NOT NULL, kind TEXT NOT NULL, ts TEXT,
        signer TEXT, plan TEXT, arm TEXT, slug TEXT, status TEXT, session TEXT, target TEXT
    );
    CREATE INDEX entry_index_kind ON entry_index(kind, seq);
    CREATE INDEX entry_index_plan ON entry_index(plan, seq);
    CREATE UNIQUE INDEX entry_index_slug ON entry_index(slug) WHERE slug IS NOT NULL;
    CREATE INDEX entry_index_target ON entry_index(target) WHERE target IS NOT NULL;
    CREATE TABLE outcomes (
        seq INTEGER PRIMARY KEY, metric TEXT NOT NULL, n INTEGER NOT NULL,
        n_missing INTEGER NOT NULL, total REAL NOT NULL, columns BLOB NOT NULL
    );
    CREATE TABLE signing_keys (
        fingerprint TEXT PRIMARY KEY, name TEXT NOT NULL, public TEXT NOT NULL,
        added_seq INTEGER NOT NULL, revoked_seq INTEGER
    );
    CREATE TABLE once_keys (key TEXT PRIMARY KEY, digest TEXT NOT NULL);
    CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # 2: the Merkle tree (derived), checkpoints made, verifications run
    """
    CREATE TABLE tree (
        level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL,
        PRIMARY KEY (level, idx)
    ) WITHOUT ROWID;
    CREATE TABLE checkpoints (
        id INTEGER PRIMARY KEY, size INTEGER NOT NULL, root TEXT NOT NULL,
        note TEXT NOT NULL, created TEXT NOT NULL
    );
    CREATE TABLE verifications (
        id INTEGER PRIMARY KEY, size INTEGER NOT NULL, ok INTEGER NOT NULL,
        findings INTEGER NOT NULL, at TEXT NOT NULL, trusted TEXT
    );
    """,
    # 3: audits run, for `brief` (a record beside the ledger, not entries)
    """
    CREATE TABLE audits (
        id INTEGER PRIMARY KEY, size INTEGER NOT NULL, at TEXT NOT NULL, findings TEXT NOT NULL
    );
    """,
    # 4: Merkle leaves are the entries' digests, not stored rows
    """
    DELETE FROM tree WHERE level = 0;
    """,
    # 5: each plan's run counts for `brief`, read from the index alone
    """
    CREATE INDEX IF NOT EXISTS entry_index_runs ON entry_index(plan, arm, status, seq, digest)
        WHERE kind = 'run';
    """,
    # 6: only entries that name a plan are indexed by it (one index fewer for every note)
    """
    DROP INDEX IF EXISTS entry_index_plan;
    CREATE INDEX entry_index_plan ON entry_index(plan, seq) WHERE plan IS NOT NULL;
    """,
    # 7: the sources of ingested runs (derived), so that each is recorded once (issue 13)
    """
    CREATE TABLE IF NOT EXISTS run_sources (key TEXT NOT NULL, seq INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS run_sources_key ON run_sources(key);
    """,
    # 8: each plan's suite as its standing runs fixed it (derived; logbook.format.suite), so
    # the door looks it up instead of reading the plan's runs (issue 32): a state row an
    # entry that changed it, and the item ids of each set (``items_key``: the seq it began at)
    """
    CREATE TABLE IF NOT EXISTS plan_suites (
        plan TEXT NOT NULL, seq INTEGER NOT NULL, since INTEGER NOT NULL, first_seq INTEGER,
        first_hash TEXT, n_known INTEGER NOT NULL, items_key INTEGER NOT NULL,
        PRIMARY KEY (plan, seq)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS plan_items (
        plan TEXT NOT NULL, items_key INTEGER NOT NULL, item TEXT NOT NULL,
        PRIMARY KEY (plan, items_key, item)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS entry_index_plan_kind ON entry_index(plan, kind, seq)
        WHERE plan IS NOT NULL;
    """,
]

DERIVED_TABLES = ("entry_index", "outcomes", "signing_keys", "tree", "run_sources",
                  "plan_suites", "plan_items")

# The derived tables as the migrations leave them, for `reindex` to make again when a damaged
# file lost one (each statement is a no-op when its table or index exists).
DERIVED_SCHEMA: list[str] = [
    """CREATE TABLE IF NOT EXISTS entry_index (
        seq INTEGER PRIMARY KEY, digest TEXT NOT NULL, kind TEXT NOT NULL, ts TEXT,
        signer TEXT, plan TEXT, arm TEXT, slug TEXT, status TEXT, session TEXT, target TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS entry_index_kind ON entry_index(kind, seq)",
    "CREATE INDEX IF NOT EXISTS entry_index_plan ON entry_index(plan, seq) "
    "WHERE plan IS NOT NULL",
    "CREATE UNIQUE INDEX IF NOT EXISTS entry_index_slug ON entry_index(slug) "
    "WHERE slug IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS entry_index_target ON entry_index(target) "
    "WHERE target IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS entry_index_runs ON entry_index(plan, arm, status, seq, "
    "digest) WHERE kind = 'run'",
    """CREATE TABLE IF NOT EXISTS outcomes (
        seq INTEGER PRIMARY KEY, metric TEXT NOT NULL, n INTEGER NOT NULL,
        n_missing INTEGER NOT NULL, total REAL NOT NULL, columns BLOB NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS signing_keys (
        fingerprint TEXT PRIMARY KEY, name TEXT NOT NULL, public TEXT NOT NULL,
        added_seq INTEGER NOT NULL, revoked_seq INTEGER
    )""",
    """CREATE TABLE IF NOT EXISTS tree (
        level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL,
        PRIMARY KEY (level, idx)
    ) WITHOUT ROWID""",
    "CREATE TABLE IF NOT EXISTS run_sources (key TEXT NOT NULL, seq INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS run_sources_key ON run_sources(key)",
    "CREATE INDEX IF NOT EXISTS entry_index_plan_kind ON entry_index(plan, kind, seq) "
    "WHERE plan IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS plan_suites (
        plan TEXT NOT NULL, seq INTEGER NOT NULL, since INTEGER NOT NULL, first_seq INTEGER,
        first_hash TEXT, n_known INTEGER NOT NULL, items_key INTEGER NOT NULL,
        PRIMARY KEY (plan, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS plan_items (
        plan TEXT NOT NULL, items_key INTEGER NOT NULL, item TEXT NOT NULL,
        PRIMARY KEY (plan, items_key, item)
    ) WITHOUT ROWID""",
]


def expected_columns() -> dict[str, list[tuple[str, str]]]:
    """Every table the migrations make, with its columns and their declared types: read off a
    database in memory that the migrations themselves built."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    try:
        for migration in MIGRATIONS:
            conn.executescript(migration)
        return table_columns(conn)
    finally:
        conn.close()


def table_columns(conn: object) -> dict[str, list[tuple[str, str]]]:
    """The tables of an SQLite connection, with their columns and declared types."""
    names = [r[0] for r in conn.execute(  # type: ignore[attr-defined]
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {t: [(c[1], str(c[2]).upper()) for c in conn.execute(  # type: ignore[attr-defined]
        f'PRAGMA table_info("{t}")')] for t in names}
