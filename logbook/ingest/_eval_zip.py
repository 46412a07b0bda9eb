"""Read the members of an Inspect ``.eval`` archive without inspect_ai.

A ``.eval`` file is a zip archive whose members are Zstandard-compressed (zip method 93), which
:mod:`zipfile` lists but cannot decompress. Names, offsets and sizes come from the zip central
directory; each member's bytes are read after its local header and decompressed with
``zstandard``; size and CRC-32 are checked against the directory. Sizes the directory or a
zstd frame claims are checked against the file and against LOGBOOK_MAX_INPUT_BYTES (default
256 MiB; never more than MAX_MEMBER_SIZE) before anything is allocated, so a damaged or
hostile archive cannot exhaust memory.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from pathlib import Path
from types import ModuleType, TracebackType
from typing import IO, Self

from logbook.errors import EnvironmentProblem
from logbook.ingest._common import fail

INSTALL_HINT = "pip install 'logbook[inspect]'"  # inspect_ai (zstandard is a core dependency)
ZSTD_HINT = "zstandard is a dependency of logbook: reinstall it (pip install logbook)"
ZSTD_METHOD = 93
MAX_MEMBER_SIZE = 1 << 30  # 1 GiB uncompressed: far beyond any header or sample Inspect writes
_CHUNK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, 22 bytes, name length, extra length


def member_limit() -> int:
    """The most bytes one member may hold, compressed or inflated: LOGBOOK_MAX_INPUT_BYTES
    (default 256 MiB, the bound on every file logbook reads), never more than MAX_MEMBER_SIZE."""
    from logbook.files import max_input_bytes

    return min(MAX_MEMBER_SIZE, max_input_bytes())


class EvalArchive:
    """``with EvalArchive(path) as archive: archive.read("header.json")``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            import zstandard
        except ImportError:
            # a broken install, not a bad file: exit 3
            raise EnvironmentProblem(f"{path}: reading .eval logs needs zstandard, which is "
                                     f"missing ({ZSTD_HINT})") from None
        self._zstd: ModuleType = zstandard
        self._zip: zipfile.ZipFile | None = None
        self._fh: IO[bytes] | None = None
        self.infos: dict[str, zipfile.ZipInfo] = {}

    def __enter__(self) -> Self:
        try:
            self._fh = self.path.open("rb")
            self._zip = zipfile.ZipFile(self._fh)
        except FileNotFoundError:
            raise fail(self.path, "file not found") from None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError,
                UnicodeDecodeError) as exc:  # the last two: a damaged directory's version, names
            self.close()
            raise fail(self.path, f"not a readable .eval (zip) archive ({exc})") from None
        except OSError as exc:
            self.close()
            raise fail(self.path, f"cannot be read ({exc.strerror or exc})") from None
        listed = self._zip.infolist()
        self.infos = {info.filename: info for info in listed}
        if len(self.infos) != len(listed):  # two readers could each read another one
            names = [i.filename for i in listed]
            twice = next(n for n in names if names.count(n) > 1)
            self.close()
            raise fail(self.path, f"member {twice} appears twice in the archive: readers "
                                  "disagree on which one is the log, so neither is read")
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the archive and its file."""
        if self._zip is not None:
            self._zip.close()
        if self._fh is not None:
            self._fh.close()

    def _compressed(self, name: str) -> tuple[zipfile.ZipInfo, bytes, str]:
        """A member's zip entry, its compressed bytes and how errors name it."""
        assert self._zip is not None and self._fh is not None, "use within a with block"
        info, where = self.infos[name], f"member {name}"
        if info.flag_bits & 0x1:
            raise fail(self.path, f"{where}: is encrypted, which Inspect never does (corrupt)")
        limit = member_limit()
        for size, what in ((info.file_size, "bytes"), (info.compress_size, "compressed bytes")):
            if size > limit:
                raise fail(self.path, f"{where}: the zip directory gives it {size} {what}, "
                                      f"more than the {limit} bytes logbook reads "
                                      "(LOGBOOK_MAX_INPUT_BYTES raises the limit)")
        self._fh.seek(info.header_offset)
        head = self._fh.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size:
            raise fail(self.path, f"{where}: archive is truncated")
        signature, name_len, extra_len = _LOCAL_HEADER.unpack(head)
        if signature != b"PK\x03\x04":
            raise fail(self.path, f"{where}: bad local header (corrupt archive)")
        start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        if start + info.compress_size > os.fstat(self._fh.fileno()).st_size:
            raise fail(self.path, f"{where}: archive is truncated")  # before allocating
        self._fh.seek(start)
        raw = self._fh.read(info.compress_size)
        if len(raw) < info.compress_size:
            raise fail(self.path, f"{where}: archive is truncated")
        return info, raw, where

    def read(self, name: str) -> bytes:
        """One member's uncompressed bytes (zip method 93, or stored/deflated)."""
        assert self._zip is not None
        try:
            info, raw, where = self._compressed(name)
            if info.compress_type == ZSTD_METHOD:
                data = self._decompress(raw, info.file_size, where)
            elif info.compress_type == zipfile.ZIP_STORED:
                data = raw
            elif info.compress_type == zipfile.ZIP_DEFLATED:
                data = _inflate(raw, info.file_size)
            else:
                raise fail(self.path, f"{where}: unsupported zip compression method "
                                      f"{info.compress_type}")
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise fail(self.path, f"member {name}: corrupt ({exc})") from None
        except OSError as exc:
            raise fail(self.path, f"member {name}: cannot be read ({exc.strerror or exc})") \
                from None
        if len(data) > info.file_size:  # decompression stopped once past it: never inflated
            raise fail(self.path, f"member {name}: it inflates to more than the "
                                  f"{info.file_size} bytes the zip directory gives it (corrupt)")
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise fail(self.path, f"{where}: size or CRC does not match the zip directory "
                                  "(corrupt)")
        return bytes(data)

    def check_bounds(self) -> None:
        """Before another reader (inspect_ai's) inflates the archive: each member's sizes in
        the zip directory within ``member_limit()``, its zstd frame's content size (when it gives
        one) equal to the directory's, and the bytes it actually inflates to, counted chunk
        by chunk and never kept, not more than the directory says."""
        try:
            for name in self.infos:
                info, raw, where = self._compressed(name)
                if info.compress_type == zipfile.ZIP_DEFLATED:
                    try:
                        inflated = len(_inflate(raw, info.file_size))
                    except zlib.error as exc:
                        raise fail(self.path, f"{where}: deflate data is corrupt ({exc})") \
                            from None
                    if inflated != info.file_size:
                        raise fail(self.path, f"{where}: it inflates to more or fewer bytes "
                                              f"than the {info.file_size} the zip directory "
                                              "gives it")
                if info.compress_type != ZSTD_METHOD:
                    continue
                claimed = self._zstd.frame_content_size(raw) if len(raw) >= 18 or raw else -1
                if claimed not in (-1, info.file_size):
                    raise fail(self.path, f"{where}: its zstd frame claims {claimed} bytes, "
                                          f"the zip directory {info.file_size} (corrupt)")
                if self._inflated_size(raw, info.file_size, where) != info.file_size:
                    raise fail(self.path, f"{where}: it inflates to more or fewer bytes than "
                                          f"the {info.file_size} the zip directory gives it")
        except OSError as exc:
            raise fail(self.path, f"cannot be read ({exc.strerror or exc})") from None

    def _inflated_size(self, raw: bytes, size: int, where: str) -> int:
        """How many bytes ``raw`` inflates to, counted up to ``size + 1``."""
        total = 0
        try:
            with self._zstd.ZstdDecompressor().stream_reader(raw) as reader:
                while total <= size:
                    chunk = reader.read(_CHUNK)
                    if not chunk:
                        break
                    total += len(chunk)
        except self._zstd.ZstdError as exc:
            raise fail(self.path, f"{where}: zstd data is corrupt ({exc})") from None
        return total

    def _decompress(self, raw: bytes, size: int, where: str) -> bytes:
        """Decompress in chunks, stopping past ``size``: the frame's own content size (which
        ``decompress`` would allocate at once) is never trusted."""
        out = bytearray()
        try:
            with self._zstd.ZstdDecompressor().stream_reader(raw) as reader:
                while len(out) <= size:
                    chunk = reader.read(_CHUNK)
                    if not chunk:
                        break
                    out += chunk
        except self._zstd.ZstdError as exc:
            raise fail(self.path, f"{where}: zstd data is corrupt ({exc})") from None
        return bytes(out)


def _inflate(raw: bytes, size: int) -> bytes:
    """A deflated member's bytes, inflated in chunks and stopping past ``size``: what the zip
    directory gives is never trusted to bound the output."""
    inflater = zlib.decompressobj(-15)
    out = bytearray()
    pending = raw
    while pending and len(out) <= size:
        out += inflater.decompress(pending, _CHUNK)
        pending = inflater.unconsumed_tail
    if len(out) <= size and not inflater.eof:
        out += inflater.flush()
    return bytes(out)


def check_before_reading(path: Path) -> None:
    """Before a reader that inflates and loads a log whole (inspect_ai's): a .eval archive's
    members are checked against their declared sizes and LOGBOOK_MAX_INPUT_BYTES (a zip bomb is
    refused, never inflated), a .json log against LOGBOOK_MAX_INPUT_BYTES."""
    from logbook.files import max_input_bytes

    if path.suffix == ".eval":
        with EvalArchive(path) as archive:
            archive.check_bounds()
        return
    limit = max_input_bytes()
    if path.stat().st_size > limit:
        raise fail(path, f"is too large (it is larger than {limit} bytes; "
                         "LOGBOOK_MAX_INPUT_BYTES raises the limit)")
