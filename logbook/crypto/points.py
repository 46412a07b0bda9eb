"""Which 32-byte strings are acceptable Ed25519 points, for public keys and signatures' R.

Pure integer arithmetic on edwards25519 as RFC 8032 §5.1 specifies it (field p = 2^255 - 19,
d = -121665/121666, group order L); nothing here signs or verifies. Two rules, libsodium's:

* a point of small order (one of the 8 points P with 8·P = identity: the identity, the point
  of order 2, two of order 4 and four of order 8) is refused as a public key and as a
  signature's R, in every encoding (either sign bit, and y + p where that fits in 255 bits);
  under such a key anyone can forge a signature (R = identity, S = 0);
* a non-canonical encoding (the 255-bit y at least p) is refused as a public key.

Public keys entering a ledger are checked further (``public_key_problem``): the encoding must
decode to a point of the curve (RFC 8032 §5.1.3) in the prime-order subgroup (L·A = identity),
as every key made from a private seed is.

The small-order encodings are computed, not copied: the torsion subgroup is found as L·Q for a
curve point Q with a component of order 8, and its 8 multiples are encoded.
"""

from __future__ import annotations

import functools

P = 2**255 - 19
D = -121665 * pow(121666, P - 2, P) % P
L = 2**252 + 27742317777372353535851937790883648493  # the prime order of the base point
SQRT_M1 = pow(2, (P - 1) // 4, P)

Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z
IDENTITY: Point = (0, 1, 1, 0)


def _add(a: Point, b: Point) -> Point:
    """RFC 8032 §5.1.4 point addition (complete for edwards25519)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % P
    bb = (y1 + x1) * (y2 + x2) % P
    cc = 2 * t1 * t2 * D % P
    dd = 2 * z1 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _mul(k: int, a: Point) -> Point:
    out, add = IDENTITY, a
    while k:
        if k & 1:
            out = _add(out, add)
        add = _add(add, add)
        k >>= 1
    return out


def _is_identity(a: Point) -> bool:
    x, y, z, _ = a
    return x % P == 0 and (y - z) % P == 0


def _affine(a: Point) -> tuple[int, int]:
    zi = pow(a[2], P - 2, P)
    return a[0] * zi % P, a[1] * zi % P


def _x_from_y(y: int, sign: int) -> int | None:
    """RFC 8032 §5.1.3 step 2-4: x with x^2 = (y^2 - 1) / (d y^2 + 1) and the given sign."""
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if v * x * x % P == (-u) % P:
        x = x * SQRT_M1 % P
    elif v * x * x % P != u:
        return None  # not on the curve
    if x == 0 and sign:
        return None
    return P - x if x & 1 != sign else x


def decode(encoding: bytes) -> Point | None:
    """The point a 32-byte canonical encoding names, or None (wrong length, y >= p, not on
    the curve, or x = 0 with the sign bit set)."""
    if len(encoding) != 32:
        return None
    n = int.from_bytes(encoding, "little")
    y, sign = n & ((1 << 255) - 1), n >> 255
    if y >= P:
        return None
    x = _x_from_y(y, sign)
    return None if x is None else (x, y, 1, x * y % P)


def encode(a: Point) -> bytes:
    x, y = _affine(a)
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


@functools.cache
def small_order_encodings() -> frozenset[bytes]:
    """Every 32-byte string that names a point of small order: both sign bits, and the
    non-canonical y + p where it fits (libsodium's blocklist, as computed here)."""
    torsion = None
    for y in range(2, 1000):
        x = _x_from_y(y, 0)
        if x is None:
            continue
        t = _mul(L, (x, y, 1, x * y % P))  # the torsion component of this point
        if not _is_identity(_mul(4, t)):  # of order 8: it generates the whole subgroup
            torsion = t
            break
    assert torsion is not None, "some small y gives a point with an order-8 component"
    out: set[bytes] = set()
    for k in range(8):
        point = _mul(k, torsion)
        assert _is_identity(_mul(8, point))
        _, y = _affine(point)
        for value in (y, y + P):
            if value < 1 << 255:
                out.add(value.to_bytes(32, "little"))
                out.add((value | 1 << 255).to_bytes(32, "little"))
    return frozenset(out)


def has_small_order(encoding: bytes) -> bool:
    """True when ``encoding`` names a point of small order, in any encoding of it."""
    return bytes(encoding) in small_order_encodings()


def is_canonical(encoding: bytes) -> bool:
    """True when the 255-bit y of ``encoding`` is below p (libsodium's ge25519_is_canonical)."""
    return len(encoding) == 32 and int.from_bytes(encoding, "little") & ((1 << 255) - 1) < P


def public_key_problem(encoding: bytes) -> str | None:
    """Why ``encoding`` cannot be a public key of a ledger, or None when it can."""
    if len(encoding) != 32:
        return f"it is {len(encoding)} bytes, not 32"
    if has_small_order(encoding):
        return "it is a point of small order, under which anyone can forge signatures"
    if not is_canonical(encoding):
        return "it is not a canonical encoding of a point (its y is not below 2^255 - 19)"
    point = decode(encoding)
    if point is None:
        return "it is not a point of the Ed25519 curve"
    if not _is_identity(_mul(L, point)):
        return "it is not in the prime-order subgroup (no private key makes such a key)"
    return None


def signature_problem(public: bytes, signature: bytes) -> str | None:
    """libsodium's rules before the verification equation: the key canonical and not of small
    order, the signature's R not of small order, its S below L."""
    if len(signature) != 64:
        return "the signature is not 64 bytes"
    if has_small_order(public) or not is_canonical(public):
        return "the key is of small order or not canonical"
    if has_small_order(signature[:32]):
        return "the signature's R is of small order"
    if int.from_bytes(signature[32:], "little") >= L:
        return "the signature's S is not below the group order"
    return None
