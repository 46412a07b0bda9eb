"""`logbook witness serve` (issue 19): a C2SP tlog-witness, run as a user runs it (a process
on a loopback port), asked with raw `add-checkpoint` requests built from the spec's text.

Every status code the spec names, and the cosignature checked by a verifier written here from
C2SP tlog-cosignature (key id, signed message, timestamped signature), not logbook's own.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path

import orjson
from builders import draft, write_jsonl
from conftest import run_cli
from running import log_vkey, ok, post, request_body, running_witness, witness_key, witness_public

NAME = "witness.test/w1"


def grow(work: Path, n: int, tag: str, ledger: Path | None = None) -> None:
    drafts = [draft("note", {"text": f"{tag} {i}", "refs": []}) for i in range(n)]
    batch = str(write_jsonl(work / f"{tag}.jsonl", drafts))
    ok(*(["--ledger", str(ledger)] if ledger else []), "append", "--jsonl", batch)


def checkpoint(path: Path, ledger: Path | None = None) -> str:
    pre = ["--ledger", str(ledger)] if ledger is not None else []
    ok(*pre, "checkpoint", "--out", str(path))
    return path.read_text()


def proof(old: Path, new: Path, ledger: Path | None = None) -> list[str]:
    pre = ["--ledger", str(ledger)] if ledger is not None else []
    r = ok(*pre, "prove", "--consistency", str(old), "--to", str(new), "--json")
    return list(r.json["path"])


def independent_check(note: str, line: str, name: str, public: bytes) -> int:
    """C2SP tlog-cosignature, read off the spec: `— <name> base64(key ID || u64 timestamp ||
    Ed25519 signature)`, key ID = SHA-256(name || "\\n" || 0x04 || key)[:4], signed message =
    "cosignature/v1\\n" "time <ts>\\n" + the checkpoint's note body. Returns the timestamp."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    assert line.startswith("\u2014 " + name + " ") and line.endswith("\n")
    blob = base64.b64decode(line.rstrip("\n").split(" ")[2], validate=True)
    assert len(blob) == 4 + 8 + 64
    assert blob[:4] == hashlib.sha256(name.encode() + b"\n" + b"\x04" + public).digest()[:4]
    timestamp = int.from_bytes(blob[4:12], "big")
    body = note[: note.index("\n\n") + 1]
    message = b"cosignature/v1\n" + f"time {timestamp}\n".encode() + body.encode()
    Ed25519PublicKey.from_public_bytes(public).verify(blob[12:], message)  # raises if bad
    return timestamp


def test_every_status_code_of_add_checkpoint(ledger_dir: Path, tmp_path: Path) -> None:
    grow(ledger_dir, 3, "a")
    vkey = log_vkey()
    key = witness_key(tmp_path / "keys", "w1")
    other = tmp_path / "other"
    other.mkdir()
    ok("init", str(other), "--name", "other")
    other_vkey = log_vkey(other)
    origin = vkey.split("+")[0]
    state = tmp_path / "w1.state"
    cps = tmp_path / "cps"
    cps.mkdir()
    with running_witness(key, [vkey], state, NAME) as w:
        first = checkpoint(cps / "a4")
        # 200 from old 0: one cosignature line, verified from the spec's text
        status, body, _ = post(w.url, request_body(0, [], first))
        assert status == 200, body
        when = independent_check(first, body.decode(), NAME, witness_public(key))
        assert when > 1_700_000_000
        held = orjson.loads(state.read_bytes())["logs"][origin]
        assert held["size"] == 4 and held["note"] == first
        # 409: the old size is stale; the body is the size held, as text/x.tlog.size
        grow(ledger_dir, 2, "b")
        second = checkpoint(cps / "b6")
        status, body, ctype = post(w.url, request_body(0, [], second))
        assert (status, body, ctype) == (409, b"4\n", "text/x.tlog.size")
        # 422: a consistency proof that does not verify
        good = proof(cps / "a4", cps / "b6")
        bad = [good[0][::-1], *good[1:]]
        status, body, _ = post(w.url, request_body(4, bad, second))
        assert status == 422 and b"does not verify" in body
        # 200 with the right proof; the witness now holds 6
        status, body, _ = post(w.url, request_body(4, good, second))
        assert status == 200, body
        independent_check(second, body.decode(), NAME, witness_public(key))
        # the same checkpoint again from 6: cosigned again (a witness re-cosigns its latest)
        assert post(w.url, request_body(6, [], second))[0] == 200
        # 400: old size above the checkpoint's (a log going backwards), and malformed bodies
        status, body, _ = post(w.url, request_body(6, [], first))
        assert status == 400 and b"larger than the checkpoint" in body
        assert post(w.url, b"old 07\n\n" + second.encode())[0] == 400
        assert post(w.url, b"old 0\n" + second.encode())[0] == 400
        assert post(w.url, request_body(0, [], "not a checkpoint\n"))[0] == 400
        # 404: a log the witness does not follow
        foreign = checkpoint(cps / "other", other)
        status, body, _ = post(w.url, request_body(0, [], foreign))
        assert status == 404 and b"unknown log" in body
        # 403: the log's origin, but no signature by the key the witness holds for it
        cut = first[: first.index("\n\n") + 2]
        forged = cut + foreign[foreign.index("\n\n") + 2:]
        status, body, _ = post(w.url, request_body(6, [], forged.replace("\n4\n", "\n6\n")))
        assert status == 403 and b"not signed" in body
        status, body, _ = post(w.url, request_body(0, [], cut + "\u2014 " + origin + " " +
                                                   base64.b64encode(bytes(68)).decode() + "\n"))
        assert status == 403 and b"not signed" in body
        assert orjson.loads(state.read_bytes())["logs"][origin]["size"] == 6
    # the state survives a restart: the restarted witness still holds 6
    with running_witness(key, [vkey, f"{origin}={other_vkey}"], state, NAME) as w:
        assert post(w.url, request_body(0, [], first))[:2] == (409, b"6\n")


