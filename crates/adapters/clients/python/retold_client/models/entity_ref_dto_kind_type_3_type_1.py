from enum import StrEnum

class EntityRefDtoKindType3Type1(StrEnum):
    ORGANIZATION = "organization"
    OTHER = "other"
    PERSON = "person"
    PRODUCT = "product"
    PROJECT = "project"
    REPOSITORY = "repository"

    def __str__(self) -> str:
        return str(self.value)
