from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.principal_dto import PrincipalDto





T = TypeVar("T", bound="ForgetBody")



@_attrs_define
class ForgetBody:
    """ `memory_forget` request.

        Attributes:
            id (str):
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            reason (str): Why the memory is removed (kept in the audit trail).
     """

    id: str
    principal: PrincipalDto
    reason: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        id = self.id

        principal = self.principal.to_dict()

        reason = self.reason


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "principal": principal,
            "reason": reason,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        id = d.pop("id")

        principal = PrincipalDto.from_dict(d.pop("principal"))




        reason = d.pop("reason")

        forget_body = cls(
            id=id,
            principal=principal,
            reason=reason,
        )

        return forget_body

