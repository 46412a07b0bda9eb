"""`logbook keys list | new | add | revoke | export` (DESIGN §4.3)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import typer

from logbook.cli import state
from logbook.errors import InputError

keys_app = typer.Typer(help="Signing keys: list, new, add, revoke, export.",
                       no_args_is_help=True)


def _public_from(value: str, argument: str) -> str:
    """Base64 public key from an exported public-key file, or base64 given directly."""
    from logbook.crypto.public import PublicKey, WeakKey, read_trust

    path = Path(value)
    if path.exists():  # a directory or a binary is refused by read_trust, naming ARGUMENT
        _, pk = read_trust(value, argument)
        if pk is None:  # pragma: no cover - read_trust returns a key for files
            raise InputError(f"{value} holds no public key")
        return pk.b64
    try:
        return PublicKey.from_b64(value).b64
    except WeakKey as exc:
        raise InputError(f"{argument}: the {exc}") from None
    except InputError:
        raise InputError(f"{value!r} is not a key of this ledger, a public-key file (from "
                         "`logbook keys export`) or a base64 public key") from None


@keys_app.command("list")
def list_keys(as_json: bool = state.json_flag()) -> None:
    """The ledger's signing keys, with when they were added and revoked."""
    with state.open_ledger() as ledger:
        rows = ledger.reads.signing_keys()
    out = [{"fingerprint": fp, "name": name, "public": pub, "added_seq": added,
            "revoked_seq": revoked, "valid": revoked is None}
           for fp, name, pub, added, revoked in rows]
    if as_json:
        state.emit_json(out)
        return
    for k in out:
        status = "valid" if k["valid"] else f"revoked at @{k['revoked_seq']}"
        print(f"{k['fingerprint']}  {k['name']:<12} added @{k['added_seq']}  {status}")


@keys_app.command("new")
def new(out: Path = typer.Option(None, "--out", help="Where to write the private key "
                                 "(default: LOGBOOK_KEY or the default key path).")) -> None:
    """Create a new private key file (mode 0600); prints its public fingerprint."""
    from logbook.crypto.signing import SigningKey, default_key_path, key_path_name

    path = out or default_key_path()
    what = "--out" if out is not None else key_path_name()
    key = SigningKey.generate()
    # refuses a directory and an existing file; --out must name a file in an existing folder,
    # while the default key's folder is created
    key.write(path, what, parents=out is None)
    print(f"created {path}", file=sys.stderr)
    print(key.public.fingerprint)


@keys_app.command("add")
def add(
    public: str = typer.Argument(..., help="Public-key file (from `keys export`) or base64."),
    name: str = typer.Option(..., "--name", help="Whose key it is (a person or an agent)."),
    reason: str = typer.Option(..., "--reason", help="Why the key is added (recorded in "
                               "the ledger)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Register another signing key, in an entry signed by a key valid now."""
    from logbook.cli.state import print_appended
    from logbook.cli.write import _key

    body = {"action": "add", "name": name, "public": _public_from(public, "PUBLIC"),
            "reason": reason}
    key = _key()
    with state.open_ledger(write=True) as ledger:
        print_appended([ledger.append("key", body, key)], as_json)


@keys_app.command("revoke")
def revoke(
    ref: str = typer.Argument(..., help="Fingerprint, public-key file or base64 key."),
    reason: str = typer.Option(..., "--reason", help="Why the key is revoked (recorded in "
                               "the ledger)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Revoke a signing key: entries it signs after this point fail verification."""
    from logbook.cli.state import print_appended
    from logbook.cli.write import _key

    key = _key()
    with state.open_ledger(write=True) as ledger:
        known = {fp: (name, pub) for fp, name, pub, _, _ in ledger.reads.signing_keys()}
        if ref.lower() in known:
            name, pub = known[ref.lower()]
        else:
            pub = _public_from(ref, "REF")
            name = next((n for n, p in known.values() if p == pub), "key")
        body = {"action": "revoke", "name": name, "public": pub, "reason": reason}
        print_appended([ledger.append("key", body, key)], as_json)


@keys_app.command("export")
def export(
    fingerprint: str = typer.Argument(None, help="A key of the ledger; default: your own "
                                      "signing key."),
    out: Path = typer.Option(None, "--out", help="File to write the public key to "
                             "(default: stdout)."),
) -> None:
    """Print a public key in the form `--trust` takes."""
    from logbook.crypto.public import PublicKey, public_key_text
    from logbook.crypto.signing import load_key
    from logbook.files import check_writable, write_atomic

    if out is not None:
        check_writable(out, "--out")
    if fingerprint is None:
        key = load_key(for_signing=False)  # only its public half is printed
        text = public_key_text(key.public, "default")
    else:
        with state.open_ledger() as ledger:
            rows = {fp: (n, p) for fp, n, p, _, _ in ledger.reads.signing_keys()}
        if fingerprint.lower() not in rows:
            raise InputError(f"FINGERPRINT {fingerprint} is not a key of this ledger")
        name, pub = rows[fingerprint.lower()]
        text = public_key_text(PublicKey(base64.b64decode(pub)), name)
    if out is not None:
        write_atomic(out, text, "--out")
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
