from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.record_dto import RecordDto





T = TypeVar("T", bound="RecordPageDto")



@_attrs_define
class RecordPageDto:
    """ A page of records and how many match in all.

        Attributes:
            more (bool): More than `total` match (the count stopped at 10,000).
            records (list[RecordDto]):
            total (int): How many match, counted up to 10,000.
     """

    more: bool
    records: list[RecordDto]
    total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_dto import RecordDto # noqa: PLC0415
        more = self.more

        records = []
        for records_item_data in self.records:
            records_item = records_item_data.to_dict()
            records.append(records_item)



        total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "more": more,
            "records": records,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.record_dto import RecordDto # noqa: PLC0415
        d = dict(src_dict)
        more = d.pop("more")

        records = []
        _records = d.pop("records")
        for records_item_data in (_records):
            records_item = RecordDto.from_dict(records_item_data)



            records.append(records_item)


        total = d.pop("total")

        record_page_dto = cls(
            more=more,
            records=records,
            total=total,
        )


        record_page_dto.additional_properties = d
        return record_page_dto

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
