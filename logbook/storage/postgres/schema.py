"""The PostgreSQL ledger's schema as numbered migrations (read by store.py only).

The tables mirror logbook.storage.sqlite.schema's (the same names and columns), plus ``head``,
the one row every append locks (``SELECT ... FOR UPDATE``) and moves, and ``schema_version``.
Each migration runs once, in its own transaction, under an advisory lock so that two writers
opening a new database at once do not both migrate it.

Entries and every other append-only table refuse UPDATE and DELETE by triggers; ``entries``
and ``blobs`` (the logs runs keep) refuse TRUNCATE too. The derived tables may be truncated by
their owner (``reindex`` rebuilds them); an agent's role is granted INSERT and SELECT only
(docs/team.md).
"""

MIGRATIONS: list[str] = [
    # 1: entries (source of truth), the derived index, keys, once keys, the head
    """
    CREATE FUNCTION logbook_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'logbook % rows are append-only', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END $$;
    CREATE FUNCTION logbook_revoke_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.revoked_seq IS NULL AND NEW.revoked_seq IS NOT NULL
           AND NEW.fingerprint = OLD.fingerprint AND NEW.name = OLD.name
           AND NEW.public = OLD.public AND NEW.added_seq = OLD.added_seq THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'logbook signing keys are only ever revoked, once'
            USING ERRCODE = 'insufficient_privilege';
    END $$;
    CREATE TABLE entries (
        seq BIGINT PRIMARY KEY,
        digest TEXT COLLATE "C" NOT NULL UNIQUE,
        entry BYTEA NOT NULL,
        signature TEXT NOT NULL
    );
    CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON entries
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON entries
        FOR EACH STATEMENT EXECUTE FUNCTION logbook_refuse();
    CREATE TABLE entry_index (
        seq BIGINT PRIMARY KEY, digest TEXT NOT NULL, kind TEXT NOT NULL, ts TEXT,
        signer TEXT, plan TEXT, arm TEXT, slug TEXT, status TEXT, session TEXT, target TEXT
    );
    CREATE INDEX entry_index_kind ON entry_index(kind, seq);
    CREATE INDEX entry_index_plan ON entry_index(plan, seq) WHERE plan IS NOT NULL;
    CREATE UNIQUE INDEX entry_index_slug ON entry_index(slug) WHERE slug IS NOT NULL;
    CREATE INDEX entry_index_target ON entry_index(target) WHERE target IS NOT NULL;
    CREATE INDEX entry_index_runs ON entry_index(plan, arm, status, seq, digest)
        WHERE kind = 'run';
    CREATE TABLE outcomes (
        seq BIGINT PRIMARY KEY, metric TEXT NOT NULL, n BIGINT NOT NULL,
        n_missing BIGINT NOT NULL, total DOUBLE PRECISION NOT NULL, columns BYTEA NOT NULL
    );
    CREATE TABLE signing_keys (
        fingerprint TEXT PRIMARY KEY, name TEXT NOT NULL, public TEXT NOT NULL,
        added_seq BIGINT NOT NULL, revoked_seq BIGINT
    );
    CREATE TRIGGER signing_keys_revoke_only BEFORE UPDATE OR DELETE ON signing_keys
        FOR EACH ROW EXECUTE FUNCTION logbook_revoke_only();
    CREATE TABLE run_sources (key TEXT NOT NULL, seq BIGINT NOT NULL);
    CREATE INDEX run_sources_key ON run_sources(key);
    CREATE TABLE once_keys (key TEXT PRIMARY KEY, digest TEXT NOT NULL);
    CREATE TABLE head (
        id INTEGER PRIMARY KEY CHECK (id = 1), size BIGINT NOT NULL, digest TEXT
    );
    INSERT INTO head (id, size, digest) VALUES (1, 0, NULL);
    """,
    # 2: the Merkle tree's interior nodes (derived; leaves are the entries' digests),
    # checkpoints made, audits run (records beside the ledger, not entries)
    """
    CREATE TABLE tree (
        level INTEGER NOT NULL, idx BIGINT NOT NULL, hash BYTEA NOT NULL,
        PRIMARY KEY (level, idx)
    );
    CREATE TABLE checkpoints (
        id BIGSERIAL PRIMARY KEY, size BIGINT NOT NULL, root TEXT NOT NULL,
        note TEXT NOT NULL, created TEXT NOT NULL
    );
    CREATE TABLE audits (
        id BIGSERIAL PRIMARY KEY, size BIGINT NOT NULL, at TEXT NOT NULL, findings TEXT NOT NULL
    );
    """,
    # 3: every append-only table refuses UPDATE and DELETE
    """
    CREATE TRIGGER entry_index_append_only BEFORE UPDATE OR DELETE ON entry_index
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER outcomes_append_only BEFORE UPDATE OR DELETE ON outcomes
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER run_sources_append_only BEFORE UPDATE OR DELETE ON run_sources
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER once_keys_append_only BEFORE UPDATE OR DELETE ON once_keys
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER tree_append_only BEFORE UPDATE OR DELETE ON tree
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER checkpoints_append_only BEFORE UPDATE OR DELETE ON checkpoints
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER audits_append_only BEFORE UPDATE OR DELETE ON audits
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    """,
    # 4: the logs runs keep (blobs.py): bytes keyed by their sha256, at most 256 MiB each
    # (storage.base.MAX_BLOB_BYTES), insert-only like the entries
    """
    CREATE TABLE blobs (
        digest TEXT COLLATE "C" PRIMARY KEY CHECK (digest ~ '^[0-9a-f]{64}$'),
        data BYTEA NOT NULL CHECK (octet_length(data) <= 268435456)
    );
    CREATE TRIGGER blobs_append_only BEFORE UPDATE OR DELETE ON blobs
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER blobs_no_truncate BEFORE TRUNCATE ON blobs
        FOR EACH STATEMENT EXECUTE FUNCTION logbook_refuse();
    """,
    # 5: each plan's suite as its standing runs fixed it (derived; logbook.format.suite), so
    # the door looks it up instead of reading the plan's runs (issue 32): a state row an entry
    # that changed it, the item ids of each set (``items_key``: the seq it began at);
    # insert-only like the other derived tables
    """
    CREATE TABLE plan_suites (
        plan TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, since BIGINT NOT NULL,
        first_seq BIGINT, first_hash TEXT, n_known BIGINT NOT NULL, items_key BIGINT NOT NULL,
        PRIMARY KEY (plan, seq)
    );
    CREATE TABLE plan_items (
        plan TEXT COLLATE "C" NOT NULL, items_key BIGINT NOT NULL, item TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (plan, items_key, item)
    );
    CREATE TRIGGER plan_suites_append_only BEFORE UPDATE OR DELETE ON plan_suites
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE TRIGGER plan_items_append_only BEFORE UPDATE OR DELETE ON plan_items
        FOR EACH ROW EXECUTE FUNCTION logbook_refuse();
    CREATE INDEX entry_index_plan_kind ON entry_index(plan, kind, seq) WHERE plan IS NOT NULL;
    """,
    # 6: a log's bytes hash to its name, checked by the server on every insert, whoever
    # inserts (an agent's role may insert blobs: a row of other bytes under a log's name would
    # otherwise stand in for it, the real one then inserting nothing); rows kept before are
    # `verify`'s to judge (NOT VALID: not scanned now)
    """
    ALTER TABLE blobs ADD CONSTRAINT blobs_hash_is_name
        CHECK (encode(sha256(data), 'hex') = digest) NOT VALID;
    """,
]

