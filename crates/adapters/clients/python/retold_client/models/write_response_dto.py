from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="WriteResponseDto")



@_attrs_define
class WriteResponseDto:
    """ The outcome of a write.

        Attributes:
            outcome (str): created, reinforced, superseding, conflicting (rejections are errors).
            reason (str):
            record_id (str):
            conflicts_with (None | str | Unset): The record this one conflicts with.
            superseded (list[str] | Unset): Records this one superseded.
     """

    outcome: str
    reason: str
    record_id: str
    conflicts_with: None | str | Unset = UNSET
    superseded: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        outcome = self.outcome

        reason = self.reason

        record_id = self.record_id

        conflicts_with: None | str | Unset
        if isinstance(self.conflicts_with, Unset):
            conflicts_with = UNSET
        else:
            conflicts_with = self.conflicts_with

        superseded: list[str] | Unset = UNSET
        if not isinstance(self.superseded, Unset):
            superseded = self.superseded




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "outcome": outcome,
            "reason": reason,
            "record_id": record_id,
        })
        if conflicts_with is not UNSET:
            field_dict["conflicts_with"] = conflicts_with
        if superseded is not UNSET:
            field_dict["superseded"] = superseded

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        outcome = d.pop("outcome")

        reason = d.pop("reason")

        record_id = d.pop("record_id")

        def _parse_conflicts_with(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        conflicts_with = _parse_conflicts_with(d.pop("conflicts_with", UNSET))


        superseded = cast(list[str], d.pop("superseded", UNSET))


        write_response_dto = cls(
            outcome=outcome,
            reason=reason,
            record_id=record_id,
            conflicts_with=conflicts_with,
            superseded=superseded,
        )


        write_response_dto.additional_properties = d
        return write_response_dto

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
