"""The Inspect AI hook: registered through the package's ``inspect_ai`` entry point, so every
``inspect eval`` (and ``inspect_ai.eval()``) of an environment where logbook is installed loads
it (docs/recording.md, "Recording from inside Inspect AI"). Its name is ``logbook/record``:
``INSPECT_REQUIRED_HOOKS=logbook/record`` makes Inspect refuse to start without it.

It does nothing unless recording is switched on (logbook.integrations.switch). Then each task
that ends appends its run (logbook.integrations.inspect_record); a task that fails outright,
which Inspect reports only at the end of the run, is appended then; so is a task cancelled by
Ctrl-C, whose log Inspect gives to no hook: the hook finds it in the run's log folder
(logbook.integrations.inspect_cancelled) and appends it as an aborted run.
"""

from __future__ import annotations

import os
import sys
import time
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread
from inspect_ai.hooks import Hooks, RunEnd, TaskEnd, TaskStart, hooks
from inspect_ai.log import EvalLog

from logbook import config
from logbook.errors import LogbookError
from logbook.integrations.inspect_cancelled import Started
from logbook.integrations.switch import Recording, recording


class Record(Hooks):
    """Appends each ended task's log to the ledger, once."""

    def __init__(self) -> None:
        self._recorded: set[str] = set()
        self._started: dict[str, Started] = {}  # task_id -> its latest attempt
        self._switch: tuple[tuple[str | None, ...], Recording | LogbookError | None] | None = None

    def _recording(self) -> Recording | None:
        """The switch, read again only when the folder or the variables change (Inspect asks
        before every event)."""
        seen = (str(Path.cwd()), config.harness_plan(), config.harness_arm(),
                str(config.record_exploratory()))
        if self._switch is None or self._switch[0] != seen:
            try:
                found: Recording | LogbookError | None = recording()
            except LogbookError as exc:  # a broken logbook.toml: said when a task ends
                found = exc
            self._switch = (seen, found)
        value = self._switch[1]
        if isinstance(value, LogbookError):
            raise value
        return value

    def enabled(self) -> bool:
        try:
            return self._recording() is not None
        except LogbookError:
            return True

    async def on_task_start(self, data: TaskStart) -> None:
        self._started[data.spec.task_id] = Started(data.eval_id, data.spec.task_id,
                                                   time.time_ns())

    async def on_task_end(self, data: TaskEnd) -> None:
        await self._record(data.log)

    async def on_run_end(self, data: RunEnd) -> None:
        # shielded: after a Ctrl-C the run's scope may still be cancelled, and these appends
        # are what must not be lost
        with anyio.CancelScope(shield=True):
            for log in data.logs:  # tasks that failed outright end here, not in on_task_end
                await self._record(log)
            await self._record_cancelled()

    async def _record_cancelled(self) -> None:
        """Tasks that started but whose log reached no hook (a Ctrl-C): their log is looked
        for in the run's log folder, and appended as an aborted run."""
        from logbook.integrations.inspect_cancelled import find_log, log_folder
        from logbook.integrations.inspect_record import say

        left = [t for t in self._started.values() if t.eval_id not in self._recorded]
        self._started.clear()
        if not left:
            return
        folder = log_folder(list(sys.argv), os.environ)
        for task in left:
            found = None if folder is None else await anyio.to_thread.run_sync(
                partial(find_log, folder, task))
            if found is None:
                say(f"task {task.task_id} ended without a log given to the hook, and none "
                    f"naming it was found in {folder or 'a local log folder'}: record it with "
                    "`logbook append --from inspect LOG`, or run it under `logbook run`")
                continue
            await self._record_at(task.eval_id, str(found))

    async def _record(self, log: EvalLog) -> None:
        if log.location:
            await self._record_at(log.eval.eval_id, log.location)

    async def _record_at(self, eval_id: str, location: str) -> None:
        from logbook.integrations.inspect_record import record_log, say

        if eval_id in self._recorded:
            return
        self._recorded.add(eval_id)
        try:
            switch = self._recording()
        except LogbookError as exc:
            say(f"the run of {location} is not recorded: {exc}")
            return
        if switch is None:
            return
        argv = list(sys.argv)
        await anyio.to_thread.run_sync(lambda: record_log(location, switch, argv))


hooks(name="record", description="logbook: appends each task's run to the ledger")(Record)
