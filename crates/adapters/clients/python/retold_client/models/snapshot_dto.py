from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.store_check_dto import StoreCheckDto





T = TypeVar("T", bound="SnapshotDto")



@_attrs_define
class SnapshotDto:
    """ A snapshot taken.

        Attributes:
            bytes_ (int):
            check (StoreCheckDto): A store's consistency check.
            path (str): The snapshot file, in the data directory's `snapshots/`.
     """

    bytes_: int
    check: StoreCheckDto
    path: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.store_check_dto import StoreCheckDto # noqa: PLC0415
        bytes_ = self.bytes_

        check = self.check.to_dict()

        path = self.path


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bytes": bytes_,
            "check": check,
            "path": path,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.store_check_dto import StoreCheckDto # noqa: PLC0415
        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        check = StoreCheckDto.from_dict(d.pop("check"))




        path = d.pop("path")

        snapshot_dto = cls(
            bytes_=bytes_,
            check=check,
            path=path,
        )


        snapshot_dto.additional_properties = d
        return snapshot_dto

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
