from enum import StrEnum

class SearchBodyOriginsType0Item(StrEnum):
    MEMORY = "memory"
    TURN = "turn"

    def __str__(self) -> str:
        return str(self.value)
