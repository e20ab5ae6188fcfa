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





T = TypeVar("T", bound="EndSessionBody")



@_attrs_define
class EndSessionBody:
    """ A session to end.

        Attributes:
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            wait_for_extraction (bool | Unset): Run the session's extraction before answering and return its report (200)
                instead of
                starting it in the background (204).
     """

    principal: PrincipalDto
    wait_for_extraction: bool | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        principal = self.principal.to_dict()

        wait_for_extraction = self.wait_for_extraction


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "principal": principal,
        })
        if wait_for_extraction is not UNSET:
            field_dict["wait_for_extraction"] = wait_for_extraction

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        principal = PrincipalDto.from_dict(d.pop("principal"))




        wait_for_extraction = d.pop("wait_for_extraction", UNSET)

        end_session_body = cls(
            principal=principal,
            wait_for_extraction=wait_for_extraction,
        )

        return end_session_body

