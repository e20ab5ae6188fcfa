from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="RestoredDto")



@_attrs_define
class RestoredDto:
    """ What a restore did.

        Attributes:
            already_present (int): Records and entities the store held already (by id), left as they were.
            conflicts (int):
            entities (int):
            records (int):
     """

    already_present: int
    conflicts: int
    entities: int
    records: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        already_present = self.already_present

        conflicts = self.conflicts

        entities = self.entities

        records = self.records


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "already_present": already_present,
            "conflicts": conflicts,
            "entities": entities,
            "records": records,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        already_present = d.pop("already_present")

        conflicts = d.pop("conflicts")

        entities = d.pop("entities")

        records = d.pop("records")

        restored_dto = cls(
            already_present=already_present,
            conflicts=conflicts,
            entities=entities,
            records=records,
        )


        restored_dto.additional_properties = d
        return restored_dto

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
