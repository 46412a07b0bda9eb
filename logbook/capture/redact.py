"""The one redaction policy: what counts as a secret, and how it is taken out of everything
that can reach the ledger, its blobs or any output (docs/recording.md).

* Names: a variable, option or key whose name says secret (``is_secret_name``: key, token,
  secret, password, credential, auth, cookie, session id, private; not max_tokens, author).
* Free text (the command's output and logs, reasons, notes, item error texts, command lines):
  ``scrub_text`` replaces known key shapes (sk-, ghp_, hf_, AKIA, JWTs, PEM private keys),
  ``Bearer`` credentials, URL userinfo, ``SECRET_NAME=value`` assignments, long hex and long
  random base64 runs, and exact known values: those of secret-looking environment variables
  and those taken out of the command line (``argv_redaction``, logbook.capture.argv),
  wherever they appear later.
* Structured values (harness configs): ``redact_value`` hides the values of secret-named
  keys and applies the precise text rules (shapes, Bearer, userinfo, assignments, known
  values) to strings, never the random-looking heuristics, so that ids and hashes survive.

Precision: a SHA-256 or SHA-512 hex digest, a labelled digest (``sha256:...``), a path judged
part by part, and a file name whose only random part is a short id (Inspect's
``2026-11-29T18-13-40-00-00_sums_AWmXtCZJkqs6wiwnaQaHoB.eval``) are never mangled.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from itertools import pairwise
from typing import Any

REDACTED = "[redacted]"
MIN_VALUE = 8  # shorter exact values are not replaced everywhere: they would hit ordinary text
DIGEST_LENGTHS = (64, 128)  # hex digits of SHA-256 and SHA-512
REVISION_LENGTH = 40  # hex digits of a git (and Hugging Face) commit

# Patterns, compiled on first use (keeps the import light).
_SRC: dict[str, tuple[str, int]] = {
    # Name parts that mark a secret; not max_tokens, TOKENIZERS_*, AUTHOR.
    "secret_name": (
        r"key|token(?!s|iz|is|_?(?:count|ids?|len|limit|budget|type|usage))|secret|passw(?:or)?d"
        # PASS, DB_PASS, --db-pass, PASSPHRASE, DB_PWD: not passthrough, compass, pass@k,
        # pass_at_k, pass_rate and the other names of a benchmark's pass figures
        r"|(?<![a-z])(?<!\bn[-_])(?<!num[-_])(?<!max[-_])(?<!min[-_])pass(?:phrase)?"
        r"(?![a-z0-9@]|[-_.](?:at|k|rate|ratio|threshold|count|num|n|fail|frac|fraction|pct"
        r"|percent|score|metric|\d)(?![a-z]))"
        r"|(?<![a-z])pwd(?![a-z])"
        r"|credential|auth(?!or(?!iz))|cookie|session[-_]?id|private",
        re.IGNORECASE,
    ),
    # Secret shapes, each a whole match to replace.
    "shapes": (
        r"""(?<![A-Za-z0-9])(?:
            sk-[A-Za-z0-9_-]{16,}
          | gh[pousr]_[A-Za-z0-9]{20,} | github_pat_[A-Za-z0-9_]{20,}
          | hf_[A-Za-z0-9]{20,}
          | xox[abposr]-[A-Za-z0-9-]{10,}
          | (?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])
          | AIza[0-9A-Za-z_-]{30,}
          | (?<![_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*)?
          | -----BEGIN[A-Z\ ]*PRIVATE\ KEY-----[\s\S]*?(?:-----END[A-Z\ ]*PRIVATE\ KEY-----|\Z)
        )""",
        re.VERBOSE,
    ),
    # The credential after "Bearer": the word is kept.
    "bearer": (r"\b(bearer)(\s+)([A-Za-z0-9._~+/=:-]{8,})", re.IGNORECASE),
    "userinfo": (r"(?<![\w+.-])([A-Za-z][\w+.-]*://)([^/\s@?#\"'<>]+)@", 0),  # scheme://user@
    "hex": (r"(?<![A-Za-z0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])", 0),
    "hash_label": (r"(?:sha\d*|sha3-\d+|md5|blake2[bs]?|xxh\d*)[:=]$", re.IGNORECASE),
    "b64": (r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{32,}={0,2}", 0),
    # SECRET_NAME=value, name: value, "name": "value" (.env, YAML, JSON, k=v lists, headers).
    "assign": (
        r"""(?<![\w.-])(["']?)(-*(?=[A-Za-z_])[\w.-]*?(?:SECRET)[\w.-]*)\1(\s*[:=]\s*)
            (?:(bearer|basic|token|digest)(\s+))?
            ("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,;&"'<>]+)""",
        re.VERBOSE | re.IGNORECASE,
    ),
    "flag": (r"(-{1,2})([A-Za-z][\w.-]*)(=?)(.*)", re.DOTALL),
}
_SRC["assign"] = (_SRC["assign"][0].replace("SECRET", _SRC["secret_name"][0]), _SRC["assign"][1])


@functools.cache
def named_pattern(name: str) -> re.Pattern[str]:
    return re.compile(*_SRC[name])


# the shell's working folders: named like a password (PWD), holding a path
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})


