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
- One middleware, `RetoldMiddleware` (sync and async runs): a session per (thread, principal),
  started on the run's first step with its ProfileBlock (pass a `thread_id`: runs without one
  share one session per principal); every message of the thread recorded once as a turn, in
  order (user messages, assistant text, tool results), keyed by message id so a retry never
  records one twice; before each model call the ProfileBlock and the
  host-issued recall for the latest user message added to the system prompt; and the
  answer-producing model call (the one that returns text, no tool calls) wrapped with the
  orchestrator's decision: draft -> decision -> the regenerated answer, or the draft when the
  decision keeps it or anything fails (fail closed).
- The memory is an aid, never a dependency: when Retold cannot be reached the agent runs and
  answers without it (a failed session start is not retried for `retry_start_after` seconds),
  and the tools say so to the model.
- Where the principal comes from is one function: `principal_from(config)`, by default
  `derive_principal(config["configurable"])`. On a server where callers set `configurable`
  themselves (LangGraph Platform), pass one that reads the authenticated user instead.
- With `stream_mode="messages"` the draft streams before the decision replaces it; the state
  (and the transcript) hold the answer the decision chose.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
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
    call_tool,
    derive_principal,
    memory_prompt,
    tool_result,
)

log = logging.getLogger("retold.adapters.deepagents")

PrincipalFrom = Callable[[Mapping[str, Any]], Principal]


class RetoldMemory:
    """Retold for one agent definition: the tools, the middleware and the sessions they share."""

    def __init__(self, retold: Retold, *, agent_id: str | None = None, tags: Sequence[str] = (),
                 recall_limit: int = 5, decide: bool = True, deadline_ms: int | None = None,
                 principal_from: PrincipalFrom | None = None, retry_start_after: float = 30.0) -> None:
        self.retold = retold
        self.agent_id = agent_id
        self.tags = list(tags)
        self.recall_limit = recall_limit
        self.decide = decide
        self.deadline_ms = deadline_ms
        self.retry_start_after = retry_start_after
        self._principal_from = principal_from
        self._sessions: dict[tuple[str, Principal], MemorySession] = {}
        self._starting: dict[tuple[str, Principal], threading.Lock] = {}
        self._failed: dict[tuple[str, Principal], float] = {}
        self._recorded: dict[tuple[str, Principal], set[str]] = {}
        self._lock = threading.Lock()

    # The principal and the session of the current run.

    def principal(self, config: RunnableConfig | Mapping[str, Any] | None) -> Principal:
        """The run's principal (`principal_from`, else `config["configurable"]` through
        `base.derive_principal`)."""
        config = config or {}
        if self._principal_from is not None:
            return self._principal_from(config)
        return derive_principal(config.get("configurable"), agent_id=self.agent_id)

    def _key(self, config: Mapping[str, Any]) -> tuple[str, Principal]:
        configurable = config.get("configurable") or {}
        return str(configurable.get("thread_id", "")), self.principal(config).in_session(None)

    def session(self, config: RunnableConfig | Mapping[str, Any], *, start: bool = True) -> MemorySession | None:
        """The session of the run's thread and principal, started (with its profile) if `start`.
        Starting takes a lock per (thread, principal), so other users never wait on it."""
        key = self._key(config)
        with self._lock:
            session = self._sessions.get(key)
            if session is not None or not start:
                return session
            if time.monotonic() < self._failed.get(key, 0.0):
                raise RetoldError("Retold was unreachable moments ago; running without memory", code="unreachable")
            starting = self._starting.setdefault(key, threading.Lock())
        with starting:
            with self._lock:
                if key in self._sessions:
                    return self._sessions[key]
            try:
                session = MemorySession(self.retold, self.principal(config), tags=self.tags)
            except RetoldError:
                with self._lock:
                    self._failed[key] = time.monotonic() + self.retry_start_after
                raise
            with self._lock:
                self._sessions[key] = session
                self._failed.pop(key, None)
            return session

    def end(self, config: RunnableConfig | Mapping[str, Any], *, wait_for_extraction: bool = False) -> dict | None:
        """End the thread's session (its extraction runs); the next run starts a new one. The
        thread's messages already recorded stay recorded: a checkpointed history is not
        copied into the new session."""
        key = self._key(config)
        with self._lock:
            session = self._sessions.pop(key, None)
            self._starting.pop(key, None)
        if session is None:
            return None
        return session.end(wait_for_extraction=wait_for_extraction)

    # The tools.

    def tools(self) -> list[StructuredTool]:
        """The five memory tools as LangChain tools."""
        return [self._tool(spec) for spec in TOOLS]

    def _tool(self, spec: ToolSpec) -> StructuredTool:
        memory = self

        def run(config: RunnableConfig, **arguments: Any) -> str:
            try:
                principal = memory.principal(config)
                session = memory.session(config, start=False)
                return tool_result(call_tool(memory.retold, spec, principal, session, arguments))
            except RetoldError as error:
                raise ToolException(str(error)) from error

        return StructuredTool.from_function(func=run, name=spec.name, description=spec.description,
                                            args_schema=spec.arguments, handle_tool_error=True)

    def middleware(self) -> RetoldMiddleware:
        return RetoldMiddleware(self)

    # Turn capture: every message of the thread not recorded yet, in order.

    def _capture(self, config: Mapping[str, Any], session: MemorySession, messages: Sequence[BaseMessage]) -> None:
        # LangGraph gives every message in the state an id; a thread with a checkpointer
        # brings its history back on each run, and none of it is recorded twice (not even
        # into the thread's next session).
        recorded = self._recorded.setdefault(self._key(config), set())
        for message in messages:
            if message.id is None or message.id in recorded:
                continue
            turn = _as_turn(message)
            if turn is not None:
                session.record(*turn, key=message.id)
            recorded.add(message.id)


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


