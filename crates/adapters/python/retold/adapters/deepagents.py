"""Retold for deepagents (and any LangChain `create_agent` / LangGraph agent): the first adapter.

    memory = RetoldMemory(Retold(url, host_key), agent_id="assistant")
    agent = create_deep_agent(model=model, tools=memory.tools(), middleware=[memory.middleware()])
    config = {"configurable": {"thread_id": "t1", "user_id": "jo"}}
    agent.invoke({"messages": [{"role": "user", "content": "..."}]}, config=config)
    memory.end(config)  # ends the thread's session; its extraction runs

- The five tools read the principal from the run's configuration when they are called
  (`configurable.user_id`, `agent_id`, `project_id`, or a `configurable.retold` mapping; see
  `base.derive_principal`), never from the agent's construction, so one agent serves many users.
  A refusal (`scope_not_writable`, ...) comes back to the model as a tool error it can read.
- One middleware, `RetoldMiddleware`: a session per (thread, principal), started on the run's
  first step with its ProfileBlock; every message of the thread recorded once as a turn, in
  order (user messages, assistant text, tool results); before each model call the ProfileBlock and the
  host-issued recall for the latest user message added to the system prompt; and the
  answer-producing model call (the one that returns text, no tool calls) wrapped with the
  orchestrator's decision: draft -> decision -> the regenerated answer, or the draft when the
  decision keeps it or anything fails (fail closed).
- The memory is an aid, never a dependency: when Retold cannot be reached the agent runs and
  answers without it, and the tools say so to the model.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from langgraph.config import get_config

from retold.adapters.base import (
    TOOLS,
    MemorySession,
    Principal,
    Retold,
    RetoldError,
    ToolSpec,
    arguments_as_json,
    derive_principal,
    memory_prompt,
    tool_result,
)

log = logging.getLogger("retold.adapters.deepagents")


class RetoldMemory:
    """Retold for one agent definition: the tools, the middleware and the sessions they share."""

    def __init__(self, retold: Retold, *, agent_id: str | None = None, tags: Sequence[str] = (),
                 recall_limit: int = 5, decide: bool = True, deadline_ms: int | None = None) -> None:
        self.retold = retold
        self.agent_id = agent_id
        self.tags = list(tags)
        self.recall_limit = recall_limit
        self.decide = decide
        self.deadline_ms = deadline_ms
        self._sessions: dict[tuple[str, Principal], MemorySession] = {}
        self._recorded: dict[str, set[str]] = {}
        self._recalled: dict[str, tuple[str, list[dict]]] = {}
        self._lock = threading.Lock()

    # The principal and the session of the current run.

    def principal(self, config: RunnableConfig | Mapping[str, Any] | None) -> Principal:
        """The run's principal, from `config["configurable"]` (see `base.derive_principal`)."""
        return derive_principal((config or {}).get("configurable"), agent_id=self.agent_id)

    def _key(self, config: Mapping[str, Any]) -> tuple[str, Principal]:
        configurable = config.get("configurable") or {}
        return str(configurable.get("thread_id", "")), self.principal(config)

    def session(self, config: RunnableConfig | Mapping[str, Any], *, start: bool = True) -> MemorySession | None:
        """The session of the run's thread and principal, started (with its profile) if `start`."""
        key = self._key(config)
        with self._lock:
            session = self._sessions.get(key)
            if session is None and start:
                session = MemorySession(self.retold, key[1], tags=self.tags)
                self._sessions[key] = session
            return session

    def end(self, config: RunnableConfig | Mapping[str, Any], *, wait_for_extraction: bool = False) -> dict | None:
        """End the thread's session (its extraction runs); the next run starts a new one."""
        key = self._key(config)
        with self._lock:
            session = self._sessions.pop(key, None)
        if session is None:
            return None
        self._recorded.pop(session.id, None)
        self._recalled.pop(session.id, None)
        return session.end(wait_for_extraction=wait_for_extraction)

    # The tools.

    def tools(self) -> list[StructuredTool]:
        """The five memory tools as LangChain tools."""
        return [self._tool(spec) for spec in TOOLS]

    def _tool(self, spec: ToolSpec) -> StructuredTool:
        memory = self

        def run(config: RunnableConfig, **arguments: Any) -> str:
            principal = memory.principal(config)
            session = memory.session(config, start=False)
            context: list[str] = []
            if session is not None and session.principal.in_session(None) == principal.in_session(None):
                principal, context = session.principal, session.context()
            try:
                answer = memory.retold.tool(spec.name, principal, arguments_as_json(spec.arguments(**arguments)),
                                            context=context)
            except RetoldError as error:
                raise ToolException(str(error)) from error
            return tool_result(answer)

        return StructuredTool.from_function(func=run, name=spec.name, description=spec.description,
                                            args_schema=spec.arguments, handle_tool_error=True)

    def middleware(self) -> RetoldMiddleware:
        return RetoldMiddleware(self)

    # Turn capture: every message of the thread not recorded yet, in order.

    def _capture(self, session: MemorySession, messages: Sequence[BaseMessage]) -> None:
        # LangGraph gives every message in the state an id; a thread with a checkpointer
        # brings its history back on each run, and none of it is recorded twice.
        recorded = self._recorded.setdefault(session.id, set())
        for message in messages:
            if message.id is None or message.id in recorded:
                continue
            turn = _as_turn(message)
            if turn is not None:
                session.record(*turn)
            recorded.add(message.id)

    def _recall(self, session: MemorySession, question: str) -> list[dict]:
        """Host-issued recall for the latest user message, once per message."""
        cached = self._recalled.get(session.id)
        if cached is not None and cached[0] == question:
            return cached[1]
        results = session.recall(question, limit=self.recall_limit)
        self._recalled[session.id] = (question, results)
        return results


