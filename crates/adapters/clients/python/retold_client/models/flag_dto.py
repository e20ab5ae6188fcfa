from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="FlagDto")



@_attrs_define
class FlagDto:
    """ New review-queue items, per reason.

        Attributes:
            expiring_provisional (int):
            stale_low_confidence (int):
            total (int):
            unresolved_conflict (int):
     """

    expiring_provisional: int
    stale_low_confidence: int
    total: int
    unresolved_conflict: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        expiring_provisional = self.expiring_provisional

        stale_low_confidence = self.stale_low_confidence

        total = self.total

        unresolved_conflict = self.unresolved_conflict


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "expiring_provisional": expiring_provisional,
            "stale_low_confidence": stale_low_confidence,
            "total": total,
            "unresolved_conflict": unresolved_conflict,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        expiring_provisional = d.pop("expiring_provisional")

        stale_low_confidence = d.pop("stale_low_confidence")

        total = d.pop("total")

        unresolved_conflict = d.pop("unresolved_conflict")

        flag_dto = cls(
            expiring_provisional=expiring_provisional,
            stale_low_confidence=stale_low_confidence,
            total=total,
            unresolved_conflict=unresolved_conflict,
        )


        flag_dto.additional_properties = d
        return flag_dto

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
