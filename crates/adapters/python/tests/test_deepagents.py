"""The deepagents adapter with a real `create_deep_agent` graph, LangChain's fake chat model
scripted, against the real server."""

import asyncio
import json
import re

from deepagents import create_deep_agent
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from conftest import HEDGED, PREFERENCE, TURN
from proxy import Proxy
from scripted import script, system_text, tool_call

from retold.adapters.base import Principal, Retold
from retold.adapters.deepagents import RetoldMemory

EDITOR = "Jo's preferred editor is Helix."


def agent_with(memory, model):
    return create_deep_agent(model=model, tools=memory.tools(), middleware=[memory.middleware()],
                             system_prompt="You are Jo's assistant.")


def ask(agent, text, config):
    return agent.invoke({"messages": [{"role": "user", "content": text}]}, config=config)


def answer_from_memory(messages):
    """Answer with the recalled memory about the editor, citing its id, or admit not knowing."""
    found = re.search(r"- \[(mem_\w+)\] (Jo's preferred editor is Helix\.)", system_text(messages))
    if found is None:
        return AIMessage(content="I don't know which editor you use.")
    return AIMessage(content=f"You use Helix ({found.group(1)}).")


def test_a_memory_written_in_one_session_is_recalled_and_used_in_the_next(retold, admin):
    memory = RetoldMemory(retold, agent_id="assistant")
    first = {"configurable": {"thread_id": "t1", "user_id": "jo"}}
    model = script(
        tool_call("memory_write", {"type": "semantic", "content": EDITOR, "scope": "user:jo",
                                   "source_kind": "user_statement"}),
        AIMessage(content="Noted: Helix is your editor."),
        answer_from_memory,
    )
    agent = agent_with(memory, model)
    state = ask(agent, "Remember that my editor is Helix.", first)
    written = json.loads(next(m for m in state["messages"] if isinstance(m, ToolMessage)).content)
    assert written["outcome"] == "created"
    session_one = memory.session(first, start=False).id
    memory.end(first)

    second = {"configurable": {"thread_id": "t2", "user_id": "jo"}}
    state = ask(agent, "Which editor do I use?", second)
    final = state["messages"][-1]
    # The model answered from the recall the middleware put before it, citing the record.
    assert final.content == f"You use Helix ({written['record_id']})."
    session_two = memory.session(second, start=False)
    assert session_two.id != session_one
    assert f"[{written['record_id']}] {EDITOR}" in system_text(model.seen[-1])

    # Turns landed in each session's buffer in order: the user, the tool result, the answer.
    turns = admin.turns(session_one)
    assert [role for role, _ in turns] == ["user", "tool", "assistant"]
    assert turns[0][1] == "Remember that my editor is Helix."
    assert turns[1][1].startswith("memory_write: ") and written["record_id"] in turns[1][1]
    assert turns[2][1] == "Noted: Helix is your editor."
    assert admin.turns(session_two.id) == [("user", "Which editor do I use?"), ("assistant", final.content)]

    # The answer-producing call went through the orchestrator; its decision is stored.
    decision = final.response_metadata["retold"]
    assert decision["regenerated"] is False
    assert [d["id"] for d in admin.decisions(session_two.id)] == [decision["decision_id"]]
    memory.end(second)


def test_the_principal_is_read_from_each_run_not_from_the_agent(retold, admin):
    memory = RetoldMemory(retold, agent_id="assistant")
    write = {"type": "semantic", "content": "Sam's shell is fish.", "scope": "agent:assistant/sam",
             "source_kind": "user_statement"}
    agent = agent_with(memory, script(tool_call("memory_write", write), AIMessage(content="Noted."),
                                      tool_call("memory_search", {"query": "Which shell does Sam use?"}),
                                      AIMessage(content="Done.")))
    ask(agent, "My shell is fish.", {"configurable": {"thread_id": "s", "user_id": "sam"}})
    # The same agent, run for jo: the search runs as jo and cannot see Sam's private record.
    state = ask(agent, "Which shell does Sam use?", {"configurable": {"thread_id": "j", "user_id": "jo"}})
    searched = json.loads(next(m for m in state["messages"] if isinstance(m, ToolMessage)).content)
    assert admin.get(f"/v1/admin/search-log/{searched['search_id']}")["principal"]["user_id"] == "jo"
    assert all("fish" not in r["record"]["content"] for r in searched["results"])
    as_sam = retold.search(Principal("assistant", "sam"), "Which shell does Sam use?")["results"]
    # The memory written as Sam, beside Sam's own turn kept by turn memory: all Sam's.
    assert "Sam's shell is fish." in [r["record"]["content"] for r in as_sam]
    assert all(r["record"]["scope_id"].endswith("sam") for r in as_sam)


