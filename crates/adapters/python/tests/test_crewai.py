"""The CrewAI adapter with a real Crew, Agent and Task, and a scripted LLM (CrewAI ships no fake
one: `ScriptedLLM` is its `BaseLLM` extension point answering from a script), against the real
server."""

import json
import re

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from conftest import HEDGED, PREFERENCE, TURN
from proxy import Proxy

from retold.adapters.base import Principal, Retold
from retold.adapters.crewai import RetoldCrew

TERMINAL = "Jo's preferred terminal is WezTerm."


class ScriptedLLM(BaseLLM):
    """Each step is a string, or a function of the messages the LLM was sent."""

    steps: list = []
    seen: list = []
    stops: list = []

    def call(self, messages, tools=None, callbacks=None, available_functions=None, from_task=None,
             from_agent=None, response_model=None):
        self.seen.append(messages)
        self.stops.append(list(self.stop_sequences))
        step = self.steps.pop(0)
        return step(messages) if callable(step) else step

    def supports_function_calling(self) -> bool:
        return False


def scripted(*steps):
    return ScriptedLLM(model="scripted", steps=list(steps), seen=[], stops=[])


def action(tool, arguments):
    return f"Thought: I should use {tool}.\nAction: {tool}\nAction Input: {json.dumps(arguments)}"


def system_text(messages):
    return "\n".join(m["content"] for m in messages if m["role"] == "system")


def crew_with(memory, llm, task_text):
    agent = Agent(role="assistant", goal="Help Jo", backstory="Jo's assistant.", llm=memory.llm(llm),
                  tools=memory.tools(), step_callback=memory.step_callback, verbose=False)
    task = Task(description=task_text, expected_output="An answer", agent=agent)
    return Crew(agents=[agent], tasks=[task], **memory.crew_hooks())


def answer_from_memory(messages):
    found = re.search(r"- \[(mem_\w+)\] (Jo's preferred terminal is WezTerm\.)", system_text(messages))
    if found is None:
        return "Thought: I do not know.\nFinal Answer: I don't know which terminal you use."
    return f"Thought: I remember.\nFinal Answer: You use WezTerm ({found.group(1)})."


def test_a_memory_written_in_one_kickoff_is_recalled_and_used_in_the_next(retold, admin):
    memory = RetoldCrew(retold, agent_id="assistant")
    llm = scripted(
        action("memory_write", {"type": "semantic", "content": TERMINAL, "scope": "user:jo",
                                "source_kind": "user_statement"}),
        "Thought: Stored.\nFinal Answer: Noted: WezTerm is your terminal.",
    )
    out = crew_with(memory, llm, "Remember that Jo's terminal is WezTerm.").kickoff(inputs={"user_id": "jo"})
    assert out.raw == "Noted: WezTerm is your terminal."
    # CrewAI's stop words reached the wrapped LLM through the proxy.
    assert all(any("Observation" in stop for stop in stops) for stops in llm.stops), llm.stops
    first = memory.last_run.session
    assert first.ended
    turns = admin.turns(first.id)
    assert [role for role, _ in turns] == ["user", "assistant", "tool", "assistant"]
    assert turns[0][1] == "Remember that Jo's terminal is WezTerm."
    assert "Action: memory_write" in turns[1][1]
    written = json.loads(turns[2][1].removeprefix("memory_write: "))
    assert written["outcome"] == "created"
    assert turns[3][1] == "Noted: WezTerm is your terminal."

    llm = scripted(answer_from_memory)
    out = crew_with(memory, llm, "Which terminal does Jo use?").kickoff(inputs={"user_id": "jo"})
    # The LLM answered from the recall the proxy put in its system message.
    assert out.raw == f"You use WezTerm ({written['record_id']})."
    assert f"[{written['record_id']}] {TERMINAL}" in system_text(llm.seen[0])
    second = memory.last_run.session
    assert second.id != first.id
    assert admin.turns(second.id) == [("user", "Which terminal does Jo use?"), ("assistant", out.raw)]
    # The final answer went through the orchestrator; its decision is stored.
    [decided] = memory.last_run.decisions
    assert decided.regenerated is False
    assert [d["id"] for d in admin.decisions(second.id)] == [decided.decision_id]


