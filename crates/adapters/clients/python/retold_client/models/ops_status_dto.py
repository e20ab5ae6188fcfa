from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.event_dto import EventDto
  from ..models.snapshot_file_dto import SnapshotFileDto





T = TypeVar("T", bound="OpsStatusDto")



@_attrs_define
class OpsStatusDto:
    """ Snapshots on disk and the latest operations.

        Attributes:
            events (list[EventDto]): The latest operation events, up to five of each kind (expiry runs, snapshots,
                erasures, retention, re-embedding, model switches), newest first.
            snapshots (list[SnapshotFileDto]): Newest first.
     """

    events: list[EventDto]
    snapshots: list[SnapshotFileDto]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.event_dto import EventDto # noqa: PLC0415
        from ..models.snapshot_file_dto import SnapshotFileDto # noqa: PLC0415
        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)



        snapshots = []
        for snapshots_item_data in self.snapshots:
            snapshots_item = snapshots_item_data.to_dict()
            snapshots.append(snapshots_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "events": events,
            "snapshots": snapshots,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_dto import EventDto # noqa: PLC0415
        from ..models.snapshot_file_dto import SnapshotFileDto # noqa: PLC0415
        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in (_events):
            events_item = EventDto.from_dict(events_item_data)



            events.append(events_item)


        snapshots = []
        _snapshots = d.pop("snapshots")
        for snapshots_item_data in (_snapshots):
            snapshots_item = SnapshotFileDto.from_dict(snapshots_item_data)



            snapshots.append(snapshots_item)


        ops_status_dto = cls(
            events=events,
            snapshots=snapshots,
        )


        ops_status_dto.additional_properties = d
        return ops_status_dto

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
