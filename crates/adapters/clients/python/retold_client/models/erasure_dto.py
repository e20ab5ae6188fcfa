from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.erased_dto import ErasedDto
  from ..models.snapshot_holding_dto import SnapshotHoldingDto





T = TypeVar("T", bound="ErasureDto")



@_attrs_define
class ErasureDto:
    """ The outcome of an erasure.

        Attributes:
            bytes_after (int):
            bytes_before (int): The store's size on disk (file, WAL, shared memory) before and after compaction.
            dry_run (bool):
            erased (int): Records erased now (0 when everything was erased before, or on a dry run).
            matched (int): Records the target covers.
            removed (ErasedDto): What was removed besides the records' own content.
            snapshots_holding (list[SnapshotHoldingDto]): Earlier snapshots that held content of the erased records.
            target (str): `record <id>`, `user <id>` or `scope <scope>`.
     """

    bytes_after: int
    bytes_before: int
    dry_run: bool
    erased: int
    matched: int
    removed: ErasedDto
    snapshots_holding: list[SnapshotHoldingDto]
    target: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.erased_dto import ErasedDto # noqa: PLC0415
        from ..models.snapshot_holding_dto import SnapshotHoldingDto # noqa: PLC0415
        bytes_after = self.bytes_after

        bytes_before = self.bytes_before

        dry_run = self.dry_run

        erased = self.erased

        matched = self.matched

        removed = self.removed.to_dict()

        snapshots_holding = []
        for snapshots_holding_item_data in self.snapshots_holding:
            snapshots_holding_item = snapshots_holding_item_data.to_dict()
            snapshots_holding.append(snapshots_holding_item)



        target = self.target


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bytes_after": bytes_after,
            "bytes_before": bytes_before,
            "dry_run": dry_run,
            "erased": erased,
            "matched": matched,
            "removed": removed,
            "snapshots_holding": snapshots_holding,
            "target": target,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.erased_dto import ErasedDto # noqa: PLC0415
        from ..models.snapshot_holding_dto import SnapshotHoldingDto # noqa: PLC0415
        d = dict(src_dict)
        bytes_after = d.pop("bytes_after")

        bytes_before = d.pop("bytes_before")

        dry_run = d.pop("dry_run")

        erased = d.pop("erased")

        matched = d.pop("matched")

        removed = ErasedDto.from_dict(d.pop("removed"))




        snapshots_holding = []
        _snapshots_holding = d.pop("snapshots_holding")
        for snapshots_holding_item_data in (_snapshots_holding):
            snapshots_holding_item = SnapshotHoldingDto.from_dict(snapshots_holding_item_data)



            snapshots_holding.append(snapshots_holding_item)


        target = d.pop("target")

        erasure_dto = cls(
            bytes_after=bytes_after,
            bytes_before=bytes_before,
            dry_run=dry_run,
            erased=erased,
            matched=matched,
            removed=removed,
            snapshots_holding=snapshots_holding,
            target=target,
        )


        erasure_dto.additional_properties = d
        return erasure_dto

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
