"""LangChain's own fake chat model, scripted: each step is an AIMessage, or a function of the
messages the model was sent (so an answer can depend on what the adapter put in front of it)."""

from collections.abc import Callable
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

Step = AIMessage | Callable[[list[BaseMessage]], AIMessage]


class ScriptedChatModel(GenericFakeChatModel):
    """`GenericFakeChatModel` (which has no `bind_tools`) that agents can bind tools to."""

    seen: list = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChatModel":
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        step = next(self.messages)
        message = step(list(messages)) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=message)])


def script(*steps: Step) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter(steps), seen=[])


def tool_call(name: str, args: dict, call_id: str = "call_1") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def system_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if m.type == "system")