def _text(message: BaseMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)


def _as_turn(message: BaseMessage) -> tuple[str, str] | None:
    if isinstance(message, HumanMessage):
        return "user", _text(message)
    if isinstance(message, AIMessage):
        return ("assistant", _text(message)) if _text(message).strip() else None
    if isinstance(message, ToolMessage):
        return "tool", f"{message.name or 'tool'}: {_text(message)}"
    return None


def _latest_user(messages: Sequence[BaseMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return _text(message)
    return None


class RetoldMiddleware(AgentMiddleware):
    """Turn capture, the ProfileBlock and host-issued recall before each model call, and the
    orchestrator's decision around the answer-producing one."""

    def __init__(self, memory: RetoldMemory) -> None:
        super().__init__()
        self.memory = memory

    def _session(self, *, start: bool) -> MemorySession | None:
        try:
            return self.memory.session(get_config(), start=start)
        except RetoldError as error:
            log.warning("Retold unavailable, running without memory: %s", error)
            return None

    def _sync(self, state: Mapping[str, Any], *, start: bool) -> MemorySession | None:
        session = self._session(start=start)
        if session is not None:
            try:
                self.memory._capture(session, state.get("messages", []))
            except RetoldError as error:
                log.warning("Retold did not take a turn: %s", error)
        return session

    def before_agent(self, state: Any, runtime: Any) -> None:
        self._sync(state, start=True)
        return None

    def before_model(self, state: Any, runtime: Any) -> None:
        self._sync(state, start=True)
        return None

    def after_agent(self, state: Any, runtime: Any) -> None:
        self._sync(state, start=False)
        return None

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
        session = self._session(start=False)
        question = _latest_user(request.messages)
        if session is None or question is None:
            return handler(request)
        try:
            recalled = self.memory._recall(session, question)
        except RetoldError as error:
            log.warning("Retold recall failed: %s", error)
            recalled = []
        extra = memory_prompt(session.profile, recalled)
        if extra:
            base = request.system_prompt or ""
            request = request.override(system_message=SystemMessage(content=f"{base}\n\n{extra}".strip()))
        response = handler(request)
        if not self.memory.decide:
            return response
        return self._decided(session, question, response)

    def _decided(self, session: MemorySession, question: str, response: Any) -> Any:
        messages = response.result if isinstance(response, ModelResponse) else [response]
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or last.tool_calls or not _text(last).strip():
            return response  # not the answer: a tool call, or nothing to judge
        answer = session.decide(question, _text(last), deadline_ms=self.memory.deadline_ms)
        metadata = {**last.response_metadata, "retold": {
            "decision_id": answer.decision_id, "regenerated": answer.regenerated, "reason": answer.reason,
            "admitted": answer.admitted}}
        content = answer.text if answer.regenerated else last.content
        replaced = last.model_copy(update={"content": content, "response_metadata": metadata})
        result = [*messages[:-1], replaced]
        if isinstance(response, ModelResponse):
            return ModelResponse(result=result, structured_response=response.structured_response)
        return replaced
