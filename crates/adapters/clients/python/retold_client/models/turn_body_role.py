from enum import StrEnum

class TurnBodyRole(StrEnum):
    ASSISTANT = "assistant"
    TOOL = "tool"
    USER = "user"

    def __str__(self) -> str:
        return str(self.value)
