from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="SearchSummaryDto")



@_attrs_define
class SearchSummaryDto:
    """ One search of the search log.

        Attributes:
            agent_id (str):
            at (datetime.datetime):
            eligible_count (int):
            id (str):
            query (str):
            results (int): Results returned.
            total_us (int): The search's duration in microseconds.
            user_id (str):
     """

    agent_id: str
    at: datetime.datetime
    eligible_count: int
    id: str
    query: str
    results: int
    total_us: int
    user_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        at = self.at.isoformat()

        eligible_count = self.eligible_count

        id = self.id

        query = self.query

        results = self.results

        total_us = self.total_us

        user_id = self.user_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "at": at,
            "eligible_count": eligible_count,
            "id": id,
            "query": query,
            "results": results,
            "total_us": total_us,
            "user_id": user_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        at = datetime.datetime.fromisoformat(d.pop("at"))




        eligible_count = d.pop("eligible_count")

        id = d.pop("id")

        query = d.pop("query")

        results = d.pop("results")

        total_us = d.pop("total_us")

        user_id = d.pop("user_id")

        search_summary_dto = cls(
            agent_id=agent_id,
            at=at,
            eligible_count=eligible_count,
            id=id,
            query=query,
            results=results,
            total_us=total_us,
            user_id=user_id,
        )


        search_summary_dto.additional_properties = d
        return search_summary_dto

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
