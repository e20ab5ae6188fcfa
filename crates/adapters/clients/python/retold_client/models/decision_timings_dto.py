from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DecisionTimingsDto")



@_attrs_define
class DecisionTimingsDto:
    """ Milliseconds per stage.

        Attributes:
            admit_ms (float):
            plan_ms (float):
            regenerate_ms (float):
            retrieve_ms (float):
            total_ms (float):
     """

    admit_ms: float
    plan_ms: float
    regenerate_ms: float
    retrieve_ms: float
    total_ms: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        admit_ms = self.admit_ms

        plan_ms = self.plan_ms

        regenerate_ms = self.regenerate_ms

        retrieve_ms = self.retrieve_ms

        total_ms = self.total_ms


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "admit_ms": admit_ms,
            "plan_ms": plan_ms,
            "regenerate_ms": regenerate_ms,
            "retrieve_ms": retrieve_ms,
            "total_ms": total_ms,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        admit_ms = d.pop("admit_ms")

        plan_ms = d.pop("plan_ms")

        regenerate_ms = d.pop("regenerate_ms")

        retrieve_ms = d.pop("retrieve_ms")

        total_ms = d.pop("total_ms")

        decision_timings_dto = cls(
            admit_ms=admit_ms,
            plan_ms=plan_ms,
            regenerate_ms=regenerate_ms,
            retrieve_ms=retrieve_ms,
            total_ms=total_ms,
        )


        decision_timings_dto.additional_properties = d
        return decision_timings_dto

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
