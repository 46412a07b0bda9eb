"""Outside time (issue 39, item 2): `logbook checkpoint --timestamp URL` against a local
time-stamping authority (OpenSSL's `ts -reply` behind a loopback HTTP server, with a
throwaway root and TSA certificate made here), checked by logbook (`verify --tsa-cert`) and,
independently, by `openssl ts -verify`."""

from __future__ import annotations

import base64
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import run_cli

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None and not os.environ.get("CI"),
                                reason="the local TSA needs the openssl command")

CONFIG = """
[ req ]
distinguished_name = dn
[ dn ]
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {dir}
serial = {dir}/serial
signer_cert = {dir}/tsa.crt
certs = {dir}/tsa.crt
signer_key = {dir}/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
crypto_device = builtin
other_policies = 1.2.3.4.2
[ v3_tsa ]
basicConstraints = critical,CA:false
extendedKeyUsage = critical,timeStamping
keyUsage = critical,digitalSignature
[ v3_ca ]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
"""


def _openssl(*args: str, cwd: Path) -> bytes:
    assert OPENSSL is not None
    done = subprocess.run([OPENSSL, *args], cwd=cwd, capture_output=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


@dataclass
class Authority:
    url: str
    folder: Path
    ca: Path  # the root certificate (what an auditor trusts)
    chain: Path  # the TSA certificate and its root, as --tsa-cert takes them
    refuse: bool = False


def _make_authority(folder: Path, name: str) -> None:
    folder.mkdir(parents=True)
    (folder / "tsa.cnf").write_text(CONFIG.format(dir=folder))
    (folder / "serial").write_text("01\n")
    cnf = str(folder / "tsa.cnf")
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", "ca.key", "-out", "ca.crt", "-subj", f"/CN={name} Root", "-days", "30",
             "-config", cnf, "-extensions", "v3_ca", cwd=folder)
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", "tsa.key", "-out", "tsa.csr", "-subj", f"/CN={name} TSA", "-config",
             cnf, cwd=folder)
    _openssl("x509", "-req", "-in", "tsa.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "tsa.crt", "-days", "30", "-extfile", cnf,
             "-extensions", "v3_tsa", cwd=folder)
    (folder / "chain.pem").write_bytes((folder / "tsa.crt").read_bytes()
                                       + (folder / "ca.crt").read_bytes())


@pytest.fixture
def authority(tmp_path: Path) -> Iterator[Authority]:
    folder = tmp_path / "tsa"
    _make_authority(folder, "Test")
    lock = threading.Lock()
    made = Authority("", folder, folder / "ca.crt", folder / "chain.pem")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            query = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:  # openssl keeps its serial in a file
                (folder / "q.tsq").write_bytes(query)
                if made.refuse:  # a TSA that answers with a refusal (a bad request)
                    (folder / "q.tsq").write_bytes(b"\x30\x03\x02\x01\x01")
                done = subprocess.run([str(OPENSSL), "ts", "-reply", "-config",
                                       str(folder / "tsa.cnf"), "-queryfile",
                                       str(folder / "q.tsq"), "-out", str(folder / "r.tsr")],
                                      capture_output=True, timeout=60, check=False)
                answer = (folder / "r.tsr").read_bytes() if done.returncode == 0 else b""
            self.send_response(200 if answer else 500)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    made.url = f"http://127.0.0.1:{server.server_address[1]}/tsa"
    try:
        yield made
    finally:
        server.shutdown()
        server.server_close()


def _stamps() -> list[dict[str, object]]:
    r = run_cli("log", "--json")
    assert r.code == 0, r.err
    return [e for e in r.json if e["kind"] == "timestamp"]


def _body(seq: int) -> dict[str, object]:
    r = run_cli("show", f"@{seq}", "--json")
    assert r.code == 0, r.err
    return dict(r.json["entry"]["body"])