def is_secret_name(name: str) -> bool:
    """True when a variable, option or key name looks like it holds a secret."""
    return name not in _NOT_SECRET_NAMES and bool(named_pattern("secret_name").search(name))


def _high_entropy(tok: str) -> bool:
    """A long base64-ish run that looks random rather than words or a path (a heuristic)."""
    t = tok.rstrip("=")
    segments = re.split(r"[-_/+]", t)
    if len(t) < 32 or max(map(len, segments)) < 10:
        return False
    if all(re.fullmatch(r"[0-9a-f]+|[0-9A-F]+|[A-Za-z]+", s) for s in segments):
        return False  # words, numbers and hex groups (uuids, GPU ids)
    if not all(re.search(c, t) for c in ("[a-z]", "[A-Z]", "[0-9]")):
        return False
    alnum = re.sub(r"[^A-Za-z0-9]", "", t)
    letters = re.sub(r"[^A-Za-z]", "", t)
    kinds = [2 if c.isdigit() else int(c.isupper()) for c in alnum]
    signs = (
        sum(x != y for x, y in pairwise(kinds)) >= 0.45 * (len(alnum) - 1),  # churn
        sum(c in "aeiouAEIOU" for c in letters) < 0.3 * len(letters),  # few vowels: not words
        len(re.findall(r"(?<![a-z])[a-z](?![a-z])", t)) >= 2,  # lone lowercase letters
        sum(map(len, re.findall(r"[a-z]{4,}|[A-Z]{5,}", t))) < 0.2 * len(t),  # few word runs
    )
    return sum(signs) >= 2


def _random_mass(tok: str) -> int:
    """How many characters of ``tok`` lie in parts that look random: mixed-class runs of 6 or
    more between separators, not mostly words. A date, a task name and one short random id
    (Inspect's 22-character log ids) stay below the 32 a secret needs."""
    mass = 0
    for seg in re.split(r"[-_/+]", tok.rstrip("=")):
        classes = sum(bool(re.search(c, seg)) for c in ("[a-z]", "[A-Z]", "[0-9]"))
        words = sum(map(len, re.findall(r"[a-z]{4,}|[A-Z]{5,}", seg)))
        if len(seg) >= 6 and classes >= 2 and words < 0.5 * len(seg):
            mass += len(seg)
    return mass


def _is_path(tok: str) -> bool:
    """Whether a run with slashes is a path (it starts with / or has a folder-like lowercase
    part) rather than one base64 string."""
    parts = tok.split("/")
    return len(parts) > 1 and (tok.startswith("/") or any(re.fullmatch(r"[a-z]{3,}", p)
                                                          for p in parts))


def _random_token(tok: str) -> bool:
    """A long base64-ish run that is a secret rather than a path, a file name or an id: a path
    is judged part by part."""
    if _is_path(tok):
        return any(len(p) >= 32 and _random_token(p) for p in tok.split("/"))
    return _random_mass(tok) >= 32 and _high_entropy(tok)


def looks_secret_value(value: str) -> bool:
    """True when a value has an API-key/token shape, carries URL credentials or is random."""
    return scrub_counted(value, [])[1] > 0


def secret_env_values(env: Mapping[str, str] | None, named_only: bool = False) -> list[str]:
    """Values (8+ chars) of the variables whose name says secret, or (unless ``named_only``)
    whose value looks like one."""
    vals = {v for k, v in (env or {}).items()
            if len(v) >= MIN_VALUE and (is_secret_name(k)
                                        or (not named_only and looks_secret_value(v)))}
    return sorted(vals, key=len, reverse=True)


