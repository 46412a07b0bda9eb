"""The shape of the code (DESIGN §3), held by reading every module's imports.

Every import counts, the ones inside functions too (a lazy import is still an arrow). The
packages are ranked; an import may only point down the ranks or within its own package, so
adding an arrow that runs back up fails here, naming the file and the import.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "logbook"

# the order of DESIGN §3's arrows, bottom first: a module may import its own package or a
# package of a lower rank, never one of the same or a higher rank
RANKS: dict[str, int] = {
    "errors": 0,
    "config": 1, "format": 1, "limits": 1, "findings": 1, "examples": 1,
    "reading": 2, "stats": 2,
    "files": 3, "inside": 3,
    "crypto": 4,
    "tlog": 5,
    "model": 6, "storage": 6, "capture": 6,
    "verify": 7,
    "ledger": 8,
    "ingest": 9, "analysis": 9, "witness": 9,
    "integrations": 10, "web": 10, "calibration": 10, "exports": 10,
    "cli": 11, "frames": 11,
    "__init__": 12, "__main__": 12,
}
# what each pure package may take from the rest of logbook (nothing else)
PURE: dict[str, set[str]] = {
    "stats": set(),
    "tlog": {"errors", "crypto.points"},
}
# the command line parses and prints: it reaches the product through these, never the
# store, the tree, the statistics or the models directly
CLI_MAY_IMPORT = {"cli", "analysis", "calibration", "ledger", "verify", "ingest", "capture",
                  "exports", "crypto", "config", "errors", "files", "reading", "limits", "format",
                  "integrations", "web", "witness"}
# the auditor reads a store through the protocol, this machine's checked copy (the one read
# model: a class, not a protocol) and recomputes derived rows; the analysis
# names the read ports the ledger hands it (brief's) and writes the flat export (a database of
# its own, not a store): nothing else outside storage/ and ledger/ imports storage/
STORAGE_FOR = {"verify": {"logbook.storage.base", "logbook.storage.index",
                          "logbook.storage.sqlite.read_model"},
               "analysis": {"logbook.storage.base", "logbook.storage.flat"}}
SIGNING = {"logbook.crypto.signing", "logbook.ledger"}
SQL_WORDS = ("SELECT ", "INSERT INTO", "CREATE TABLE", "CREATE INDEX", "CREATE TRIGGER",
             "PRAGMA ", "BEGIN IMMEDIATE", "DELETE FROM", "UPDATE ")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(MODULES[name].read_text(), str(MODULES[name]))


def _resolve(name: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".")
    is_package = MODULES[name].name == "__init__.py"
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@cache
def imports(name: str) -> tuple[tuple[str, int], ...]:
    """Every logbook module `name` imports (dotted, resolved to a module of this tree), with
    the line of the import."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(_tree(name)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = _resolve(name, node)
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod
                       for a in node.names]
        for t in targets:
            if t == "logbook" or t.startswith("logbook."):
                while t not in MODULES and "." in t:
                    t = t.rsplit(".", 1)[0]
                found.append((t, node.lineno))
    return tuple(found)


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def test_every_package_is_ranked() -> None:
    assert {_package(m) for m in MODULES} <= set(RANKS)


def test_arrows_point_down() -> None:
    bad = []
    for module in MODULES:
        own = _package(module)
        for target, line in imports(module):
            other = _package(target)
            if other != own and other != "__init__" and RANKS[other] >= RANKS[own]:
                bad.append(f"{_where(module, line)} ({own}) imports {target} ({other})")
    assert not bad, "imports that run back up DESIGN §3's arrows:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", sorted(PURE))
def test_pure_packages_import_nothing_else(package: str) -> None:
    allowed = PURE[package]
    bad = [f"{_where(m, line)} imports {t}"
           for m in MODULES if _package(m) == package
           for t, line in imports(m)
           if _package(t) != package and t.removeprefix("logbook.") not in allowed]
    assert not bad, "\n".join(bad)


def test_the_command_line_reaches_only_what_it_may() -> None:
    bad = [f"{_where(m, line)} imports {t}"
           for m in MODULES if _package(m) == "cli"
           for t, line in imports(m) if _package(t) not in CLI_MAY_IMPORT]
    assert not bad, "\n".join(bad)


def _closure(start: list[str]) -> dict[str, str]:
    """Every module reachable from `start`, each with the module that first reached it."""
    seen = {s: s for s in start}
    todo = list(start)
    while todo:
        m = todo.pop()
        for t, _ in imports(m):
            if t not in seen:
                seen[t] = m
                todo.append(t)
    return seen


