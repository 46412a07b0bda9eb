"""Files the user names that cannot serve: one sentence naming them, and nothing written.

A directory, a binary or malformed key or trust file, or an output path in a folder that does
not exist is bad input (exit 2); a medium that refuses the write is the environment (exit 3).
Either way: one line on stderr naming the file, no traceback, no entry, no checkpoint, no file
and no temporary file left behind.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli

SLUG = "kv-q8-vs-f16"
ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4  # a small binary, not UTF-8


@pytest.fixture
def paths(ledger_dir: Path, tmp_path: Path) -> dict[str, str]:
    """A ledger with a plan, a run and a checkpoint; a proof, and files to misuse."""
    r = run_cli("plan", str(write_json(tmp_path / "plan.json", plan_body())))
    assert r.code == 0, r.err
    r = run_cli("append", str(write_json(tmp_path / "run.json",
                                         draft("run", run_body(SLUG, "f16")))))
    assert r.code == 0, r.err
    files = tmp_path / "files"
    files.mkdir()
    r = run_cli("checkpoint", "--out", str(files / "c.checkpoint"))
    assert r.code == 0, r.err
    r = run_cli("prove", "@1", "--checkpoint", str(files / "c.checkpoint"), "--json")
    assert r.code == 0, r.err
    (files / "proof.json").write_text(r.out)
    (files / "adir").mkdir()
    (files / "binary").write_bytes(ELF)
    (files / "big").write_bytes(os.urandom(100_000))  # past the key-file size limit
    (files / "text").write_text("this is not a key\n")
    (files / "fresh").mkdir()  # for `init`
    (files / "ro").mkdir()  # writes here fail as on read-only media (see test_environment)
    named = {p.name: str(p) for p in files.iterdir()}
    named["missing"] = str(files / "no-such-folder")
    named["files"] = str(files)
    return named


def snapshot(root: Path) -> tuple[object, ...]:
    """Entry count and head, checkpoints kept, and every file outside the ledger's folder."""
    head = run_cli("log", "-n", "1", "--json")
    assert head.code == 0, head.err
    cps = run_cli("log", "--checkpoints", "--json")
    assert cps.code == 0, cps.err
    listing = sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1)
                     for p in root.rglob("*") if ".logbook" not in p.relative_to(root).parts[:-1])
    return head.json[0]["seq"], head.json[0]["digest"], cps.out, listing


DIRECTORY = "is a directory"
NO_FOLDER = "does not exist"
NOT_PRIVATE = "not a logbook private key"
NOT_PUBLIC = "not a logbook public key file"

# name: (LOGBOOK_KEY or None, arguments, the path the error must name, a phrase it must hold)
BAD_INPUT = {
    "key binary, note": ("{binary}", ["note", "hi"], "{binary}", NOT_PRIVATE),
    "key too big, note": ("{big}", ["note", "hi"], "{big}", NOT_PRIVATE),
    "key directory, note": ("{adir}", ["note", "hi"], "{adir}", DIRECTORY),
    "key malformed, note": ("{text}", ["note", "hi"], "{text}", NOT_PRIVATE),
    "key binary, init": ("{binary}", ["init", "{fresh}", "--name", "x"], "{binary}",
                         NOT_PRIVATE),
    "key directory, init": ("{adir}", ["init", "{fresh}", "--name", "x"], "{adir}", DIRECTORY),
    "key binary, checkpoint --out": ("{binary}", ["checkpoint", "--out", "{files}/new.cp"],
                                     "{binary}", NOT_PRIVATE),
    "trust directory, verify": (None, ["verify", "--trust", "{adir}"], "{adir}", DIRECTORY),
    "trust binary, verify": (None, ["verify", "--trust", "{binary}"], "{binary}", NOT_PUBLIC),
    "trust too big, verify": (None, ["verify", "--trust", "{big}"], "{big}", NOT_PUBLIC),
    "trust malformed, verify": (None, ["verify", "--trust", "{text}"], "{text}", NOT_PUBLIC),
    "trust binary, verify-proof": (None, ["verify-proof", "{proof.json}", "--checkpoint",
                                          "{c.checkpoint}", "--trust", "{binary}"],
                                   "{binary}", NOT_PUBLIC),
    "trust directory, verify-proof": (None, ["verify-proof", "{proof.json}", "--checkpoint",
                                             "{c.checkpoint}", "--trust", "{adir}"],
                                      "{adir}", DIRECTORY),
    "keys add binary": (None, ["keys", "add", "{binary}", "--name", "x", "--reason", "y"],
                        "{binary}", NOT_PUBLIC),
    "keys add directory": (None, ["keys", "add", "{adir}", "--name", "x", "--reason", "y"],
                           "{adir}", DIRECTORY),
    "keys revoke binary": (None, ["keys", "revoke", "{binary}", "--reason", "y"], "{binary}",
                           NOT_PUBLIC),
    "keys export --out directory": (None, ["keys", "export", "--out", "{adir}"], "{adir}",
                                    DIRECTORY),
    "keys export --out missing folder": (None, ["keys", "export", "--out", "{missing}/k.pub"],
                                         "{missing}/k.pub", NO_FOLDER),
    "keys new --out directory": (None, ["keys", "new", "--out", "{adir}"], "{adir}",
                                 DIRECTORY),
    "keys new --out missing folder": (None, ["keys", "new", "--out", "{missing}/x.key"],
                                      "{missing}/x.key", NO_FOLDER),
    "report --html directory": (None, ["report", SLUG, "--html", "{adir}"], "{adir}",
                                DIRECTORY),
    "report --html missing folder": (None, ["report", SLUG, "--html", "{missing}/r.html"],
                                     "{missing}/r.html", NO_FOLDER),
    "checkpoint --out directory": (None, ["checkpoint", "--out", "{adir}"], "{adir}",
                                   DIRECTORY),
    "checkpoint --out missing folder": (None, ["checkpoint", "--out", "{missing}/c.cp"],
                                        "{missing}/c.cp", NO_FOLDER),
}

