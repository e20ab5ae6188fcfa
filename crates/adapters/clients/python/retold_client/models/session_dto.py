from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.profile_dto import ProfileDto





T = TypeVar("T", bound="SessionDto")



@_attrs_define
class SessionDto:
    """ A started session and the profile it starts with.

        Attributes:
            id (str): The session id to cite in `session:<id><turn:N>`.
            profile (ProfileDto): The immutable profile a session starts with: text for the system prompt, the records it
                holds, and a hash of the text.
     """

    id: str
    profile: ProfileDto
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.profile_dto import ProfileDto # noqa: PLC0415
        id = self.id

        profile = self.profile.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "id": id,
            "profile": profile,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.profile_dto import ProfileDto # noqa: PLC0415
        d = dict(src_dict)
        id = d.pop("id")

        profile = ProfileDto.from_dict(d.pop("profile"))




        session_dto = cls(
            id=id,
            profile=profile,
        )


        session_dto.additional_properties = d
        return session_dto

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
