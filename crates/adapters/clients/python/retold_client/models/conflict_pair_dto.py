from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.record_dto import RecordDto





T = TypeVar("T", bound="ConflictPairDto")



@_attrs_define
class ConflictPairDto:
    """ A conflict with both records.

        Attributes:
            conflicting (RecordDto): One memory record.
            record (RecordDto): One memory record.
     """

    conflicting: RecordDto
    record: RecordDto
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_dto import RecordDto # noqa: PLC0415
        conflicting = self.conflicting.to_dict()

        record = self.record.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "conflicting": conflicting,
            "record": record,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.record_dto import RecordDto # noqa: PLC0415
        d = dict(src_dict)
        conflicting = RecordDto.from_dict(d.pop("conflicting"))




        record = RecordDto.from_dict(d.pop("record"))




        conflict_pair_dto = cls(
            conflicting=conflicting,
            record=record,
        )


        conflict_pair_dto.additional_properties = d
        return conflict_pair_dto

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
