"""The Inspect AI hook: registered through the package's ``inspect_ai`` entry point, so every
``inspect eval`` (and ``inspect_ai.eval()``) of an environment where logbook is installed loads
it (docs/recording.md, "Recording from inside Inspect AI"). Its name is ``logbook/record``:
``INSPECT_REQUIRED_HOOKS=logbook/record`` makes Inspect refuse to start without it.

It does nothing unless recording is switched on (logbook.integrations.switch). Then each task
that ends appends its run (logbook.integrations.inspect_record); a task that fails outright,
which Inspect reports only at the end of the run, is appended then.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio.to_thread
from inspect_ai.hooks import Hooks, RunEnd, TaskEnd, hooks
from inspect_ai.log import EvalLog

from logbook import config
from logbook.errors import LogbookError
from logbook.integrations.switch import Recording, recording


class Record(Hooks):
    """Appends each ended task's log to the ledger, once."""

    def __init__(self) -> None:
        self._recorded: set[str] = set()
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

    async def on_task_end(self, data: TaskEnd) -> None:
        await self._record(data.log)

    async def on_run_end(self, data: RunEnd) -> None:
        for log in data.logs:  # tasks that failed outright end here, not in on_task_end
            await self._record(log)

    async def _record(self, log: EvalLog) -> None:
        from logbook.integrations.inspect_record import record_log, say

        eval_id = log.eval.eval_id
        if eval_id in self._recorded or not log.location:
            return
        self._recorded.add(eval_id)
        try:
            switch = self._recording()
        except LogbookError as exc:
            say(f"the run of {log.location} is not recorded: {exc}")
            return
        if switch is None:
            return
        argv = list(sys.argv)
        await anyio.to_thread.run_sync(lambda: record_log(log.location, switch, argv))


hooks(name="record", description="logbook: appends each task's run to the ledger")(Record)