def test_the_principal_comes_from_the_kickoff_inputs(retold, admin):
    memory = RetoldCrew(retold, agent_id="assistant")
    write = {"type": "semantic", "content": "Sam's shell is fish.", "scope": "agent:assistant/sam",
             "source_kind": "user_statement"}
    crew_with(memory, scripted(action("memory_write", write), "Thought: ok\nFinal Answer: Noted."),
              "Remember Sam's shell.").kickoff(inputs={"user_id": "sam"})
    seen = {}

    def record(messages):
        seen["observation"] = messages[-2]["content"]
        return "Thought: ok\nFinal Answer: Done."

    crew_with(memory, scripted(action("memory_search", {"query": "Which shell does Sam use?"}), record),
              "Which shell does Sam use?").kickoff(inputs={"user_id": "jo"})
    # Run for jo, the same crew's search cannot see Sam's private record.
    searched = json.loads(seen["observation"].split("Observation:", 1)[1])
    assert admin.get(f"/v1/admin/search-log/{searched['search_id']}")["principal"]["user_id"] == "jo"
    assert all("fish" not in r["record"]["content"] for r in searched["results"])
    as_sam = retold.search(Principal("assistant", "sam"), "Which shell does Sam use?")["results"]
    # The memory written as Sam, beside Sam's turns kept by turn memory: all Sam's.
    assert "Sam's shell is fish." in [r["record"]["content"] for r in as_sam]
    assert all(r["record"]["scope_id"].endswith("sam") for r in as_sam)


def test_a_scope_violation_is_a_tool_error_the_agent_reads(retold, admin):
    memory = RetoldCrew(retold, agent_id="assistant")
    seen = {}

    def read(messages):
        seen["observation"] = messages[-2]["content"]
        return "Thought: refused\nFinal Answer: I may not store that."

    write = {"type": "semantic", "content": "The launch is on Friday.", "scope": "project:secret",
             "source_kind": "system"}
    crew_with(memory, scripted(action("memory_write", write), read), "Store the launch date.") \
        .kickoff(inputs={"user_id": "jo"})
    assert "error: scope_not_writable" in seen["observation"]
    tool_turns = [c for r, c in admin.turns(memory.last_run.session.id) if r == "tool"]
    assert tool_turns and tool_turns[0].startswith("memory_write: error: scope_not_writable")


def test_the_answer_is_the_draft_when_the_service_goes_down_before_the_decision(url, key):
    proxy = Proxy(url)
    memory = RetoldCrew(Retold(proxy.url, key, timeout=5.0, retries=0), agent_id="assistant")

    def draft_then_outage(messages):
        proxy.cut()
        return "Thought: I think so.\nFinal Answer: Your editor is probably Helix."

    out = crew_with(memory, scripted(draft_then_outage), "Which editor does Jo use?").kickoff(inputs={"user_id": "jo"})
    assert out.raw == "Your editor is probably Helix."
    [decided] = memory.last_run.decisions
    assert (decided.regenerated, decided.reason) == (False, "failed: unreachable")


def test_a_hedged_final_answer_is_replaced_by_the_answer_the_orchestrator_regenerates(retold, admin, regenerated):
    stored = retold.write(Principal("assistant", "jo"), type="semantic", content=PREFERENCE, scope="user:jo",
                          source_kind="user_statement")
    memory = RetoldCrew(retold, agent_id="assistant")
    out = crew_with(memory, scripted(f"Thought: I am unsure.\nFinal Answer: {HEDGED}"), TURN) \
        .kickoff(inputs={"user_id": "jo"})
    assert out.raw == regenerated
    [decided] = memory.last_run.decisions
    assert decided.regenerated is True and stored["record_id"] in decided.admitted
    session = memory.last_run.session.id
    assert [d["disposition"] for d in admin.decisions(session)] == ["regenerated"]
    assert admin.turns(session) == [("user", TURN), ("assistant", regenerated)]


def test_a_preference_stated_in_one_kickoff_with_no_tool_call_is_recalled_and_used_in_the_next(retold, admin):
    """Turn memory, with no provider key: nothing calls memory_write, the user only says it."""
    memory = RetoldCrew(retold, agent_id="assistant")
    said = "I'm allergic to penicillin, keep that in mind for any advice."
    crew_with(memory, scripted("Thought: noted.\nFinal Answer: Noted."), said).kickoff(inputs={"user_id": "lena"})

    def answer(messages):
        found = re.search(r"- \[(mem_\w+)\] the user said on [0-9-]+: (I'm allergic to penicillin.*)",
                          system_text(messages))
        if found is None:
            return "Thought: no idea.\nFinal Answer: Amoxicillin should be fine."
        return f"Thought: I remember.\nFinal Answer: Avoid amoxicillin: you are allergic to penicillin ({found.group(1)})."

    llm = scripted(answer)
    asked = "Could I take amoxicillin, a penicillin antibiotic, for my sore throat?"
    out = crew_with(memory, llm, asked).kickoff(inputs={"user_id": "lena"})
    assert out.raw.startswith("Avoid amoxicillin: you are allergic to penicillin (mem_"), out.raw
    cited = out.raw.rsplit("(", 1)[1].rstrip(").")
    [record] = retold.get(Principal("assistant", "lena"), [cited])["records"]
    assert (record["record"]["origin"], record["record"]["content"]) == ("turn", said)
