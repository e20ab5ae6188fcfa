from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.principal_dto import PrincipalDto





T = TypeVar("T", bound="SessionBody")



@_attrs_define
class SessionBody:
    """ A session to start.

        Attributes:
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            tags (list[str] | Unset): Tags that hold for this session: a conditional record tagged with one of them is in
                its profile (as are records tagged `project:<the principal's project>` or
                `agent:<its agent>`).
     """

    principal: PrincipalDto
    tags: list[str] | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        principal = self.principal.to_dict()

        tags: list[str] | Unset = UNSET
        if not isinstance(self.tags, Unset):
            tags = self.tags




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "principal": principal,
        })
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        principal = PrincipalDto.from_dict(d.pop("principal"))




        tags = cast(list[str], d.pop("tags", UNSET))


        session_body = cls(
            principal=principal,
            tags=tags,
        )

        return session_body

