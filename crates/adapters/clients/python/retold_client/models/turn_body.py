from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.turn_body_role import TurnBodyRole
from typing import cast

if TYPE_CHECKING:
  from ..models.principal_dto import PrincipalDto





T = TypeVar("T", bound="TurnBody")



@_attrs_define
class TurnBody:
    """ A turn to append.

        Attributes:
            content (str):
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            role (TurnBodyRole): user, assistant or tool.
     """

    content: str
    principal: PrincipalDto
    role: TurnBodyRole





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        content = self.content

        principal = self.principal.to_dict()

        role = self.role.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "content": content,
            "principal": principal,
            "role": role,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        content = d.pop("content")

        principal = PrincipalDto.from_dict(d.pop("principal"))




        role = TurnBodyRole(d.pop("role"))




        turn_body = cls(
            content=content,
            principal=principal,
            role=role,
        )

        return turn_body

