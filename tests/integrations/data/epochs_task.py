"""A small local Inspect AI task whose answers change from epoch to epoch, for the reducer
tests: each sample's row of PATTERN says, epoch by epoch, whether the `echo` model (tinymodels)
is asked a question it answers right (the prompt ends in "yes", the target is "YES"), so that
Inspect's epoch reducers (mean, median, mode, max, at_least_k, pass_at_k) each give another
accuracy. `-T graded=true` scores with GRADES instead (values between 0 and 1), where the mean
and the median of an item's epochs differ too; `-T target=NOPE` asks for another answer (other
data: another suite)."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, accuracy, includes, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

PATTERN = {"s0": "000", "s1": "100", "s2": "100", "s3": "110", "s4": "111", "s5": "010"}
GRADES = {"s0": [0.0, 0.25, 1.0], "s1": [0.5, 0.5, 0.0], "s2": [1.0, 0.75, 0.0],
          "s3": [0.25, 0.25, 0.25], "s4": [0.0, 1.0, 1.0], "s5": [0.5, 0.0, 0.25]}


@solver
def by_epoch() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        row = PATTERN[str(state.sample_id)]
        right = row[(state.epoch - 1) % len(row)] == "1"
        state.user_prompt.text = f"{state.input_text} {'yes' if right else 'no'}"
        return await generate(state)

    return solve


@scorer(metrics=[mean(), stderr()])
def graded_by_epoch() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        row = GRADES[str(state.sample_id)]
        return Score(value=row[(state.epoch - 1) % len(row)])

    return score


@task
def epochs_task(graded: bool = False, target: str = "YES") -> Task:
    questions = [Sample(input=f"question {i}", target=target, id=f"s{i}") for i in range(6)]
    return Task(dataset=questions, solver=[by_epoch()],
                scorer=graded_by_epoch() if graded else includes(),
                metrics=None if graded else [accuracy(), stderr()])
