from enum import StrEnum

class ResolveBodyAction(StrEnum):
    APPROVE = "approve"
    CONFIRM = "confirm"
    EXPIRE = "expire"
    FORGET = "forget"
    REJECT = "reject"

    def __str__(self) -> str:
        return str(self.value)