# the derived tables `reindex` empties (TRUNCATE: their owner's right, not an agent's) and
# writes again from the entries' bytes
DERIVED_TABLES = ("entry_index", "outcomes", "signing_keys", "tree", "run_sources",
                  "plan_suites", "plan_items")


# information_schema's data_type for the types the migrations write
_PG_TYPES = {"BIGINT": "bigint", "BIGSERIAL": "bigint", "INTEGER": "integer", "TEXT": "text",
             "BYTEA": "bytea", "DOUBLE": "double precision"}


def expected_columns() -> dict[str, list[tuple[str, str]]]:
    """Every table the migrations make, with its columns and their types as
    information_schema names them, read off the migrations' CREATE TABLE statements."""
    import re

    out: dict[str, list[tuple[str, str]]] = {}
    for migration in MIGRATIONS:
        for table, body in re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+) \((.*?)\);",
                                      migration, re.S):
            columns, depth, part = [], 0, ""
            for ch in body + ",":
                if ch == "," and depth == 0:
                    columns.append(part.split())
                    part = ""
                    continue
                depth += (ch == "(") - (ch == ")")
                part += ch
            out[table] = [(words[0], _PG_TYPES[words[1].upper()]) for words in columns
                          if words and words[0].upper() not in ("PRIMARY", "CHECK", "UNIQUE")]
    return out