def test_a_scope_violation_is_a_tool_error_the_model_reads(retold):
    memory = RetoldMemory(retold, agent_id="assistant")
    model = script(
        tool_call("memory_write", {"type": "semantic", "content": "The launch is on Friday.",
                                   "scope": "project:secret", "source_kind": "system"}),
        lambda messages: AIMessage(content="I may not store that: " + messages[-1].content),
    )
    state = ask(agent_with(memory, model), "Store the launch date.", {"configurable": {"thread_id": "v", "user_id": "jo"}})
    refused = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert refused.status == "error" and "scope_not_writable" in refused.content
    assert "scope_not_writable" in state["messages"][-1].content


def test_the_answer_is_the_draft_when_the_service_goes_down_before_the_decision(url, key):
    proxy = Proxy(url)
    memory = RetoldMemory(Retold(proxy.url, key, timeout=5.0, retries=0), agent_id="assistant")

    def draft_then_outage(messages):
        proxy.cut()  # the service goes away between the draft and the decision
        return AIMessage(content="Your editor is probably Helix.")

    state = ask(agent_with(memory, script(draft_then_outage)), "Which editor do I use?",
                {"configurable": {"thread_id": "d", "user_id": "jo"}})
    final = state["messages"][-1]
    assert final.content == "Your editor is probably Helix."
    assert final.response_metadata["retold"]["reason"] == "failed: unreachable"


def test_an_agent_runs_without_memory_when_the_service_is_down_from_the_start(key):
    memory = RetoldMemory(Retold("http://127.0.0.1:9", key, timeout=2.0, retries=0), agent_id="assistant")
    model = script(tool_call("memory_search", {"query": "editor"}),
                   lambda messages: AIMessage(content="Memory said: " + messages[-1].content))
    state = ask(agent_with(memory, model), "Which editor do I use?", {"configurable": {"thread_id": "x", "user_id": "jo"}})
    assert state["messages"][-1].content.startswith("Memory said: unreachable: ")


def test_a_hedged_draft_is_replaced_by_the_answer_the_orchestrator_regenerates(retold, admin, regenerated):
    stored = retold.write(Principal("assistant", "jo"), type="semantic", content=PREFERENCE, scope="user:jo",
                          source_kind="user_statement")
    memory = RetoldMemory(retold, agent_id="assistant")
    config = {"configurable": {"thread_id": "regen", "user_id": "jo"}}
    state = ask(agent_with(memory, script(AIMessage(content=HEDGED))), TURN, config)
    final = state["messages"][-1]
    assert final.content == regenerated
    decision = final.response_metadata["retold"]
    assert decision["regenerated"] is True and stored["record_id"] in decision["admitted"]
    session = memory.session(config, start=False).id
    [stored_decision] = admin.decisions(session)
    assert (stored_decision["id"], stored_decision["disposition"]) == (decision["decision_id"], "regenerated")
    # The transcript holds the answer the user saw, not the draft.
    assert admin.turns(session) == [("user", TURN), ("assistant", regenerated)]


def test_an_async_run_gets_the_same_recall_and_decision(retold, admin):
    retold.write(Principal("assistant", "jo"), type="semantic", content="Jo's preferred shell is zsh.",
                 scope="user:jo", source_kind="user_statement")
    memory = RetoldMemory(retold, agent_id="assistant")
    def answer(messages):
        found = re.search(r"- \[(mem_\w+)\] Jo's preferred shell is zsh", system_text(messages))
        return AIMessage(content=f"zsh ({found.group(1)})" if found else "?")

    model = script(answer)
    config = {"configurable": {"thread_id": "async", "user_id": "jo"}}
    state = asyncio.run(agent_with(memory, model).ainvoke({"messages": [{"role": "user", "content": "Which shell do I use?"}]},
                                                         config=config))
    final = state["messages"][-1]
    assert final.content.startswith("zsh (mem_"), final.content
    session = memory.session(config, start=False).id
    assert [d["id"] for d in admin.decisions(session)] == [final.response_metadata["retold"]["decision_id"]]
    assert admin.turns(session) == [("user", "Which shell do I use?"), ("assistant", final.content)]


