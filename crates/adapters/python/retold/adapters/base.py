"""What every Retold adapter shares (seed section 14), on top of the generated client.

- `Principal` and `derive_principal`: who the current run acts for, read from the run's own
  data at call time (never captured when an agent is built).
- `Retold`: the service, over the generated `retold_client`: the five memory tools, sessions,
  the orchestrator's decision; stable error codes become `RetoldError` subclasses; timeouts;
  retries that are safe (reads, and writes under one `Idempotency-Key` per logical call).
- `MemorySession`: one session's lifecycle: start (the ProfileBlock), turns appended in order,
  the context attached to every search, host-issued recall, the decision that keeps or replaces
  a draft (failing closed: any failure keeps the draft), end.
- `TOOLS` and `tool_arguments`: the five tools' names, descriptions and argument models, derived
  from the generated client and the generated pydantic models (the principal is not an
  argument: the adapter supplies it).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import pydantic

import retold_schemas
from retold_client import AuthenticatedClient
from retold_client.api.memory_tools import memory_forget, memory_get, memory_revise, memory_search, memory_write
from retold_client.api.sessions import (
    session_append_turn,
    session_decide,
    session_end,
    session_profile,
    session_start,
)
from retold_client.models import (
    DecisionBody,
    EndSessionBody,
    ForgetBody,
    GetBody,
    ReviseBody,
    SearchBody,
    SessionBody,
    TurnBody,
    WriteBody,
)

# ---------------------------------------------------------------------------------------------
# Errors: the service's stable codes (the `code` of its RFC 9457 problem documents).


class RetoldError(Exception):
    """A request the service refused or could not answer; `code` is stable."""

    code = "internal"

    def __init__(self, detail: str, *, status: int | None = None, field: str | None = None,
                 candidates: Sequence[str] | None = None, code: str | None = None) -> None:
        super().__init__(detail)
        if code is not None:
            self.code = code
        self.detail = detail
        self.status = status
        self.field = field
        self.candidates = list(candidates or [])

    def __str__(self) -> str:
        where = f" (field {self.field})" if self.field else ""
        return f"{self.code}: {self.detail}{where}"


class ScopeNotWritable(RetoldError):
    code = "scope_not_writable"


class EntityAmbiguous(RetoldError):
    code = "entity_ambiguous"


class NotFound(RetoldError):
    code = "not_found"


class ValidationFailed(RetoldError):
    code = "validation_failed"


class Unauthorized(RetoldError):
    code = "unauthorized"


class Forbidden(RetoldError):
    code = "forbidden"


class Conflict(RetoldError):
    code = "conflict"


class IdempotencyKeyReused(RetoldError):
    code = "idempotency_key_reused"


class PayloadTooLarge(RetoldError):
    code = "payload_too_large"


class StorageFull(RetoldError):
    code = "storage_full"


class StorageUnavailable(RetoldError):
    code = "storage_unavailable"


class RetoldTimeout(RetoldError):
    code = "timeout"


class Unreachable(RetoldError):
    """No answer from the service (connection refused, reset or timed out) after the retries."""

    code = "unreachable"


class PrincipalError(RetoldError):
    """The run carries no usable principal (missing or malformed ids)."""

    code = "principal_invalid"


ERRORS: dict[str, type[RetoldError]] = {
    cls.code: cls
    for cls in (ScopeNotWritable, EntityAmbiguous, NotFound, ValidationFailed, Unauthorized, Forbidden, Conflict,
                IdempotencyKeyReused, PayloadTooLarge, StorageFull, StorageUnavailable, RetoldTimeout)
}


def error_from_response(status: int, content: bytes) -> RetoldError:
    """The exception for a non-2xx answer: the problem document's code, or `internal`."""
    try:
        problem = json.loads(content)
    except ValueError:
        problem = None
    if not isinstance(problem, dict) or not isinstance(problem.get("code"), str):
        return RetoldError(f"HTTP {status}: {content[:200]!r}", status=status)
    code = problem["code"]
    cls = ERRORS.get(code, RetoldError)
    return cls(str(problem.get("detail", "")), status=status, field=problem.get("field"),
               candidates=problem.get("candidates"), code=None if cls is not RetoldError else code)


