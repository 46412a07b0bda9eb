"""RFC 3161 time-stamp tokens over checkpoints (docs/format.md, "Timestamps").

A checkpoint's time is its owner's clock. A time-stamping authority (TSA) signs instead that a
hash existed by a time it states: the hash here is SHA-256 of the checkpoint's body (the text a
C2SP checkpoint's signatures cover: origin, size and root, one per line; logbook.tlog.checkpoint
`body_text`), so a token proves that the ledger's tree of that size, with that root, existed
by then.

`request` makes the query `logbook checkpoint --timestamp URL` sends; `read_response` accepts
an answer only when it grants a token over that very body (SHA-256, the nonce sent); `check`
verifies a kept answer's signature against the TSA certificate an auditor names (`logbook
verify --tsa-cert`). The parsing and signature checks are rfc3161-client's (Trail of Bits, on
the Rust `cryptography` stack), not code of ours. Nothing here signs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from logbook.errors import InputError

if TYPE_CHECKING:
    from cryptography.x509 import Certificate

MAX_RESPONSE_BYTES = 256 * 1024  # a TSA's answer, its certificates included
SHA256_OID = "2.16.840.1.101.3.4.2.1"
_GRANTED = (0, 1)  # granted, grantedWithMods (RFC 3161 §2.4.2)


@dataclass(frozen=True)
class Stamp:
    """What a granted answer says: when (RFC 3339, UTC, as the token states it), its serial
    number, and the subject of the certificate it names, when it carries one."""

    time: str
    serial: int
    signer: str | None


def request(message: bytes) -> tuple[bytes, int]:
    """The DER query for a token over SHA-256 of ``message`` (with a fresh nonce, asking the
    TSA to include its certificate), and that nonce."""
    import rfc3161_client as tsp

    built = (tsp.TimestampRequestBuilder().data(message)
             .hash_algorithm(tsp.HashAlgorithm.SHA256)
             .nonce(nonce=True).cert_request(cert_request=True).build())
    nonce = built.nonce
    assert nonce is not None  # asked for above
    return built.as_bytes(), int(nonce)


def rfc3339(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if when.microsecond == 0 \
        else when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _decoded(der: bytes, what: str) -> Any:
    import rfc3161_client as tsp

    if len(der) > MAX_RESPONSE_BYTES:
        raise InputError(f"{what} is {len(der)} bytes, more than the {MAX_RESPONSE_BYTES} a "
                         "time-stamp answer may hold")
    try:
        return tsp.decode_timestamp_response(der)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{what} is not an RFC 3161 time-stamp answer ({exc})") from None
    except Exception as exc:  # the Rust parser's own errors
        raise InputError(f"{what} is not an RFC 3161 time-stamp answer "
                         f"({type(exc).__name__}: {exc})") from None


def read_response(der: bytes, message: bytes, what: str, nonce: int | None = None) -> Stamp:
    """The stamp a DER answer grants over SHA-256 of ``message``; InputError naming ``what``
    when it is not one (refused, another hash, another message, another nonce)."""
    resp = _decoded(der, what)
    status = int(resp.status)
    if status not in _GRANTED:
        said = getattr(resp, "status_string", None)
        raise InputError(f"{what}: the TSA refused to stamp (status {status}"
                         + (f": {'; '.join(map(str, said))}" if said else "") + ")")
    info = resp.tst_info
    imprint = info.message_imprint
    if imprint.hash_algorithm.dotted_string != SHA256_OID:
        raise InputError(f"{what}: the token stamps a hash of another algorithm "
                         f"({imprint.hash_algorithm.dotted_string}), not SHA-256")
    if bytes(imprint.message) != hashlib.sha256(message).digest():
        raise InputError(f"{what}: the token stamps another message than this checkpoint's "
                         "body")
    if nonce is not None and info.nonce != nonce:
        raise InputError(f"{what}: the token answers another request (its nonce is not the "
                         "one sent)")
    return Stamp(rfc3339(info.gen_time), int(info.serial_number), _signer(resp))


def _signer(resp: Any) -> str | None:
    from cryptography import x509

    try:
        certs = resp.signed_data.certificates or []
        if not certs:
            return None
        cert = x509.load_der_x509_certificate(bytes(next(iter(certs))))
        return cert.subject.rfc4514_string()
    except Exception:  # a certificate we cannot read is no name: the check says more
        return None


def load_certificates(data: bytes, what: str) -> list[Certificate]:
    """The certificates of a PEM file (several, in any order) or of one DER certificate."""
    from cryptography import x509

    try:
        if b"-----BEGIN" in data:
            certs = x509.load_pem_x509_certificates(data)
        else:
            certs = [x509.load_der_x509_certificate(data)]
    except ValueError as exc:
        raise InputError(f"{what} holds no X.509 certificate ({exc})") from None
    if not certs:
        raise InputError(f"{what} holds no X.509 certificate")
    return certs


def check(der: bytes, message: bytes, certs: list[Certificate]) -> str | None:
    """None when the answer's token over ``message`` is signed by the TSA the certificates
    name, else why not. ``certs``: the TSA's certificate and the certificates it chains to;
    those that sign themselves are the roots trusted (with none, the TSA's own certificate)."""
    import rfc3161_client as tsp

    roots = [c for c in certs if c.issuer == c.subject]
    leaves = [c for c in certs if c.issuer != c.subject]
    builder = tsp.VerifierBuilder()
    for root in roots or certs[:1]:
        builder = builder.add_root_certificate(root)
    if leaves:
        builder = builder.tsa_certificate(leaves[0])
        for middle in leaves[1:]:
            builder = builder.add_intermediate_certificate(middle)
    try:
        resp = tsp.decode_timestamp_response(der)
        builder.build().verify_message(resp, message)
    except Exception as exc:  # VerificationError, and the parser's own
        return " ".join(str(exc).split()) or type(exc).__name__
    return None
