"""A small local Inspect AI task for the hook's tests: six questions, half answered right by the
`echo` model (tinymodels); `-T bad=s2,s4` makes those samples fail as a model server's 503
would, `-T fail_on_error=true` makes the first failure end the evaluation, `-T broken_metric=true`
makes the task itself fail after its samples (Inspect then reports it only at the run's end),
`-T stall=s3` makes s3 hang (after writing the file `stalled`, a test's cue to press Ctrl-C)."""

from pathlib import Path

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Metric, SampleScore, accuracy, includes, metric
from inspect_ai.solver import Generate, Solver, TaskState, solver


@metric
def broken() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        raise ValueError("the metric cannot be computed")

    return compute


@solver
def flaky(bad: str, stall: str = "") -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if str(state.sample_id) in stall.split(","):
            Path("stalled").write_text(str(state.sample_id))
            await anyio.sleep(300)
        if str(state.sample_id) in bad.split(","):
            raise RuntimeError(f"model server returned 503 for {state.sample_id}")
        return await generate(state)

    return solve


@task
def tiny(bad: str = "", fail_on_error: bool = False, epochs: int = 1,
         broken_metric: bool = False, stall: str = "") -> Task:
    questions = [Sample(input=f"q{i} yes" if i % 2 else f"q{i} no", target="YES", id=f"s{i}")
                 for i in range(6)]
    return Task(dataset=questions, solver=[flaky(bad, stall)], scorer=includes(), epochs=epochs,
                fail_on_error=fail_on_error,
                metrics=[accuracy(), broken()] if broken_metric else None)
