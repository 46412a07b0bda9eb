"""A throwaway time-stamping authority for the audit's calibration and self-test: it answers
an RFC 3161 request with a real, signed token (DER built here, ECDSA P-256 under a self-signed
certificate with the timeStamping purpose) at a time the scenario chooses, so that the rules on
stamped times (A31, A32) are measured on ledgers like those `logbook checkpoint --timestamp`
makes. Never for real stamps: its key comes from a seed and its clock is whatever it is told.

Its tokens parse and verify with rfc3161-client and `openssl ts -verify`
(tests/calibration/test_tsa.py); signatures are deterministic (RFC 6979), so a scenario built
twice is the same bytes.
"""

from __future__ import annotations

import datetime
import hashlib
from functools import cached_property

_SHA256 = "2.16.840.1.101.3.4.2.1"
_ECDSA_SHA256 = "1.2.840.10045.4.3.2"
_SIGNED_DATA = "1.2.840.113549.1.7.2"
_TST_INFO = "1.2.840.113549.1.9.16.1.4"
_CONTENT_TYPE = "1.2.840.113549.1.9.3"
_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
_SIGNING_CERT_V2 = "1.2.840.113549.1.9.16.2.47"
_POLICY = "1.3.6.1.4.1.0.31"  # a private arc: calibration only


def _length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def _tlv(tag: int, value: bytes) -> bytes:
    return bytes([tag]) + _length(len(value)) + value


def _int(n: int) -> bytes:
    return _tlv(0x02, n.to_bytes(n.bit_length() // 8 + 1, "big", signed=True))


def _oid(dotted: str) -> bytes:
    parts = [int(p) for p in dotted.split(".")]
    out = bytearray([40 * parts[0] + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        while p > 0x7F:
            p >>= 7
            chunk.append(0x80 | (p & 0x7F))
        out += bytes(reversed(chunk))
    return _tlv(0x06, bytes(out))


def _seq(*items: bytes) -> bytes:
    return _tlv(0x30, b"".join(items))


def _set(*items: bytes) -> bytes:
    return _tlv(0x31, b"".join(sorted(items)))  # DER: a SET OF in sorted order


def _octets(data: bytes) -> bytes:
    return _tlv(0x04, data)


def _explicit(n: int, value: bytes) -> bytes:
    return _tlv(0xA0 + n, value)


class Authority:
    """A TSA whose key is made from ``seed`` (32 bytes)."""

    def __init__(self, seed: bytes, name: str = "logbook calibration TSA") -> None:
        from cryptography.hazmat.primitives.asymmetric import ec

        scalar = int.from_bytes(hashlib.sha256(seed).digest(), "big") % (2**255) + 1
        self.key = ec.derive_private_key(scalar, ec.SECP256R1())
        self.name = name

    @cached_property
    def certificate(self) -> bytes:
        """Its self-signed certificate (DER), for the timeStamping purpose only."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.serialization import Encoding
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, self.name)])
        start = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                .public_key(self.key.public_key()).serial_number(1)
                .not_valid_before(start).not_valid_after(start.replace(year=2999))
                .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                               critical=True)
                .add_extension(x509.KeyUsage(True, False, False, False, False, False, False,
                                             False, False), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]),
                               critical=True)
                .sign(self.key, hashes.SHA256(), ecdsa_deterministic=True))
        return cert.public_bytes(Encoding.DER)

    def answer(self, message: bytes, when: datetime.datetime, serial: int) -> bytes:
        """A granted answer (a DER TimeStampResp) stamping SHA-256 of ``message`` at
        ``when`` (whole seconds, UTC)."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        stamp = when.astimezone(datetime.UTC).strftime("%Y%m%d%H%M%SZ").encode()
        tst_info = _seq(_int(1), _oid(_POLICY),
                        _seq(_seq(_oid(_SHA256)), _octets(hashlib.sha256(message).digest())),
                        _int(serial), _tlv(0x18, stamp))
        cert = x509.load_der_x509_certificate(self.certificate)
        ess = _seq(_seq(_seq(_octets(hashlib.sha256(self.certificate).digest()))))
        attrs = [_seq(_oid(_CONTENT_TYPE), _set(_oid(_TST_INFO))),
                 _seq(_oid(_MESSAGE_DIGEST), _set(_octets(hashlib.sha256(tst_info).digest()))),
                 _seq(_oid(_SIGNING_CERT_V2), _set(ess))]
        signed = _set(*attrs)
        signature = self.key.sign(signed, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
        issuer = cert.issuer.public_bytes()
        signer_info = _seq(_int(1), _seq(issuer, _int(cert.serial_number)),
                           _seq(_oid(_SHA256)), _tlv(0xA0, signed[2 if signed[1] < 0x80 else
                                                            2 + (signed[1] & 0x7F):]),
                           _seq(_oid(_ECDSA_SHA256)), _octets(signature))
        signed_data = _seq(_int(3), _set(_seq(_oid(_SHA256))),
                           _seq(_oid(_TST_INFO), _explicit(0, _octets(tst_info))),
                           _tlv(0xA0, self.certificate), _set(signer_info))
        token = _seq(_oid(_SIGNED_DATA), _explicit(0, signed_data))
        return _seq(_seq(_int(0)), token)
