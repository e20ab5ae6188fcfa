from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="GrantDto")



@_attrs_define
class GrantDto:
    """ A stored grant.

        Attributes:
            agent_id (str):
            can_read (bool):
            can_write (bool):
            id (str):
            scope (str):
     """

    agent_id: str
    can_read: bool
    can_write: bool
    id: str
    scope: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        can_read = self.can_read

        can_write = self.can_write

        id = self.id

        scope = self.scope


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "can_read": can_read,
            "can_write": can_write,
            "id": id,
            "scope": scope,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        can_read = d.pop("can_read")

        can_write = d.pop("can_write")

        id = d.pop("id")

        scope = d.pop("scope")

        grant_dto = cls(
            agent_id=agent_id,
            can_read=can_read,
            can_write=can_write,
            id=id,
            scope=scope,
        )


        grant_dto.additional_properties = d
        return grant_dto

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