def scrub_text(text: str, env: Mapping[str, str] | None = None,
               values: Iterable[str] = ()) -> tuple[str, int]:
    """Replace secret-looking substrings of `text` with ``[redacted]``; return (text, count).

    Covers key/token shapes, ``Bearer`` credentials, URL userinfo, long random strings,
    ``SECRET_NAME=value`` assignments, the exact values (8+ chars) of the secret-looking
    variables in `env`, and the exact ``values`` (8+ chars: what was redacted from the
    command line), wherever they appear.
    """
    return scrub_counted(text, known_values(secret_env_values(env), values))


def known_values(*groups: Iterable[str]) -> list[str]:
    """Exact secret values worth replacing anywhere (8+ characters), longest first."""
    found = {v for group in groups for v in group if len(v) >= MIN_VALUE}
    return sorted(found, key=len, reverse=True)


def _assign(m: re.Match[str]) -> str:
    q, name, sep, scheme, sp, val = m.groups()
    if val.strip("\"'") in ("", REDACTED):
        return m.group()
    quote = val[0] if val[0] in "\"'" and len(val) > 1 and val[-1] == val[0] else ""
    return f"{q}{name}{q}{sep}{scheme or ''}{sp or ''}{quote}{REDACTED}{quote}"


def _userinfo(m: re.Match[str]) -> str:
    info = m.group(2)
    secret = ":" in info or len(info) > 32 or named_pattern("shapes").search(info)
    return f"{m.group(1)}{REDACTED}@" if secret else m.group()


def _bearer(m: re.Match[str]) -> str:  # a credential, not prose ("Bearer authentication")
    tok = m.group(3)
    secret = tok != REDACTED and (len(tok) >= 20 or not tok.isalpha())
    return f"{m.group(1)}{m.group(2)}{REDACTED}" if secret else m.group()


def _hex(m: re.Match[str]) -> str:
    """Kept: a labelled digest ("sha256:..."), a digest's length (SHA-256 and SHA-512, as
    logbook itself prints them), a plain number, and a 40-digit git or Hugging Face revision
    that is a part of a path or follows ``@`` (``snapshots/<rev>/``, ``/commit/<rev>``,
    ``model@<rev>``): a bare 40-digit hex word may be a token and is still replaced."""
    labelled = named_pattern("hash_label").search(m.string[max(0, m.start() - 12) : m.start()])
    revision = len(m.group()) == REVISION_LENGTH and m.string[m.start() - 1 : m.start()] in (
        "/", "@")
    keep = labelled or revision or m.group().isdigit() or len(m.group()) in DIGEST_LENGTHS
    return m.group() if keep else REDACTED


def _b64(m: re.Match[str]) -> str:
    """A random-looking run replaced; in a path, only the parts of it that are random (a run
    id folder), never the whole path."""
    tok = m.group()
    if _is_path(tok):
        return "/".join(REDACTED if len(p) >= 32 and _random_token(p) else p
                        for p in tok.split("/"))
    return REDACTED if _random_token(tok) else tok


_RULES: list[tuple[str, Callable[[re.Match[str]], str]]] = [
    ("userinfo", _userinfo),
    ("assign", _assign),
    ("shapes", lambda m: REDACTED),
    ("bearer", _bearer),
    ("hex", _hex),
    ("b64", _b64),
]


def scrub_counted(text: str, env_values: list[str],
           taken: list[str] | None = None) -> tuple[str, int]:
    """Scrub ``text``; when ``taken`` is a list, the secrets replaced are added to it."""
    count = 0
    for value in env_values:
        n = text.count(value)
        text, count = text.replace(value, REDACTED), count + n

    def counted(repl: Callable[[re.Match[str]], str]) -> Callable[[re.Match[str]], str]:
        def wrap(m: re.Match[str]) -> str:
            nonlocal count
            out = repl(m)
            if out != m.group():
                count += 1
                if taken is not None:
                    taken.extend(_removed(m.group(), out))
            return out

        return wrap

    for name, repl in _RULES:
        text = named_pattern(name).sub(counted(repl), text)
    return text, count