def test_the_analysis_signs_nothing() -> None:
    """analysis/ reads: the calibration that writes signed scenario ledgers lives above it
    (logbook/calibration/), and test scaffolding (the PostgreSQL cluster, the adversary) in
    tests/."""
    signs = {"logbook.crypto.signing", "logbook.ledger.checkpoints", "logbook.calibration"}
    bad = [f"{_where(m, line)} imports {t}" for m in MODULES if _package(m) == "analysis"
           for t, line in imports(m) if any(t == s or t.startswith(s + ".") for s in signs)]
    assert not bad, "analysis/ reaches signing code:\n" + "\n".join(bad)
    assert not (PACKAGE / "storage" / "postgres" / "local.py").exists()


def test_the_command_line_runs_no_workflow() -> None:
    """`logbook run` (logbook.integrations.command) and `logbook verify`
    (logbook.verify.command) are workflows the CLI calls and prints: no module of cli/ runs a
    command, checks a store or a chain itself."""
    workflow = {"logbook.capture.process", "logbook.verify.stored", "logbook.verify.chain",
                "logbook.ingest.routing"}
    bad = [f"{_where(m, line)} imports {t}" for m in MODULES if _package(m) == "cli"
           for t, line in imports(m) if t in workflow]
    assert not bad, "cli/ runs a workflow:\n" + "\n".join(bad)


def test_the_verifier_imports_nothing_that_signs() -> None:
    verify = [m for m in MODULES if _package(m) == "verify"]
    reached = _closure(verify)
    bad = sorted(f"{m} (through {via})" for m, via in reached.items()
                 if any(m == s or m.startswith(s + ".") for s in SIGNING))
    assert not bad, "verify/ reaches signing code: " + ", ".join(bad)
    private = [f"{MODULES[m].relative_to(ROOT)}" for m in reached
               if "Ed25519PrivateKey" in MODULES[m].read_text()]
    assert not private, f"verify/ reaches private-key code in {private}"


def _outside_storage() -> list[str]:
    return [m for m in MODULES if _package(m) != "storage"]


def test_only_storage_speaks_sql() -> None:
    bad = []
    for module in _outside_storage():
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""])
                if any(n.split(".")[0] in {"sqlite3", "sqlite_utils", "psycopg"} for n in names):
                    bad.append(f"{_where(module, node.lineno)} imports {names}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.upper()
                if any(w in text for w in SQL_WORDS) and (" FROM " in text or "INTO" in text
                                                         or "TABLE" in text or "PRAGMA" in text
                                                         or "BEGIN" in text):
                    bad.append(f"{_where(module, node.lineno)}: SQL {node.value[:40]!r}")
    assert not bad, "SQL outside storage/:\n" + "\n".join(bad)


def test_only_storage_and_the_ledger_reach_a_store() -> None:
    bad = []
    for module in _outside_storage():
        pkg = _package(module)
        for target, line in imports(module):
            read_port = target in STORAGE_FOR.get(pkg, set())
            if target.startswith("logbook.storage.") and pkg != "ledger" and not read_port:
                bad.append(f"{_where(module, line)} imports {target}")
        if pkg == "ledger":
            continue
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.Attribute) and node.attr in {"store", "_store"}:
                bad.append(f"{_where(module, node.lineno)} reaches .{node.attr}")
    assert not bad, "store access outside storage/ and ledger/:\n" + "\n".join(bad)