# ---------------------------------------------------------------------------------------------
# The principal.

log = logging.getLogger("retold.adapters")

# The service's limits on a query and on a turn (longer text is cut, not refused).
MAX_QUERY_CHARS = 2000
MAX_TURN_CHARS = 100_000

_ID = re.compile(r"^[A-Za-z0-9_.@+-]{1,128}$")
_SESSION = re.compile(r"^sess_[A-Za-z0-9_]{1,123}$")


@dataclass(frozen=True)
class Principal:
    """The principal of one agent run, as the host asserts it (seed section 5)."""

    agent_id: str
    user_id: str
    project_id: str | None = None
    session_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("agent_id", "user_id", "project_id"):
            value = getattr(self, name)
            if value is None and name == "project_id":
                continue
            if not isinstance(value, str) or not _ID.match(value):
                raise PrincipalError(f"{name} must be 1-128 of A-Z a-z 0-9 _ . @ + - (no '/'), got {value!r}",
                                     field=name)
        if self.session_id is not None and (not isinstance(self.session_id, str) or not _SESSION.match(self.session_id)):
            raise PrincipalError(f"session_id must look like sess_..., got {self.session_id!r}", field="session_id")

    def in_session(self, session_id: str | None) -> Principal:
        return Principal(self.agent_id, self.user_id, self.project_id, session_id)

    def to_body(self) -> dict[str, str]:
        body = {"agent_id": self.agent_id, "user_id": self.user_id}
        if self.project_id is not None:
            body["project_id"] = self.project_id
        if self.session_id is not None:
            body["session_id"] = self.session_id
        return body


def derive_principal(run: Mapping[str, Any] | None, *, agent_id: str | None = None) -> Principal:
    """The principal of the current run, from the run's own data (LangGraph's `configurable`,
    the mapping a CrewAI run is started with).

    Rules, in order: a `retold` mapping inside `run` wins over flat keys; `user_id` is required;
    `agent_id` comes from the run, else the adapter's `agent_id` (the agent's own name); then
    `project_id`; `session_id` only when the host manages sessions itself. Anything else in the
    run is ignored; a missing user or a malformed id raises `PrincipalError`.
    """
    run = run or {}
    nested = run.get("retold")
    source = nested if isinstance(nested, Mapping) else run
    user = source.get("user_id")
    if user is None:
        raise PrincipalError("the run names no user: pass user_id in the run's configuration", field="user_id")
    agent = source.get("agent_id") or agent_id
    if agent is None:
        raise PrincipalError("the run names no agent: pass agent_id in the run or to the adapter", field="agent_id")
    return Principal(agent, user, source.get("project_id"), source.get("session_id"))


# ---------------------------------------------------------------------------------------------
# The service.



@dataclass(frozen=True)
class _Call:
    """One generated endpoint and how a failed attempt may be retried."""

    endpoint: Any  # a generated module with `sync_detailed`
    body: Any  # the generated body model
    keyed: bool  # takes an Idempotency-Key (safe to retry a write under it)
    safe: bool  # a read: safe to retry as is


_SEARCH = _Call(memory_search, SearchBody, keyed=False, safe=True)
_GET = _Call(memory_get, GetBody, keyed=False, safe=True)
_WRITE = _Call(memory_write, WriteBody, keyed=True, safe=False)
_REVISE = _Call(memory_revise, ReviseBody, keyed=True, safe=False)
_FORGET = _Call(memory_forget, ForgetBody, keyed=True, safe=False)
_START = _Call(session_start, SessionBody, keyed=False, safe=False)
_TURN = _Call(session_append_turn, TurnBody, keyed=True, safe=False)
_END = _Call(session_end, EndSessionBody, keyed=False, safe=False)
_DECIDE = _Call(session_decide, DecisionBody, keyed=False, safe=False)