def test_a_stamped_checkpoint_verifies_with_logbook_and_openssl(
        ledger_dir: Path, authority: Authority, tmp_path: Path) -> None:
    assert run_cli("note", "before the checkpoint").code == 0
    r = run_cli("checkpoint", "--timestamp", authority.url, "--tsa-cert", str(authority.chain))
    assert r.code == 0, r.err
    assert "checkpoint at size 2 stamped by" in r.err and "(timestamp @2)" in r.err
    note = r.out
    [entry] = _stamps()
    body = _body(entry["seq"])
    assert body["size"] == 2 and body["tsa"] == authority.url

    # logbook: every entry, and the stamp under the TSA's certificate
    v = run_cli("verify", "--tsa-cert", str(authority.ca))
    assert v.code == 0, v.out + v.err
    assert f"checkpoint at size 2 existed by {body['time']} (TSA CN=Test TSA; timestamp @2)" \
        in v.out
    assert "timestamps" in v.out.splitlines()[-1]
    j = run_cli("verify", "--tsa-cert", str(authority.ca), "--json")
    assert j.json["timestamps"] == [{"seq": 2, "size": 2, "time": body["time"],
                                     "tsa": authority.url, "signer": "CN=Test TSA"}]

    # published with the tiles: a reader of the published folder checks the stamp too
    assert run_cli("publish", str(tmp_path / "site")).code == 0
    pub = run_cli("verify", str(tmp_path / "site"), "--tsa-cert", str(authority.ca))
    assert pub.code == 0, pub.out + pub.err
    assert f"checkpoint at size 2 existed by {body['time']}" in pub.out

    # OpenSSL, independently: the answer over the checkpoint's body (the note up to its
    # blank line), under the root certificate
    stamped = note.split("\n\n", 1)[0] + "\n"
    (tmp_path / "body.txt").write_text(stamped)
    (tmp_path / "answer.tsr").write_bytes(base64.b64decode(str(body["response"])))
    out = _openssl("ts", "-verify", "-data", str(tmp_path / "body.txt"), "-in",
                   str(tmp_path / "answer.tsr"), "-CAfile", str(authority.ca), "-untrusted",
                   str(authority.folder / "tsa.crt"), cwd=tmp_path)
    assert b"Verification: OK" in out
    # and another checkpoint's body is not what it stamps
    (tmp_path / "other.txt").write_text(stamped.replace("\n2\n", "\n3\n"))
    done = subprocess.run([str(OPENSSL), "ts", "-verify", "-data", str(tmp_path / "other.txt"),
                           "-in", str(tmp_path / "answer.tsr"), "-CAfile", str(authority.ca),
                           "-untrusted", str(authority.folder / "tsa.crt")],
                          capture_output=True, timeout=60, check=False)
    assert done.returncode != 0


def test_a_token_over_another_checkpoint_is_refused_and_found(
        ledger_dir: Path, authority: Authority, tmp_path: Path) -> None:
    assert run_cli("checkpoint", "--timestamp", authority.url).code == 0
    [first] = _stamps()
    old = _body(first["seq"])
    assert run_cli("note", "later").code == 0
    tree = run_cli("checkpoint", "--json")
    assert tree.code == 0, tree.err
    size, root = tree.json["size"], tree.json["root"]
    # the first answer passed off as a stamp of the later checkpoint: refused at the door
    forged = tmp_path / "forged.json"
    forged.write_text(__import__("json").dumps({"kind": "timestamp", "body": {
        **old, "size": size, "root": root}}))
    before = run_cli("log", "--json").json
    r = run_cli("append", str(forged))
    assert r.code == 2 and "body.response" in r.err and "another message" in r.err, r.err
    assert run_cli("log", "--json").json == before
    # a time that is not the token's: refused too
    forged.write_text(__import__("json").dumps({"kind": "timestamp", "body": {
        **old, "time": "2020-01-01T00:00:00Z"}}))
    r = run_cli("append", str(forged))
    assert r.code == 2 and "body.time" in r.err, r.err
    # signed by another TSA than the one the auditor names: verify fails, naming it
    other = tmp_path / "other"
    _make_authority(other, "Other")
    v = run_cli("verify", "--tsa-cert", str(other / "ca.crt"))
    assert v.code == 1
    assert f"entry {first['seq']}: the timestamp of size {old['size']} is not signed by the " \
           "TSA --tsa-cert names" in v.out


def test_a_refusing_tsa_keeps_the_checkpoint_and_appends_nothing(
        ledger_dir: Path, authority: Authority) -> None:
    authority.refuse = True
    r = run_cli("checkpoint", "--timestamp", authority.url)
    assert r.code == 3 and "refused to stamp" in r.err, r.err
    assert r.out.startswith("logbook/")  # the checkpoint was made and shown
    assert run_cli("log", "--checkpoints", "--json").code == 0
    assert _stamps() == []


@pytest.mark.parametrize(("args", "field"), [
    (["--tsa-cert", "ca.pem"], "--tsa-cert goes with --timestamp"),
    (["--timestamp", "ftp://example.org/tsa"], "--timestamp ftp://example.org/tsa"),
    (["--timestamp", "http://127.0.0.1:9/tsa", "--tsa-cert", "missing.pem"], "missing.pem"),
])
def test_bad_timestamp_options_change_nothing(ledger_dir: Path, args: list[str],
                                              field: str) -> None:
    before = run_cli("log", "--checkpoints", "--json").json
    r = run_cli("checkpoint", *args)
    assert r.code == 2 and field in r.err, r.err
    assert run_cli("log", "--checkpoints", "--json").json == before


def test_verify_names_a_tsa_certificate_that_is_not_one(ledger_dir: Path,
                                                        tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate")
    r = run_cli("verify", "--tsa-cert", str(bad))
    assert r.code == 2 and "--tsa-cert" in r.err, r.err


def test_credentials_in_the_tsa_url_are_not_kept(ledger_dir: Path, authority: Authority) -> None:
    url = authority.url.replace("http://", "http://someone:s3cret@")
    r = run_cli("checkpoint", "--timestamp", url)
    assert r.code == 0, r.err
    assert "s3cret" not in r.err
    [entry] = _stamps()
    assert _body(entry["seq"])["tsa"] == authority.url
