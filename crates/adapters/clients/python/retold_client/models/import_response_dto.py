from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.import_item_dto import ImportItemDto
  from ..models.import_response_dto_counts import ImportResponseDtoCounts





T = TypeVar("T", bound="ImportResponseDto")



@_attrs_define
class ImportResponseDto:
    """ What an import did with each line.

        Attributes:
            counts (ImportResponseDtoCounts): How many lines had each outcome.
            items (list[ImportItemDto]): One per non-blank line, in line order.
     """

    counts: ImportResponseDtoCounts
    items: list[ImportItemDto]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.import_item_dto import ImportItemDto # noqa: PLC0415
        from ..models.import_response_dto_counts import ImportResponseDtoCounts # noqa: PLC0415
        counts = self.counts.to_dict()

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "counts": counts,
            "items": items,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.import_item_dto import ImportItemDto # noqa: PLC0415
        from ..models.import_response_dto_counts import ImportResponseDtoCounts # noqa: PLC0415
        d = dict(src_dict)
        counts = ImportResponseDtoCounts.from_dict(d.pop("counts"))




        items = []
        _items = d.pop("items")
        for items_item_data in (_items):
            items_item = ImportItemDto.from_dict(items_item_data)



            items.append(items_item)


        import_response_dto = cls(
            counts=counts,
            items=items,
        )


        import_response_dto.additional_properties = d
        return import_response_dto

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