class Retold:
    """The Retold service at `base_url`, called with one host key.

    Every call has `timeout` seconds per attempt. Reads are retried on a transport failure or a
    503; writes (`memory_write`, `memory_revise`, `memory_forget`, turns) are retried under the
    one `Idempotency-Key` of their logical call, so a retry after a lost answer gets the first
    answer and writes nothing twice. Session start and end and the decision are not retried.
    """

    def __init__(self, base_url: str, key: str, *, timeout: float = 10.0, retries: int = 2,
                 backoff: float = 0.2) -> None:
        self.base_url = base_url
        self.retries = retries
        self.backoff = backoff
        self._client = AuthenticatedClient(base_url=base_url, token=key, timeout=httpx.Timeout(timeout),
                                           raise_on_unexpected_status=False)

    # The five tools. Each takes the principal and the tool's own arguments, returns the JSON
    # answer as a dict and raises a `RetoldError` for a refusal.

    def search(self, principal: Principal, query: str, *, context: Sequence[str] = (), **options: Any) -> dict:
        return self.tool("memory_search", principal, {"query": query, **options}, context=context)

    def get(self, principal: Principal, ids: Sequence[str]) -> dict:
        return self._send(_GET, {"principal": principal.to_body(), "ids": list(ids)})

    def write(self, principal: Principal, **fields: Any) -> dict:
        return self._send(_WRITE, {"principal": principal.to_body(), **_present(fields)})

    def revise(self, principal: Principal, **fields: Any) -> dict:
        return self._send(_REVISE, {"principal": principal.to_body(), **_present(fields)})

    def forget(self, principal: Principal, id: str, reason: str) -> dict:
        return self._send(_FORGET, {"principal": principal.to_body(), "id": id, "reason": reason})

    def tool(self, name: str, principal: Principal, arguments: Mapping[str, Any], *,
             context: Sequence[str] = ()) -> dict:
        """Run the tool `name` with arguments an agent produced (validated by the service)."""
        call = {"memory_search": _SEARCH, "memory_get": _GET, "memory_write": _WRITE, "memory_revise": _REVISE,
                "memory_forget": _FORGET}.get(name)
        if call is None:
            raise ValidationFailed(f"no tool named {name!r}", field="name")
        body = {**_present(dict(arguments)), "principal": principal.to_body()}
        if isinstance(body.get("replacement"), Mapping):
            # A supersede's replacement is a write by the same principal.
            body["replacement"] = {**body["replacement"], "principal": principal.to_body()}
        if call is _SEARCH and context and "context" not in body:
            body["context"] = list(context)[-10:]
        if call is _SEARCH:
            body["query"] = str(body.get("query", ""))[:MAX_QUERY_CHARS]
        return self._send(call, body)

    # Sessions and the decision.

    def start_session(self, principal: Principal, *, tags: Sequence[str] = (), scope: str | None = None) -> dict:
        """Start a session; its turns are kept as memory in `scope` (one the agent may write),
        else in the principal's private scope."""
        body = {"principal": principal.in_session(None).to_body()}
        if tags:
            body["tags"] = list(tags)
        if scope is not None:
            body["scope"] = scope
        return self._send(_START, body)

    def append_turn(self, principal: Principal, role: str, content: str, *, idempotency_key: str | None = None,
                    speaker: str | None = None, at: str | None = None) -> dict:
        """Append a turn: `speaker` names who spoke when the session has more voices than its
        user, agent and tools; `at` (RFC 3339) is when it was said, for replayed history."""
        session = _session_of(principal)
        body = {"principal": principal.to_body(), "role": role, "content": content}
        body.update(_present({"speaker": speaker, "at": at}))
        return self._send(_TURN, body, path=session, idempotency_key=idempotency_key)

    def profile(self, principal: Principal) -> dict:
        """The profile of the principal's session (a session the host started itself)."""
        session = _session_of(principal)
        response = session_profile.sync_detailed(session, client=self._client, agent_id=principal.agent_id,
                                                 user_id=principal.user_id)
        if 200 <= int(response.status_code) < 300:
            return json.loads(response.content)
        raise error_from_response(int(response.status_code), response.content)

    def end_session(self, principal: Principal, *, wait_for_extraction: bool = False) -> dict | None:
        session = _session_of(principal)
        return self._send(_END, {"principal": principal.to_body(), "wait_for_extraction": wait_for_extraction},
                          path=session)

    def decide(self, principal: Principal, turn: str, draft: str, *, deadline_ms: int | None = None) -> dict:
        session = _session_of(principal)
        body = {"principal": principal.to_body(), "turn": turn, "draft": draft}
        if deadline_ms is not None:
            body["deadline_ms"] = deadline_ms
        return self._send(_DECIDE, body, path=session)

    def close(self) -> None:
        self._client.get_httpx_client().close()

    # One logical call: attempts, the idempotency key, error mapping.

    def _send(self, call: _Call, body: dict, *, path: str | None = None, idempotency_key: str | None = None) -> Any:
        args: dict[str, Any] = {"client": self._client, "body": call.body.from_dict(body)}
        if path is not None:
            args["id"] = path
        if call.keyed:
            args["idempotency_key"] = idempotency_key or f"retold-py-{uuid.uuid4().hex}"
        retryable = call.safe or call.keyed
        attempt = 0
        while True:
            wait: float | None = None
            try:
                response = call.endpoint.sync_detailed(**args)
            except httpx.TimeoutException as error:
                failure: RetoldError = Unreachable(f"no answer within the timeout from {self.base_url}: {error}")
            except httpx.TransportError as error:
                failure = Unreachable(f"cannot reach {self.base_url}: {error}")
            else:
                status = int(response.status_code)
                if 200 <= status < 300:
                    try:
                        return json.loads(response.content) if response.content else None
                    except ValueError as error:
                        raise RetoldError(f"HTTP {status} with a body that is not JSON: {error}",
                                          status=status) from error
                failure = error_from_response(status, response.content)
                # 503 storage_unavailable is retried; so is a keyed write whose first attempt
                # is still running: the one 409 the server marks with Retry-After.
                wait = _retry_after(response.headers) if call.keyed and status == 409 else None
                if status != 503 and wait is None:
                    raise failure
            if not retryable or attempt >= self.retries:
                raise failure
            time.sleep(max(self.backoff * (2**attempt), min(wait or 0.0, 5.0)))
            attempt += 1


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _present(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def _session_of(principal: Principal) -> str:
    if principal.session_id is None:
        raise PrincipalError("this call needs a session: start one first", field="session_id")
    return principal.session_id


# ---------------------------------------------------------------------------------------------
# The five tools as framework-neutral specs.


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[pydantic.BaseModel]


def tool_arguments(body: type[pydantic.BaseModel], name: str,
                   nested: Mapping[str, type[pydantic.BaseModel]] | None = None) -> type[pydantic.BaseModel]:
    """The generated request model without `principal` (the adapter supplies it), keeping every
    field's type, constraints and description; `nested` replaces a field's model the same way
    (a supersede's `replacement` is a write without its principal)."""
    fields = {}
    for key, info in body.model_fields.items():
        if key == "principal":
            continue
        annotation = info.annotation
        if nested and key in nested:
            annotation = nested[key] | None
        fields[key] = (annotation, info)
    model = pydantic.create_model(name, __config__=pydantic.ConfigDict(extra="forbid", populate_by_name=True), **fields)
    model.__doc__ = body.__doc__
    return model


def _summary(endpoint: Any) -> str:
    """The operation's summary, as the generated client documents it."""
    return (endpoint.sync_detailed.__doc__ or "").strip().splitlines()[0].strip()


_WRITE_ARGS = tool_arguments(retold_schemas.WriteBody, "MemoryWriteArgs")

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("memory_search", _summary(memory_search), tool_arguments(retold_schemas.SearchBody, "MemorySearchArgs")),
    ToolSpec("memory_get", _summary(memory_get), tool_arguments(retold_schemas.GetBody, "MemoryGetArgs")),
    ToolSpec("memory_write", _summary(memory_write), _WRITE_ARGS),
    ToolSpec("memory_revise", _summary(memory_revise),
             tool_arguments(retold_schemas.ReviseBody, "MemoryReviseArgs", {"replacement": _WRITE_ARGS})),
    ToolSpec("memory_forget", _summary(memory_forget), tool_arguments(retold_schemas.ForgetBody, "MemoryForgetArgs")),
)


