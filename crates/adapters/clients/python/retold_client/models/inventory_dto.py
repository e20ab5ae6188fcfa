from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.count_dto import CountDto





T = TypeVar("T", bound="InventoryDto")



@_attrs_define
class InventoryDto:
    """ What the principal could search, without content, subjects or ids.

        Attributes:
            categories (list[CountDto]): Semantic records per activation category.
            total (int):
            types (list[CountDto]): Records per memory type.
     """

    categories: list[CountDto]
    total: int
    types: list[CountDto]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.count_dto import CountDto # noqa: PLC0415
        categories = []
        for categories_item_data in self.categories:
            categories_item = categories_item_data.to_dict()
            categories.append(categories_item)



        total = self.total

        types = []
        for types_item_data in self.types:
            types_item = types_item_data.to_dict()
            types.append(types_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "categories": categories,
            "total": total,
            "types": types,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.count_dto import CountDto # noqa: PLC0415
        d = dict(src_dict)
        categories = []
        _categories = d.pop("categories")
        for categories_item_data in (_categories):
            categories_item = CountDto.from_dict(categories_item_data)



            categories.append(categories_item)


        total = d.pop("total")

        types = []
        _types = d.pop("types")
        for types_item_data in (_types):
            types_item = CountDto.from_dict(types_item_data)



            types.append(types_item)


        inventory_dto = cls(
            categories=categories,
            total=total,
            types=types,
        )


        inventory_dto.additional_properties = d
        return inventory_dto

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
