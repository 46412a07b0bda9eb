"""The one interface every harness adapter implements (DESIGN §3, docs/recording.md).

An adapter is named by its ``--from`` source, says which files its harness writes into an
output folder, and reads run bodies from such a file (or folder). Adding a harness is one module
with one ``Adapter`` subclass, its line in ``logbook.ingest.ADAPTERS``, and its docs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, ClassVar


class Adapter(ABC):
    """A harness's outputs as run bodies.

    ``name`` is the ``--from`` source; ``globs`` are the files its harness writes into an
    output folder (relative to that folder), so that `logbook run` can tell which of them a
    command wrote."""

    name: ClassVar[str]
    globs: ClassVar[tuple[str, ...]]

    def recognises(self, path: Path) -> bool:
        """Whether the file ``path`` is named as this harness names its outputs."""
        return any(fnmatchcase(path.name, glob.rsplit("/", 1)[-1]) for glob in self.globs)

    def outputs(self, folder: Path) -> set[Path]:
        """The files in ``folder`` (and, as the globs say, below it) that are its outputs."""
        return {f for glob in self.globs for f in folder.glob(glob) if self.recognises(f)}

    def output_of(self, command: list[str], env: Mapping[str, str]) -> str | None:
        """Where ``command`` will write this harness's output, when it is this harness's
        command and its command line (or ``env``) says; None when it is not its command.
        An InputError when it is, but the command line will leave nothing to read."""
        return None

    @abstractmethod
    def read_runs(self, path: Path, *, metric: str | None = None,
                  cut_off_ok: bool = False) -> list[dict[str, Any]]:
        """Run bodies read from ``path`` (one output file, or a folder of them), without
        ``plan``/``arm``: ``status``, ``reason`` (when not completed), ``apparatus``,
        ``outcomes`` (column-wise), ``task``, ``group``, ``reported`` (the harness's own
        figures), ``source``, ``started``/``finished``, ``note``.

        ``metric`` names the outcome metric the adapter reads (see each adapter);
        ``cut_off_ok`` is for a run that did not complete: an adapter whose files are
        written line by line keeps the whole lines of a file cut off mid-write."""
