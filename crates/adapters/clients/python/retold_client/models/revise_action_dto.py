from enum import StrEnum

class ReviseActionDto(StrEnum):
    CONFIRM = "confirm"
    EXPIRE = "expire"
    MERGE_ENTITIES = "merge_entities"
    SUPERSEDE = "supersede"

    def __str__(self) -> str:
        return str(self.value)