def call_tool(retold: Retold, spec: ToolSpec, principal: Principal, session: MemorySession | None,
              arguments: Mapping[str, Any]) -> dict:
    """One tool call as both adapters make it: the arguments validated by the tool's model,
    the run's principal (inside its session when the session is the run's), and on a search the
    session's latest turns as context. Raises `RetoldError`."""
    context: list[str] = []
    if session is not None and session.principal.in_session(None) == principal.in_session(None):
        principal, context = session.principal, session.context()
    try:
        validated = spec.arguments(**arguments)
    except pydantic.ValidationError as error:
        raise ValidationFailed(str(error).splitlines()[0] if str(error) else "invalid arguments",
                               field=str(error.errors()[0]["loc"][0]) if error.errors() else None) from error
    return retold.tool(spec.name, principal, arguments_as_json(validated), context=context)


def tool_result(answer: Any) -> str:
    """A tool's answer as the text an agent reads."""
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))


def arguments_as_json(arguments: pydantic.BaseModel) -> dict[str, Any]:
    """Validated tool arguments as the JSON the service takes (enums and times as strings)."""
    return arguments.model_dump(mode="json", exclude_none=True, by_alias=True)


# ---------------------------------------------------------------------------------------------
# A session.

ROLES = ("user", "assistant", "tool")
CONTEXT_TURNS = 4


