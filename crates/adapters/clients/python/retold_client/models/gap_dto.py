from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="GapDto")



@_attrs_define
class GapDto:
    """ A gap the draft has.

        Attributes:
            evidence (str): What showed the gap.
            kind (str): hedge, placeholder, inventory or planned.
            query (str): The search query for the gap.
     """

    evidence: str
    kind: str
    query: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        evidence = self.evidence

        kind = self.kind

        query = self.query


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "evidence": evidence,
            "kind": kind,
            "query": query,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        evidence = d.pop("evidence")

        kind = d.pop("kind")

        query = d.pop("query")

        gap_dto = cls(
            evidence=evidence,
            kind=kind,
            query=query,
        )


        gap_dto.additional_properties = d
        return gap_dto

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