def _with_memory(request: ModelRequest, extra: str) -> ModelRequest:
    """The request with `extra` appended to its system message (content blocks kept)."""
    system = request.system_message
    if system is None:
        return request.override(system_message=SystemMessage(content=extra))
    if isinstance(system.content, list):
        content: Any = [*system.content, {"type": "text", "text": extra}]
    else:
        content = f"{system.content}\n\n{extra}" if system.content else extra
    return request.override(system_message=SystemMessage(content=content))


class RetoldMiddleware(AgentMiddleware):
    """Turn capture, the ProfileBlock and host-issued recall before each model call, and the
    orchestrator's decision around the answer-producing one. Sync and async."""

    def __init__(self, memory: RetoldMemory) -> None:
        super().__init__()
        self.memory = memory

    def _session(self, config: Mapping[str, Any], *, start: bool) -> MemorySession | None:
        try:
            return self.memory.session(config, start=start)
        except RetoldError as error:
            log.warning("Retold unavailable, running without memory: %s", error)
            return None

    def _sync(self, state: Mapping[str, Any], *, start: bool) -> None:
        config = get_config()
        session = self._session(config, start=start)
        if session is not None:
            try:
                self.memory._capture(config, session, state.get("messages", []))
            except RetoldError as error:
                log.warning("Retold did not take a turn: %s", error)

    def before_agent(self, state: Any, runtime: Any) -> None:
        self._sync(state, start=True)
        return None

    def before_model(self, state: Any, runtime: Any) -> None:
        self._sync(state, start=True)
        return None

    def after_agent(self, state: Any, runtime: Any) -> None:
        self._sync(state, start=False)
        return None

    # The model call: before (profile + recall) and after (the decision) are blocking calls to
    # Retold; the async path runs them in a worker thread and awaits the model.

    def _prepare(self, config: Mapping[str, Any], request: ModelRequest) -> tuple[ModelRequest, Any]:
        session = self._session(config, start=False)
        question = _latest_user(request.messages)
        if session is None or question is None:
            return request, None
        try:
            recalled = session.recall(question, limit=self.memory.recall_limit)
        except RetoldError as error:
            log.warning("Retold recall failed: %s", error)
            recalled = []
        extra = memory_prompt(session.profile, recalled)
        return (_with_memory(request, extra) if extra else request), (session, question)

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
        request, turn = self._prepare(get_config(), request)
        response = handler(request)
        if turn is None or not self.memory.decide:
            return response
        return self._decided(*turn, response)

    async def awrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
        config = get_config()
        request, turn = await asyncio.to_thread(self._prepare, config, request)
        response = await handler(request)
        if turn is None or not self.memory.decide:
            return response
        return await asyncio.to_thread(self._decided, *turn, response)

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
