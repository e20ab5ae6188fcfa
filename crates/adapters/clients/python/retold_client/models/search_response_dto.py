from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.search_result_dto import SearchResultDto





T = TypeVar("T", bound="SearchResponseDto")



@_attrs_define
class SearchResponseDto:
    """ `memory_search` response.

        Attributes:
            eligible_count (int): Records the principal could see before ranking.
            results (list[SearchResultDto]):
            rewrite_status (str): off, unchanged, rewritten, failed: …, refused: ….
            search_id (str): Id of the search_log trace (GET /v1/admin/search-log/{id}).
     """

    eligible_count: int
    results: list[SearchResultDto]
    rewrite_status: str
    search_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.search_result_dto import SearchResultDto # noqa: PLC0415
        eligible_count = self.eligible_count

        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)



        rewrite_status = self.rewrite_status

        search_id = self.search_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "eligible_count": eligible_count,
            "results": results,
            "rewrite_status": rewrite_status,
            "search_id": search_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.search_result_dto import SearchResultDto # noqa: PLC0415
        d = dict(src_dict)
        eligible_count = d.pop("eligible_count")

        results = []
        _results = d.pop("results")
        for results_item_data in (_results):
            results_item = SearchResultDto.from_dict(results_item_data)



            results.append(results_item)


        rewrite_status = d.pop("rewrite_status")

        search_id = d.pop("search_id")

        search_response_dto = cls(
            eligible_count=eligible_count,
            results=results,
            rewrite_status=rewrite_status,
            search_id=search_id,
        )


        search_response_dto.additional_properties = d
        return search_response_dto

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
