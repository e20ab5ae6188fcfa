"""What every adapter shares: the principal rules, error codes, retries under one idempotency
key, sessions and the fail-closed decision, against the real server."""

import json

import pydantic
import pytest
from proxy import Proxy

from retold.adapters.base import (
    TOOLS,
    MemorySession,
    Principal,
    PrincipalError,
    Retold,
    ScopeNotWritable,
    Unreachable,
    ValidationFailed,
    derive_principal,
    recall_text,
)

JO = Principal("assistant", "jo")


def test_the_principal_comes_from_the_run_and_a_missing_user_is_refused():
    assert derive_principal({"user_id": "jo", "project_id": "apollo"}, agent_id="assistant") == \
        Principal("assistant", "jo", "apollo")
    # A `retold` mapping wins over flat keys; the run's agent wins over the adapter's.
    assert derive_principal({"user_id": "sam", "retold": {"user_id": "jo", "agent_id": "planner"}},
                            agent_id="assistant") == Principal("planner", "jo")
    with pytest.raises(PrincipalError) as missing:
        derive_principal({"thread_id": "t1"}, agent_id="assistant")
    assert missing.value.code == "principal_invalid" and missing.value.field == "user_id"
    with pytest.raises(PrincipalError) as slash:
        derive_principal({"user_id": "jo/evil"}, agent_id="assistant")
    assert slash.value.field == "user_id"


def test_the_tools_take_the_generated_arguments_without_the_principal():
    names = [tool.name for tool in TOOLS]
    assert names == ["memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget"]
    for tool in TOOLS:
        assert "principal" not in tool.arguments.model_fields
        assert tool.description
    write = next(t for t in TOOLS if t.name == "memory_write").arguments
    schema = write.model_json_schema()
    # The constraints come from the OpenAPI document, not a hand-written copy.
    assert schema["properties"]["content"]["maxLength"] == 8000
    assert set(schema["required"]) == {"content", "scope", "source_kind", "type"}
    with pytest.raises(pydantic.ValidationError, match="scope"):
        write(content="x", scope="nowhere", source_kind="system", type="semantic")


def test_refusals_become_exceptions_with_the_stable_code(retold):
    with pytest.raises(ScopeNotWritable) as refused:
        retold.write(JO, type="semantic", content="Not here.", scope="project:secret", source_kind="system")
    assert refused.value.code == "scope_not_writable" and refused.value.status == 403
    with pytest.raises(ValidationFailed) as invalid:
        retold.search(JO, "x", limit=0)
    assert invalid.value.field is not None


def test_a_write_whose_answer_was_lost_is_retried_under_the_same_key_and_written_once(url, key, retold):
    proxy = Proxy(url)
    try:
        flaky = Retold(proxy.url, key, timeout=30.0, retries=2, backoff=0.05)
        proxy.drop_answer("/v1/memory/write")
        written = flaky.write(JO, type="semantic", content="Jo's build cache lives on /mnt/cache-7.",
                              scope="user:jo", source_kind="user_statement")
        writes = [h for m, p, h in proxy.forwarded if p == "/v1/memory/write"]
        assert len(writes) == 2, "the lost answer was retried"
        assert writes[0]["idempotency-key"] == writes[1]["idempotency-key"]
        # The retry got the first answer (a second run would have reinforced the record).
        assert written["outcome"] == "created"
        found = retold.search(JO, "Where does Jo's build cache live?")["results"]
        same = [r for r in found if r["record"]["content"] == "Jo's build cache lives on /mnt/cache-7."]
        assert len(same) == 1 and same[0]["record"]["reinforcements"] == 0
        flaky.close()
    finally:
        proxy.cut()


def test_a_session_keeps_turns_in_order_and_searches_carry_them(retold, admin):
    session = MemorySession(retold, JO)
    assert session.id.startswith("sess_") and session.profile["session_id"] == session.id
    numbers = [session.record("user", "My laptop is a ThinkPad X1."), session.record("assistant", "Noted."),
               session.record("tool", "calendar: nothing today"), session.record("user", "What laptop do I use?")]
    assert numbers == [1, 2, 3, 4]
    assert admin.turns(session.id) == [("user", "My laptop is a ThinkPad X1."), ("assistant", "Noted."),
                                      ("tool", "calendar: nothing today"), ("user", "What laptop do I use?")]
    # The latest user and assistant turns (not tool results) go with each search.
    assert session.context() == ["My laptop is a ThinkPad X1.", "Noted.", "What laptop do I use?"]
    answer = session.search("laptop")
    trace = admin.get(f"/v1/admin/search-log/{answer['search_id']}")
    attached = {int(k.split(".")[1]): v for k, v in trace["request"].items() if k.startswith("context.")}
    assert [attached[n] for n in sorted(attached)] == session.context()
    session.end()


def test_the_decision_keeps_the_draft_when_the_service_is_down(url, key, admin):
    proxy = Proxy(url)
    retold = Retold(proxy.url, key, timeout=5.0, retries=0)
    session = MemorySession(retold, JO)
    kept = session.decide("What laptop do I use?", "I am not sure which laptop you use.")
    assert kept.regenerated is False and kept.decision_id is not None
    assert admin.decisions(session.id)[0]["id"] == kept.decision_id
    proxy.cut()
    down = session.decide("What laptop do I use?", "I am not sure which laptop you use.")
    assert (down.text, down.regenerated, down.reason) == ("I am not sure which laptop you use.", False,
                                                          "failed: unreachable")
    with pytest.raises(Unreachable):
        session.recall("laptop")
    retold.close()


def test_recall_shows_a_long_records_passage_and_a_short_records_content():
    long = {"record": {"id": "mem_long", "content": "word " * 400 + "the key rotates on Tuesdays"},
            "passage": {"text": "…the key rotates on Tuesdays", "start": 2000, "end": 2027}}
    short = {"record": {"id": "mem_short", "content": "Jo likes tea."}, "passage": None}
    text = recall_text([long, short])
    assert "- [mem_long] …the key rotates on Tuesdays" in text
    assert "word word" not in text
    assert "- [mem_short] Jo likes tea." in text
