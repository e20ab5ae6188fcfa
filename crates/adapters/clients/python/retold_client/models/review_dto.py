from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="ReviewDto")



@_attrs_define
class ReviewDto:
    """ An item of the review queue.

        Attributes:
            flagged_at (datetime.datetime):
            id (str):
            reason (str): expiring_provisional, unresolved_conflict, stale_low_confidence or activation.
            record_id (str):
            resolution (None | str | Unset): confirm, expire or forget; approve or reject (activation reviews).
            resolved_at (datetime.datetime | None | Unset):
     """

    flagged_at: datetime.datetime
    id: str
    reason: str
    record_id: str
    resolution: None | str | Unset = UNSET
    resolved_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        flagged_at = self.flagged_at.isoformat()

        id = self.id

        reason = self.reason

        record_id = self.record_id

        resolution: None | str | Unset
        if isinstance(self.resolution, Unset):
            resolution = UNSET
        else:
            resolution = self.resolution

        resolved_at: None | str | Unset
        if isinstance(self.resolved_at, Unset):
            resolved_at = UNSET
        elif isinstance(self.resolved_at, datetime.datetime):
            resolved_at = self.resolved_at.isoformat()
        else:
            resolved_at = self.resolved_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "flagged_at": flagged_at,
            "id": id,
            "reason": reason,
            "record_id": record_id,
        })
        if resolution is not UNSET:
            field_dict["resolution"] = resolution
        if resolved_at is not UNSET:
            field_dict["resolved_at"] = resolved_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        flagged_at = datetime.datetime.fromisoformat(d.pop("flagged_at"))




        id = d.pop("id")

        reason = d.pop("reason")

        record_id = d.pop("record_id")

        def _parse_resolution(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resolution = _parse_resolution(d.pop("resolution", UNSET))


        def _parse_resolved_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                resolved_at_type_0 = datetime.datetime.fromisoformat(data)



                return resolved_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        resolved_at = _parse_resolved_at(d.pop("resolved_at", UNSET))


        review_dto = cls(
            flagged_at=flagged_at,
            id=id,
            reason=reason,
            record_id=record_id,
            resolution=resolution,
            resolved_at=resolved_at,
        )


        review_dto.additional_properties = d
        return review_dto

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
