"""Retold for CrewAI: the second adapter.

    memory = RetoldCrew(Retold(url, host_key), agent_id="assistant")
    agent = Agent(role=..., goal=..., backstory=..., llm=memory.llm(LLM(model="...")),
                  tools=memory.tools(), step_callback=memory.step_callback)
    crew = Crew(agents=[agent], tasks=[...], **memory.crew_hooks())
    crew.kickoff(inputs={"user_id": "jo", ...})

- A kickoff is a session: `before_kickoff` derives the principal from the kickoff's inputs
  (`user_id`, `agent_id`, `project_id`, or a `retold` mapping; see `base.derive_principal`) and
  starts the session with its ProfileBlock; `after_kickoff` ends it (its extraction runs).
- The five tools are CrewAI tools whose argument models are generated from the OpenAPI schemas
  (`retold_schemas`, without the principal); each call reads the principal of the kickoff it
  runs in. A refusal comes back to the agent as the tool's answer: `error: <code>: <detail>`.
- Turns, in order: the LLM proxy records each task's text as the user turn at the task's first
  model call and each action the model writes (text-mode models) before its tool runs; each
  memory tool records its own result as a tool turn (native function calling too);
  `step_callback` records other tools' results and the final answers; `task_callback` records a
  task's text and output that neither saw.
- A kickoff that raises never reaches `after_kickoff`: end its session with
  `memory.session().end()` in the host's error path, or let it be.
- `RetoldLLM`, an LLM proxy around any CrewAI LLM: the ProfileBlock and the host-issued recall
  for the task added to the system message, and each final answer put through the
  orchestrator's decision (the regenerated answer, or the draft; any failure keeps the draft).
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crewai.agents.parser import AgentAction, AgentFinish
from crewai.llms.base_llm import BaseLLM, call_stop_override
from crewai.tools import BaseTool
from pydantic import BaseModel, ConfigDict, PrivateAttr

from retold.adapters.base import (
    TOOLS,
    Answer,
    MemorySession,
    Retold,
    RetoldError,
    ToolSpec,
    call_tool,
    derive_principal,
    memory_prompt,
    tool_result,
)

log = logging.getLogger("retold.adapters.crewai")

FINAL = "Final Answer:"


@dataclass
class _Run:
    """One kickoff: its session and which tasks' turns are recorded."""

    session: MemorySession | None
    asked: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)
    decisions: list[Answer] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class RetoldCrew:
    """Retold for one crew definition: the tools, callbacks, hooks and LLM proxy."""

    def __init__(self, retold: Retold, *, agent_id: str | None = None, tags: Sequence[str] = (),
                 recall_limit: int = 5, decide: bool = True, deadline_ms: int | None = None,
                 wait_for_extraction: bool = False) -> None:
        self.retold = retold
        self.agent_id = agent_id
        self.tags = list(tags)
        self.recall_limit = recall_limit
        self.decide = decide
        self.deadline_ms = deadline_ms
        self.wait_for_extraction = wait_for_extraction
        self._current: contextvars.ContextVar[_Run | None] = contextvars.ContextVar("retold_crewai_run", default=None)
        self._principal: contextvars.ContextVar[Any] = contextvars.ContextVar("retold_crewai_principal", default=None)
        self.last_run: _Run | None = None

    # The kickoff: principal and session.

    def crew_hooks(self) -> dict[str, Any]:
        """Keyword arguments for `Crew(...)`: the kickoff hooks and the task callback."""
        return {"before_kickoff_callbacks": [self.before_kickoff], "after_kickoff_callbacks": [self.after_kickoff],
                "task_callback": self.task_callback}

    def before_kickoff(self, inputs: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        principal = derive_principal(inputs, agent_id=self.agent_id)
        self._principal.set(principal)
        try:
            session: MemorySession | None = MemorySession(self.retold, principal, tags=self.tags)
        except RetoldError as error:
            log.warning("Retold unavailable, the crew runs without memory: %s", error)
            session = None
        run = _Run(session)
        self._current.set(run)
        self.last_run = run
        return inputs

    def after_kickoff(self, output: Any) -> Any:
        run = self._current.get()
        self._current.set(None)
        self._principal.set(None)
        if run is not None and run.session is not None:
            try:
                run.session.end(wait_for_extraction=self.wait_for_extraction)
            except RetoldError as error:
                log.warning("Retold did not end the session: %s", error)
        return output

    def session(self) -> MemorySession | None:
        """The session of the kickoff running in this context."""
        run = self._current.get()
        return run.session if run is not None else None

    # The tools.

    def tools(self) -> list[BaseTool]:
        return [_memory_tool(self, spec) for spec in TOOLS]

    def _call(self, spec: ToolSpec, arguments: dict[str, Any]) -> str:
        principal = self._principal.get()
        if principal is None:
            return "error: principal_invalid: no kickoff is running (add memory.crew_hooks() to the Crew)"
        try:
            answer = tool_result(call_tool(self.retold, spec, principal, self.session(), arguments))
        except RetoldError as error:
            answer = f"error: {error}"
        self._record("tool", f"{spec.name}: {answer}")
        return answer

    # Turns.

    def _record(self, role: str, content: str) -> None:
        session = self.session()
        if session is None:
            return
        try:
            session.record(role, content)
        except RetoldError as error:
            log.warning("Retold did not take a turn: %s", error)

    def _asked(self, task: str) -> bool:
        """Record `task` as the user turn unless it already is; True if it was new."""
        run = self._current.get()
        if run is None:
            return False
        with run.lock:
            if task in run.asked:
                return False
            run.asked.add(task)
        self._record("user", task)
        return True

    def step_callback(self, step: Any) -> None:
        """For `Agent(step_callback=...)`: actions, tool results and final answers as turns."""
        if isinstance(step, AgentAction):
            # The action itself was recorded by the LLM proxy before the tool ran, and a
            # memory tool records its own result; another tool's result is recorded here.
            if step.result is not None and step.tool not in {spec.name for spec in TOOLS}:
                self._record("tool", f"{step.tool}: {step.result}")
        elif isinstance(step, AgentFinish):
            run = self._current.get()
            output = step.output if isinstance(step.output, str) else step.output.model_dump_json()
            if run is not None:
                run.answered.add(output)
            self._record("assistant", output)

    def task_callback(self, output: Any) -> None:
        """For `Crew(task_callback=...)`: a task's text and output nobody recorded yet."""
        run = self._current.get()
        if run is None:
            return
        self._asked(output.description)
        if output.raw not in run.answered:
            run.answered.add(output.raw)
            self._record("assistant", output.raw)

    # The LLM proxy.

    def llm(self, inner: BaseLLM) -> RetoldLLM:
        """`inner` with the ProfileBlock, host-issued recall and the decision around it."""
        proxy = RetoldLLM(model=inner.model, inner=inner)
        proxy._memory = self
        return proxy

    def _prepare(self, messages: str | list[dict], task: str | None) -> str | list[dict]:
        run = self._current.get()
        if run is None or run.session is None or task is None:
            return messages
        self._asked(task)
        try:
            recalled = run.session.recall(task, limit=self.recall_limit)
        except RetoldError as error:
            log.warning("Retold recall failed: %s", error)
            recalled = []
        extra = memory_prompt(run.session.profile, recalled)
        if not extra:
            return messages
        if isinstance(messages, str):
            return [{"role": "system", "content": extra}, {"role": "user", "content": messages}]
        messages = [dict(m) for m in messages]
        if messages and messages[0].get("role") == "system":
            messages[0]["content"] = f"{messages[0]['content']}\n\n{extra}"
        else:
            messages.insert(0, {"role": "system", "content": extra})
        return messages

    def _decided(self, task: str | None, draft: Any) -> Any:
        run = self._current.get()
        if run is None or run.session is None or task is None or not isinstance(draft, str):
            return draft
        if not self.decide:
            if "Action:" in draft and FINAL not in draft:
                self._record("assistant", draft.strip())
            return draft
        if FINAL in draft:
            head, answer = draft.split(FINAL, 1)
        elif "Action:" not in draft:
            head, answer = None, draft
        else:
            # A tool call, not an answer: the agent's turn, recorded before the tool runs.
            self._record("assistant", draft.strip())
            return draft
        if not answer.strip():
            return draft
        decided = run.session.decide(task, answer.strip(), deadline_ms=self.deadline_ms)
        run.decisions.append(decided)
        if not decided.regenerated:
            return draft
        return decided.text if head is None else f"{head}{FINAL} {decided.text}"


def _task_text(task: Any) -> str | None:
    description = getattr(task, "description", None)
    return description if isinstance(description, str) and description.strip() else None


class RetoldLLM(BaseLLM):
    """A CrewAI LLM that adds Retold's profile and recall to each call of `inner` and puts its
    final answers through the orchestrator's decision."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    inner: Any
    _memory: RetoldCrew | None = PrivateAttr(default=None)

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        memory = self._memory
        task = _task_text(from_task)
        if memory is not None:
            messages = memory._prepare(messages, task)
        # CrewAI sets its stop words (`Observation:`) for the LLM it calls: this proxy. Pass
        # them on, or a text-mode model writes past the action and invents its result.
        stops = list(dict.fromkeys([*(self.stop_sequences or []), *(getattr(self.inner, "stop", None) or [])]))
        with call_stop_override(self.inner, stops):
            draft = self.inner.call(messages, tools=tools, callbacks=callbacks, available_functions=available_functions,
                                    from_task=from_task, from_agent=from_agent, response_model=response_model)
        return memory._decided(task, draft) if memory is not None else draft

    def supports_function_calling(self) -> bool:
        return bool(getattr(self.inner, "supports_function_calling", lambda: False)())

    def supports_stop_words(self) -> bool:
        return bool(getattr(self.inner, "supports_stop_words", lambda: True)())

    def get_context_window_size(self) -> int:
        return int(getattr(self.inner, "get_context_window_size", lambda: 8192)())


def _memory_tool(memory: RetoldCrew, spec: ToolSpec) -> BaseTool:
    class MemoryTool(BaseTool):
        name: str = spec.name
        description: str = spec.description
        args_schema: type[BaseModel] = spec.arguments

        def _run(self, **arguments: Any) -> str:
            return memory._call(spec, arguments)

    MemoryTool.__name__ = MemoryTool.__qualname__ = "".join(p.title() for p in spec.name.split("_")) + "Tool"
    return MemoryTool()