def _removed(original: str, replaced: str) -> list[str]:
    """The secret a replacement took out: what lies between the common prefix and suffix."""
    start = 0
    while start < min(len(original), len(replaced)) and original[start] == replaced[start]:
        start += 1
    end = 0
    while (end < min(len(original), len(replaced)) - start
           and original[-1 - end] == replaced[-1 - end]):
        end += 1
    middle = original[start:len(original) - end]
    return [middle] if middle else []


_AUTHORITY_USERINFO = re.compile(r"([A-Za-z][\w+.-]*://)([^/?#\s\"'<>]*)@")


def strip_url_credentials(url: str) -> str:
    """Drop userinfo from http(s) URLs and passwords from others; scrub what remains."""
    m = _AUTHORITY_USERINFO.match(url)  # up to the authority's last "@", as urllib splits
    if m:
        scheme, userinfo = m.groups()
        user = userinfo.split(":", 1)[0]
        keep = "" if scheme.lower().startswith(("http", "ftp", "ws")) else user
        if keep and looks_secret_value(keep):
            keep = ""
        url = scheme + (keep + "@" if keep else "") + url[m.end() :]
    return scrub_text(url)[0]


_URL_IN_TEXT = re.compile(r"(?<![\w+.-])[A-Za-z][\w+.-]*://[^\s\"'<>]+")


def scrub_urls(text: str) -> str:
    """``text`` with every URL in it shown as `strip_url_credentials` shows it: the one rule
    for URLs and connection strings in anything logbook prints (errors, progress, JSON)."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda m: strip_url_credentials(m.group(0)), text)


_PRECISE = ("userinfo", "assign", "shapes", "bearer")


def scrub_precise(text: str, values: Iterable[str] = ()) -> str:
    """The text rules that never touch ids or hashes: known values, shapes, Bearer, userinfo
    and assignments (for strings inside structured data)."""
    for value in known_values(values):
        text = text.replace(value, REDACTED)
    for name, repl in _RULES:
        if name in _PRECISE:
            text = named_pattern(name).sub(repl, text)
    return text


def redact_value(value: Any, values: Iterable[str] = ()) -> Any:
    """Copy of structured ``value`` with secret-named keys' values hidden (numbers, booleans
    and nulls are kept) and the precise text rules applied to its strings."""
    known = known_values(values)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key = str(key)
            if is_secret_name(key) and not (item is None or isinstance(item, bool | int | float)):
                out[key] = REDACTED
            else:
                out[key] = redact_value(item, known)
        return out
    if isinstance(value, list | tuple):
        return [redact_value(item, known) for item in value]
    if isinstance(value, str):
        return scrub_precise(value, known)
    return value


def scrub_run_body(body: dict[str, Any], values: Iterable[str] = ()) -> dict[str, Any]:
    """A run body as it may enter the ledger: error texts, reasons and notes scrubbed as free
    text; every other string (apparatus, ids) loses only the exact known ``values`` (those
    taken out of the command line, and secret environment values)."""
    free = known_values(secret_env_values(os.environ), values)
    known = known_values(secret_env_values(os.environ, named_only=True), values)

    def clean(text: Any) -> Any:
        return scrub_counted(text, free)[0] if isinstance(text, str) else text

    def exact(item: Any) -> Any:
        if isinstance(item, str):
            for v in known:
                item = item.replace(v, REDACTED)
            return item
        if isinstance(item, dict):
            return {k: exact(v) for k, v in item.items()}
        if isinstance(item, list):
            return [exact(v) for v in item]
        return item

    out = exact(dict(body)) if known else dict(body)
    for field in ("reason", "note"):
        out[field] = clean(out.get(field))
    oc = out.get("outcomes")
    if isinstance(oc, dict) and isinstance(oc.get("error"), list):
        out["outcomes"] = {**oc, "error": [clean(e) for e in oc["error"]]}
    if isinstance(out.get("reported"), dict) and isinstance(out["reported"].get("error"), str):
        out["reported"] = {**out["reported"], "error": clean(out["reported"]["error"])}
    logs = out.get("logs")
    if isinstance(logs, list):
        out["logs"] = [{**ref, "excerpt": clean(ref["excerpt"])}
                       if isinstance(ref, dict) and isinstance(ref.get("excerpt"), str)
                       else ref for ref in logs]
    return {k: v for k, v in out.items() if v is not None or k in ("plan", "arm")}
