from enum import StrEnum

class WriteBodySourceKind(StrEnum):
    AGENT_INFERENCE = "agent_inference"
    SESSION_SUMMARY = "session_summary"
    SYSTEM = "system"
    TOOL_RESULT = "tool_result"
    USER_STATEMENT = "user_statement"

    def __str__(self) -> str:
        return str(self.value)