def test_a_checkpointed_thread_records_each_message_once_across_runs_and_sessions(retold, admin):
    memory = RetoldMemory(retold, agent_id="assistant")
    model = script(AIMessage(content="First answer."), AIMessage(content="Second answer."))
    agent = create_deep_agent(model=model, tools=memory.tools(), middleware=[memory.middleware()],
                              checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "kept", "user_id": "jo"}}
    ask(agent, "First question.", config)
    first = memory.session(config, start=False).id
    memory.end(config)
    state = ask(agent, "Second question.", config)
    assert len(state["messages"]) == 4  # the checkpointer brought the first exchange back
    second = memory.session(config, start=False).id
    assert admin.turns(first) == [("user", "First question."), ("assistant", "First answer.")]
    assert admin.turns(second) == [("user", "Second question."), ("assistant", "Second answer.")]


def test_a_supersede_through_the_tool_replaces_the_record_as_the_same_principal(retold):
    memory = RetoldMemory(retold, agent_id="assistant")
    fact = {"subject": {"name": "Jo", "kind": "person"}, "attribute": "desk_floor"}
    old = retold.write(Principal("assistant", "jo"), type="semantic", content="Jo's desk is on floor 3.",
                       scope="user:jo", source_kind="system", **fact)
    replacement = {"type": "semantic", "content": "Jo's desk is on floor 5.", "scope": "user:jo",
                   "source_kind": "system", **fact}
    model = script(tool_call("memory_revise", {"action": "supersede", "id": old["record_id"], "replacement": replacement}),
                   AIMessage(content="Updated."))
    state = ask(agent_with(memory, model), "My desk moved to floor 5.", {"configurable": {"thread_id": "sup", "user_id": "jo"}})
    revised = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert revised.status != "error", revised.content
    found = retold.search(Principal("assistant", "jo"), "Which floor is Jo's desk on?")["results"]
    contents = [r["record"]["content"] for r in found]
    assert "Jo's desk is on floor 5." in contents and "Jo's desk is on floor 3." not in contents


def test_a_preference_stated_in_one_session_with_no_tool_call_is_recalled_and_used_in_the_next(retold, admin):
    """Turn memory, with no provider key: nothing calls memory_write, the user only says it."""
    memory = RetoldMemory(retold, agent_id="assistant")
    first = {"configurable": {"thread_id": "veg-1", "user_id": "kiki"}}
    agent = agent_with(memory, script(AIMessage(content="Noted, no meat from now on.")))
    ask(agent, "I'm vegetarian, so please never suggest meat dishes for dinner.", first)
    memory.end(first)

    def answer(messages):
        found = re.search(r"- \[(mem_\w+)\] the user said on [0-9-]+: (I'm vegetarian.*)", system_text(messages))
        if found is None:
            return AIMessage(content="How about a steak?")
        return AIMessage(content=f"A mushroom risotto: you told me you're vegetarian ({found.group(1)}).")

    model = script(answer)
    second = {"configurable": {"thread_id": "veg-2", "user_id": "kiki"}}
    state = ask(agent_with(memory, model), "What should I cook for dinner tonight?", second)
    final = state["messages"][-1]
    assert final.content.startswith("A mushroom risotto: you told me you're vegetarian (mem_"), final.content
    cited = final.content.rsplit("(", 1)[1].rstrip(").")
    [record] = retold.get(Principal("assistant", "kiki"), [cited])["records"]
    assert (record["record"]["origin"], record["record"]["source_kind"]) == ("turn", "user_statement")
    # The question just asked is not recalled back to the model: a session's own turns are
    # left out of its searches.
    assert "What should I cook for dinner tonight?" not in system_text(model.seen[-1])
    memory.end(second)