# writes into {ro} fail with EROFS: (arguments, the path the error must name)
ENVIRONMENT = {
    "checkpoint --out": (["checkpoint", "--out", "{ro}/c.checkpoint"], "{ro}/c.checkpoint"),
    "keys export --out": (["keys", "export", "--out", "{ro}/k.pub"], "{ro}/k.pub"),
    "keys new --out": (["keys", "new", "--out", "{ro}/x.key"], "{ro}/x.key"),
    "report --html": (["report", SLUG, "--html", "{ro}/r.html"], "{ro}/r.html"),
}


def _fill(template: str, named: dict[str, str]) -> str:
    for key, value in named.items():
        template = template.replace("{" + key + "}", value)
    assert "{" not in template, template
    return template


def _refused(r, code: int, path: str, phrase: str) -> None:
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert r.code == code, (r.code, r.err)
    assert len(lines) == 1 and lines[0].startswith("logbook: "), r.err  # one sentence
    assert "Traceback" not in r.err
    assert path in lines[0] and phrase in lines[0], r.err


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input(name: str, paths: dict[str, str], tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    key, args, path, phrase = BAD_INPUT[name]
    if key is not None:
        monkeypatch.setenv("LOGBOOK_KEY", _fill(key, paths))
    before = snapshot(tmp_path)
    r = run_cli(*[_fill(a, paths) for a in args])
    _refused(r, 2, _fill(path, paths), phrase)
    monkeypatch.delenv("LOGBOOK_KEY", raising=False)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("name", sorted(ENVIRONMENT))
def test_environment(name: str, paths: dict[str, str], tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder on read-only media (simulated: root may write anywhere) is exit 3."""
    args, path = ENVIRONMENT[name]
    ro = Path(paths["ro"])
    real_open = os.open

    def read_only_open(file, flags, *rest, **kw):  # type: ignore[no-untyped-def]
        if Path(os.fsdecode(file)).parent == ro and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(file))
        return real_open(file, flags, *rest, **kw)

    before = snapshot(tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(os, "open", read_only_open)
        r = run_cli(*[_fill(a, paths) for a in args])
    _refused(r, 3, _fill(path, paths), "cannot be written")
    assert snapshot(tmp_path) == before


def test_empty_logbook_key_names_the_default(ledger_dir: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """LOGBOOK_KEY= (empty) falls back to the default key; the error says so."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty-config"))
    monkeypatch.setenv("LOGBOOK_KEY", "")
    before = snapshot(tmp_path)
    r = run_cli("note", "hi")
    default = str(tmp_path / "empty-config" / "logbook" / "keys" / "default.key")
    _refused(r, 3, default, "LOGBOOK_KEY is empty")
    assert snapshot(tmp_path) == before
