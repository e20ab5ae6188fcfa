from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.search_summary_dto import SearchSummaryDto





T = TypeVar("T", bound="SearchListDto")



@_attrs_define
class SearchListDto:
    """ Searches, newest first.

        Attributes:
            searches (list[SearchSummaryDto]):
     """

    searches: list[SearchSummaryDto]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.search_summary_dto import SearchSummaryDto # noqa: PLC0415
        searches = []
        for searches_item_data in self.searches:
            searches_item = searches_item_data.to_dict()
            searches.append(searches_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "searches": searches,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.search_summary_dto import SearchSummaryDto # noqa: PLC0415
        d = dict(src_dict)
        searches = []
        _searches = d.pop("searches")
        for searches_item_data in (_searches):
            searches_item = SearchSummaryDto.from_dict(searches_item_data)



            searches.append(searches_item)


        search_list_dto = cls(
            searches=searches,
        )


        search_list_dto.additional_properties = d
        return search_list_dto

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