def test_a_fork_at_the_same_size_is_refused_and_the_held_root_kept(ledger_dir: Path,
                                                                   tmp_path: Path) -> None:
    grow(ledger_dir, 3, "common")
    copy = tmp_path / "copy"
    shutil.copytree(ledger_dir / ".logbook", copy / ".logbook")
    vkey = log_vkey()
    grow(ledger_dir, 2, "real")
    grow(copy, 2, "forged", ledger=copy)
    cps = tmp_path / "cps"
    cps.mkdir()
    real, forged = checkpoint(cps / "real"), checkpoint(cps / "forged", copy)
    assert real.split("\n")[1] == forged.split("\n")[1] and real != forged
    key = witness_key(tmp_path / "keys", "w1")
    state = tmp_path / "w1.state"
    with running_witness(key, [vkey], state, NAME) as w:
        assert post(w.url, request_body(0, [], real))[0] == 200
        # C2SP: the old size matches, the root does not: 409 naming the size held
        assert post(w.url, request_body(6, [], forged))[:2] == (409, b"6\n")
    origin = vkey.split("+")[0]
    held = orjson.loads(state.read_bytes())["logs"][origin]
    assert held["note"] == real


def test_serve_refuses_bad_options_with_one_sentence(tmp_path: Path, ledger_dir: Path) -> None:
    key = witness_key(tmp_path / "keys", "w1")
    vkey = log_vkey()
    state = str(tmp_path / "s")
    r = run_cli("witness", "serve", "--key", str(key), "--log", "nonsense", "--state", state)
    assert r.code == 2 and "--log nonsense" in r.err
    r = run_cli("witness", "serve", "--key", str(key), "--log", vkey, "--state", state,
                "--listen", "localhost")
    assert r.code == 2 and "--listen" in r.err
    r = run_cli("witness", "serve", "--key", str(key), "--log", vkey, "--state",
                str(tmp_path / "missing" / "s"))
    assert r.code == 3 and "does not exist" in r.err
    (tmp_path / "bad.state").write_text("{}")
    r = run_cli("witness", "serve", "--key", str(key), "--log", vkey, "--state",
                str(tmp_path / "bad.state"))
    assert r.code == 2 and "not a logbook witness state" in r.err
    r = run_cli("witness", "key", "--key", str(key), "--name", "a b")
    assert r.code == 2 and "--name" in r.err
    r = run_cli("witness", "--help")
    assert r.code == 0 and "serve" in r.out


def test_oversized_requests_other_calls_and_a_lost_state_are_refused(ledger_dir: Path,
                                                                     tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    vkey = log_vkey()
    key = witness_key(tmp_path / "keys", "w1")
    state = tmp_path / "w1.state"
    note = checkpoint(tmp_path / "cp")
    with running_witness(key, [vkey], state, NAME) as w:
        # a body announced above the bound is refused before it is read
        import http.client

        conn = http.client.HTTPConnection(w.url.removeprefix("http://"), timeout=30)
        conn.putrequest("POST", "/add-checkpoint")
        conn.putheader("Content-Length", str(200 * 1024))
        conn.endheaders()
        assert conn.getresponse().status == 413
        conn.close()
        try:
            urllib.request.urlopen(w.url + "/add-checkpoint", timeout=30)
            raise AssertionError("GET was answered")
        except urllib.error.HTTPError as exc:
            assert exc.code == 405
        request = urllib.request.Request(w.url + "/other", data=b"", method="POST")
        try:
            urllib.request.urlopen(request, timeout=30)
            raise AssertionError("POST /other was answered")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
        # a state that can no longer be read (here: a folder in its place): nothing cosigned
        state.unlink(missing_ok=True)
        state.mkdir()
        status, body, _ = post(w.url, request_body(0, [], note))
        assert status == 500 and b"nothing was cosigned" in body
        state.rmdir()
        assert post(w.url, request_body(0, [], note))[0] == 200