def _environ(node: ast.AST) -> bool:
    """`os.environ` / `environ` (the mapping itself)."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or \
        (isinstance(node, ast.Name) and node.id == "environ")


def _logbook_name(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) \
        and node.value.startswith("LOGBOOK_")


def test_environment_variables_are_read_in_config_only() -> None:
    bad = []
    for module in MODULES:
        if module == "logbook.config":
            continue
        for node in ast.walk(_tree(module)):
            hit = None
            if isinstance(node, ast.Subscript) and _environ(node.value) \
                    and _logbook_name(node.slice):
                hit = node.slice
            elif isinstance(node, ast.Call) and node.args and _logbook_name(node.args[0]):
                f = node.func
                if (isinstance(f, ast.Attribute) and _environ(f.value)) or \
                        (isinstance(f, ast.Attribute) and f.attr in {"getenv", "putenv"}):
                    hit = node.args[0]
            if hit is not None:
                bad.append(f"{_where(module, node.lineno)}: {hit.value}")  # type: ignore[attr-defined]
    assert not bad, ("LOGBOOK_* variables read or set outside logbook/config.py (go through "
                     "it):\n" + "\n".join(bad))


def test_no_import_circles_between_modules() -> None:
    graph = {m: {t for t, _ in imports(m) if t != m}
             for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


# what a store answers: a protocol declaring any of these describes a store, and there is one
STORE_READS = {"head", "entries", "entries_at", "entry_by_digest", "entries_where", "kind_of",
               "digests_with_prefix", "retractions_of", "plan_digest_by_slug", "signing_keys",
               "raw_entries", "derived_rows", "checkpoints", "blob"}


def _is_protocol(node: ast.ClassDef) -> bool:
    return any((isinstance(b, ast.Name) and b.id == "Protocol")
               or (isinstance(b, ast.Attribute) and b.attr == "Protocol") for b in node.bases)


def test_entry_log_is_the_only_storage_protocol() -> None:
    """Issue 35: one protocol says what a store offers (storage/base.py's EntryLog, with the
    append transaction it hands out); no narrower port re-declares its reads anywhere."""
    found = []
    for module in MODULES:
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.ClassDef) and _is_protocol(node):
                declared = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                if declared & STORE_READS:
                    found.append(f"{module}.{node.name}")
    assert found == ["logbook.storage.base.EntryLog"], found
    stores = [f"{m}.{n.name}" for m in MODULES if m.startswith("logbook.storage.")
              for n in ast.walk(_tree(m)) if isinstance(n, ast.ClassDef)
              and n.name.endswith("Store")]
    assert stores == ["logbook.storage.postgres.store.PostgresStore",
                      "logbook.storage.sqlite.store.SQLiteStore"], stores


def test_every_entry_log_method_has_a_reader() -> None:
    """Issue 35: the EntryLog declares nothing no one outside storage/ asks of a store (a
    read the read model took over leaves the protocol, and both stores, with it)."""
    base = next(n for n in ast.walk(_tree("logbook.storage.base"))
                if isinstance(n, ast.ClassDef) and n.name == "EntryLog")
    declared = {n.name for n in base.body if isinstance(n, ast.FunctionDef)}
    used: set[str] = set()
    for module in MODULES:
        if module.startswith("logbook.storage."):
            continue
        used |= {n.attr for n in ast.walk(_tree(module)) if isinstance(n, ast.Attribute)}
    assert sorted(declared - used) == []


def test_no_size_chooses_a_read_path() -> None:
    """Issue 35: the path a read takes never depends on the ledger's size (no threshold
    variable, no comparison of a size in the code that opens the reads)."""
    assert not any("CHECK_IN_FULL" in MODULES[m].read_text() for m in MODULES)
    for module in ("logbook.ledger.read_model", "logbook.cli.state",
                   "logbook.verify.integrity"):
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.Compare):
                names = {n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "")
                         for n in ast.walk(node)}
                calls = {getattr(c.func, "attr", "") for c in ast.walk(node)
                         if isinstance(c, ast.Call)}
                assert "size" not in calls, f"{_where(module, node.lineno)} compares a size"
                assert not names & {"SIZE_THRESHOLD", "FULL_BELOW"}, _where(module, node.lineno)


# where a fast path stands beside the one definition it shortcuts, the test that holds the two
# together: the lean start's option table beside typer's declarations, the body shape check
# beside the pydantic models, canonical JSON's fast encoder beside the rfc8785 package
TWINS = {
    "logbook.cli.lean": ("tests/cli/test_lean_dispatch.py",
                         "test_the_lean_table_is_the_typer_declaration"),
    "logbook.model.shapes": ("tests/model/test_shapes.py",
                             "test_check_body_says_exactly_what_the_model_says"),
    "logbook.format.canonical": ("tests/format/test_canonical.py",
                                 "test_fast_path_is_byte_identical_to_the_reference"),
}


@pytest.mark.parametrize("module", sorted(TWINS))
def test_every_twin_is_held_to_its_one_definition(module: str) -> None:
    """Issue 35: no definition of a body or an option stands twice unheld: each fast path is
    named here with the test that compares it to the one definition, and that test exists and
    imports the fast path."""
    path, name = TWINS[module]
    tree = ast.parse((ROOT / path).read_text())
    assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, path
    short = module.rsplit(".", 1)[1]
    imported = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            imported |= {n.module or ""} | {f"{n.module}.{a.name}" for a in n.names}
        elif isinstance(n, ast.Import):
            imported |= {a.name for a in n.names}
    assert any(i == module or i.endswith(f".{short}") for i in imported), (path, module)


def test_the_kinds_registry_names_what_it_cannot_import() -> None:
    """Issue 35: format/kinds.py sits below what its rows name (verify and storage read it, so
    it cannot import ledger/ or model/); it names each body model and admission rule by path,
    resolved where it is used. Every path resolves, a model is a body model of logbook.model,
    and a rule a function of logbook.ledger: a renamed rule fails here, not at an append."""
    from pydantic import BaseModel

    from logbook.format.kinds import KINDS, load

    for kind in KINDS.values():
        assert kind.model.startswith("logbook.model."), kind
        assert issubclass(load(kind.model), BaseModel), kind
        if kind.admission is not None:
            assert kind.admission.startswith("logbook.ledger."), kind
            assert callable(load(kind.admission)), kind