@dataclass
class Answer:
    """The answer a host shows: the regenerated one, or the draft with why it was kept."""

    text: str
    regenerated: bool
    reason: str | None = None
    decision_id: str | None = None
    admitted: list[str] = field(default_factory=list)


class MemorySession:
    """One agent session with Retold (seed section 13).

    Created, it starts the session and keeps its ProfileBlock (or, when the principal names a
    session the host started itself, joins that one and reads its profile); `record` appends a
    turn; `context` is what every search from this session carries (the latest user and
    assistant turns); `recall` is host-issued search; `decide` asks the orchestrator about a
    draft and fails closed; `end` ends the session (its extraction then runs).
    """

    def __init__(self, retold: Retold, principal: Principal, *, tags: Sequence[str] = ()) -> None:
        self.retold = retold
        if principal.session_id is not None:
            self.id: str = principal.session_id
            self.profile: dict = retold.profile(principal)
        else:
            started = retold.start_session(principal, tags=tags)
            self.id = started["id"]
            self.profile = started["profile"]
        self.principal = principal.in_session(self.id)
        self.turns: list[tuple[str, str]] = []
        self._recalled: tuple[tuple[str, int], list[dict]] | None = None
        self._lock = threading.Lock()
        self.ended = False

    def record(self, role: str, content: str, *, key: str | None = None, speaker: str | None = None) -> int | None:
        """Append a turn, in call order; returns its number. With the service's turn memory
        (on by default) it is searchable from the next session on, no tool call needed.

        Text past the service's limit is cut; empty content is not a turn (None). `key` names
        the turn for the host (a message id): a retry of it, or recording it again, never adds
        it twice. A turn the service refuses for what it is (`validation_failed`,
        `payload_too_large`) is skipped with a warning, so one bad turn does not stop the ones
        after it; a failure to reach the service raises.
        """
        if role not in ROLES:
            raise ValidationFailed(f"role must be one of {ROLES}, got {role!r}", field="role")
        if not content or not content.strip():
            return None
        if len(content) > MAX_TURN_CHARS:
            content = content[: MAX_TURN_CHARS - 20] + " [cut by the adapter]"
        idempotency_key = None
        if key is not None:
            idempotency_key = re.sub(r"[^!-~]", "_", f"turn:{self.id}:{key}")[:255]
        with self._lock:
            try:
                answer = self.retold.append_turn(self.principal, role, content, idempotency_key=idempotency_key,
                                                 speaker=speaker)
            except (ValidationFailed, PayloadTooLarge) as error:
                log.warning("Retold refused a %s turn, skipped: %s", role, error)
                return None
            self.turns.append((role, content))
        return int(answer["turn"])

    def context(self) -> list[str]:
        """The latest user and assistant turns, oldest first, for `SearchRequest.context`."""
        spoken = [text for role, text in self.turns if role in ("user", "assistant")]
        return [text[:2000] for text in spoken[-CONTEXT_TURNS:]]

    def search(self, query: str, **options: Any) -> dict:
        return self.retold.search(self.principal, query, context=self.context(), **options)

    def recall(self, query: str, *, limit: int = 5) -> list[dict]:
        """Host-issued recall for `query`: the search's results (records with explanations).
        Asked again for the same query (the model called again within one turn), it answers
        from the last search instead of searching again."""
        if self._recalled is not None and self._recalled[0] == (query, limit):
            return self._recalled[1]
        results = self.search(query, limit=limit)["results"]
        self._recalled = ((query, limit), results)
        return results

    def decide(self, turn: str, draft: str, *, deadline_ms: int | None = None) -> Answer:
        """The orchestrator's decision on `draft`: its regenerated answer, else the draft.
        Any failure (the service down, a refusal, a malformed answer) keeps the draft."""
        try:
            outcome = self.retold.decide(self.principal, turn, draft, deadline_ms=deadline_ms)
            decision = outcome["decision"]
            if decision["disposition"] == "regenerated" and isinstance(decision.get("answer"), str) \
                    and decision["answer"].strip():
                return Answer(decision["answer"], True, None, decision["id"], list(decision.get("admitted", [])))
            return Answer(draft, False, decision.get("reason") or "draft_kept", decision.get("id"),
                          list(decision.get("admitted", [])))
        except RetoldError as error:
            log.warning("Retold decision failed, keeping the draft: %s", error)
            return Answer(draft, False, f"failed: {error.code}")
        except Exception as error:  # noqa: BLE001 - fail closed on anything
            log.exception("Retold decision failed, keeping the draft")
            return Answer(draft, False, f"failed: {type(error).__name__}")

    def end(self, *, wait_for_extraction: bool = False) -> dict | None:
        if self.ended:
            return None
        answer = self.retold.end_session(self.principal, wait_for_extraction=wait_for_extraction)
        self.ended = True
        return answer


