from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.principal_dto import PrincipalDto





T = TypeVar("T", bound="GetBody")



@_attrs_define
class GetBody:
    """ `memory_get` request.

        Attributes:
            ids (list[str]): Record ids (`mem_…`).
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
     """

    ids: list[str]
    principal: PrincipalDto





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        ids = self.ids



        principal = self.principal.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "ids": ids,
            "principal": principal,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        ids = cast(list[str], d.pop("ids"))


        principal = PrincipalDto.from_dict(d.pop("principal"))




        get_body = cls(
            ids=ids,
            principal=principal,
        )

        return get_body

