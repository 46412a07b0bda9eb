"""`logbook witness serve | key`: run a C2SP tlog-witness for logbook ledgers (or any log
that signs C2SP checkpoints with Ed25519), and print its verifier key."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from logbook.errors import EnvironmentProblem, InputError

if TYPE_CHECKING:
    from logbook.crypto.signing import SigningKey

witness_app = typer.Typer(help="Run a witness that cosigns checkpoints (C2SP tlog-witness).",
                          no_args_is_help=True)

NAME_HELP = ("The witness's name in its cosignature lines (default: logbook-witness/ and the "
             "first 16 hex digits of its key's fingerprint).")


def _load(key_file: str, name: str | None) -> tuple[SigningKey, str]:
    from logbook.crypto.signing import SigningKey

    key = SigningKey.read(Path(key_file), "--key")
    return key, name or f"logbook-witness/{key.public.fingerprint[:16]}"


def _vkey(key: SigningKey, name: str) -> str:
    from logbook.verify.cosignatures import WitnessKey

    try:
        return WitnessKey(name, key.public.raw).vkey
    except InputError as exc:
        raise InputError(f"--name: {exc}") from None


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InputError(f"--listen {value!r} is not HOST:PORT (a port of 0 to 65535)")
    return host.strip("[]"), int(port)


@witness_app.command()
def serve(
    key_file: str = typer.Option(..., "--key", help="The witness's private key file (`logbook "
                                 "keys new --out FILE` makes one); never a ledger's key."),
    logs: list[str] = typer.Option(..., "--log", help="ORIGIN=VERIFIER_KEY of a log to "
                                   "witness, or the log's verifier key alone when its name is "
                                   "its origin, as a ledger's is (repeatable)."),
    state_file: str = typer.Option(..., "--state", help="The file keeping the latest "
                                   "checkpoint cosigned per log (created if missing)."),
    listen: str = typer.Option("127.0.0.1:0", "--listen", help="HOST:PORT to listen on "
                               "(default: a free port on the loopback address)."),
    name: str = typer.Option(None, "--name", help=NAME_HELP),
) -> None:
    """Cosign checkpoints that extend the last one seen: POST /add-checkpoint.

    Prints one line on stderr when it listens (its URL and verifier key) and stops cleanly
    on SIGTERM or SIGINT.
    """
    from logbook.witness.server import Witness, parse_log
    from logbook.witness.server import serve as run_server
    from logbook.witness.state import WitnessState

    parsed = [parse_log(v) for v in logs]
    host, port = _listen(listen)
    key, witness_name = _load(key_file, name)
    vkey = _vkey(key, witness_name)
    state = WitnessState(Path(state_file))
    state.check()
    witness = Witness(witness_name, key, parsed, state)

    def ready(url: str) -> None:
        print(f"logbook witness: listening on {url} as {vkey} for {len(parsed)} log(s), "
              f"state {state_file}", file=sys.stderr, flush=True)

    try:
        run_server(witness, host, port, ready)
    except OSError as exc:
        raise EnvironmentProblem(f"--listen {listen} cannot be used: {exc.strerror}") from None


@witness_app.command("key")
def key_command(
    key_file: str = typer.Option(..., "--key", help="The witness's private key file."),
    name: str = typer.Option(None, "--name", help=NAME_HELP),
) -> None:
    """Print the witness's verifier key (what `--witness` takes) for its key and name."""
    key, witness_name = _load(key_file, name)
    print(_vkey(key, witness_name))


def register(app: typer.Typer) -> None:
    app.add_typer(witness_app, name="witness")
