from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.event_dto_details import EventDtoDetails





T = TypeVar("T", bound="EventDto")



@_attrs_define
class EventDto:
    """ One audit event.

        Attributes:
            at (datetime.datetime):
            details (EventDtoDetails):
            id (str):
            kind (str):
            actor (None | str | Unset):
            record_id (None | str | Unset):
     """

    at: datetime.datetime
    details: EventDtoDetails
    id: str
    kind: str
    actor: None | str | Unset = UNSET
    record_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.event_dto_details import EventDtoDetails # noqa: PLC0415
        at = self.at.isoformat()

        details = self.details.to_dict()

        id = self.id

        kind = self.kind

        actor: None | str | Unset
        if isinstance(self.actor, Unset):
            actor = UNSET
        else:
            actor = self.actor

        record_id: None | str | Unset
        if isinstance(self.record_id, Unset):
            record_id = UNSET
        else:
            record_id = self.record_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "details": details,
            "id": id,
            "kind": kind,
        })
        if actor is not UNSET:
            field_dict["actor"] = actor
        if record_id is not UNSET:
            field_dict["record_id"] = record_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_dto_details import EventDtoDetails # noqa: PLC0415
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))




        details = EventDtoDetails.from_dict(d.pop("details"))




        id = d.pop("id")

        kind = d.pop("kind")

        def _parse_actor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        actor = _parse_actor(d.pop("actor", UNSET))


        def _parse_record_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        record_id = _parse_record_id(d.pop("record_id", UNSET))


        event_dto = cls(
            at=at,
            details=details,
            id=id,
            kind=kind,
            actor=actor,
            record_id=record_id,
        )


        event_dto.additional_properties = d
        return event_dto

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
