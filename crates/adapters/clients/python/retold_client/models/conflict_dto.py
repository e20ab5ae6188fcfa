from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ConflictDto")



@_attrs_define
class ConflictDto:
    """ A conflict between two records of one current fact.

        Attributes:
            conflicting_id (str): The lower-trust record that contradicts it.
            record_id (str): The record that stays the normal result.
     """

    conflicting_id: str
    record_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        conflicting_id = self.conflicting_id

        record_id = self.record_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "conflicting_id": conflicting_id,
            "record_id": record_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        conflicting_id = d.pop("conflicting_id")

        record_id = d.pop("record_id")

        conflict_dto = cls(
            conflicting_id=conflicting_id,
            record_id=record_id,
        )


        conflict_dto.additional_properties = d
        return conflict_dto

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
