from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="SnapshotHoldingDto")



@_attrs_define
class SnapshotHoldingDto:
    """ A snapshot that still holds erased content.

        Attributes:
            path (str):
            records (int): Erased records whose content it held.
            rewritten (bool): Whether it was rewritten (then it holds none of them any more).
     """

    path: str
    records: int
    rewritten: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        path = self.path

        records = self.records

        rewritten = self.rewritten


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "path": path,
            "records": records,
            "rewritten": rewritten,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        path = d.pop("path")

        records = d.pop("records")

        rewritten = d.pop("rewritten")

        snapshot_holding_dto = cls(
            path=path,
            records=records,
            rewritten=rewritten,
        )


        snapshot_holding_dto.additional_properties = d
        return snapshot_holding_dto

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
