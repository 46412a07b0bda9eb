"""A model provider for the Inspect AI tests, registered through this folder's entry point (the
`inspect_ai` group, as any provider package registers), so `inspect eval --model echo/NAME` runs
offline: it answers each prompt in capitals and counts tokens by words (mockllm's tiktoken
would download an encoding)."""

from typing import Any

from inspect_ai.model import ModelAPI, ModelOutput, modelapi


@modelapi(name="echo")
def echo() -> type[ModelAPI]:
    class Echo(ModelAPI):
        async def generate(self, input: Any, tools: Any, tool_choice: Any,
                           config: Any) -> ModelOutput:
            return ModelOutput.from_content(model=self.model_name,
                                            content=input[-1].text.upper())

        async def count_text_tokens(self, text: str) -> int:
            return len(text.split())

    return Echo
