from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ProfileEntryDto")



@_attrs_define
class ProfileEntryDto:
    """ One record in a profile and why it is there.

        Attributes:
            category (str):
            record_id (str):
            why (str): The policy that made it ambient and the rule that put it in its category.
     """

    category: str
    record_id: str
    why: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        category = self.category

        record_id = self.record_id

        why = self.why


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "category": category,
            "record_id": record_id,
            "why": why,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        category = d.pop("category")

        record_id = d.pop("record_id")

        why = d.pop("why")

        profile_entry_dto = cls(
            category=category,
            record_id=record_id,
            why=why,
        )


        profile_entry_dto.additional_properties = d
        return profile_entry_dto

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