def profile_text(profile: Mapping[str, Any] | None) -> str:
    """The ProfileBlock's text for a system prompt ('' when it holds nothing)."""
    if not profile:
        return ""
    return str(profile.get("text") or "").strip()


# Who said a turn kept by turn memory, by its source kind, when the host named no speaker.
_SAID_BY = {"user_statement": "the user", "system": "you (the assistant)", "tool_result": "a tool"}


def said(record: Mapping[str, Any]) -> str:
    """How a recalled record is introduced: nothing for a memory; for a session turn kept
    verbatim, who said it and when (`the user said on 2026-12-06: `), since its text is what
    was said, in the first person of whoever said it."""
    if record.get("origin") != "turn":
        return ""
    who = record.get("speaker") or _SAID_BY.get(record.get("source_kind", ""), "someone")
    when = str(record.get("event_at") or "")[:10]
    return f"{who} said on {when}: " if when else f"{who} said: "


def recall_text(results: Sequence[Mapping[str, Any]]) -> str:
    """Recalled records as a block for the model's context, each with its id to cite; a long
    record shows its passage (what the search's token budget counted); a session turn kept
    verbatim says who said it and when."""
    if not results:
        return ""
    lines = ["Memories recalled for this turn (Retold; cite the id when you use one):"]
    for result in results:
        record = result["record"]
        shown = (result.get("passage") or {}).get("text") or record["content"]
        lines.append(f"- [{record['id']}] {said(record)}{shown}")
    return "\n".join(lines)


def memory_prompt(profile: Mapping[str, Any] | None, recalled: Sequence[Mapping[str, Any]]) -> str:
    """What the adapter adds to the system prompt: the profile, then the recall."""
    return "\n\n".join(part for part in (profile_text(profile), recall_text(recalled)) if part)
