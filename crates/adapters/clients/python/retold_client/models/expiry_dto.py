from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="ExpiryDto")



@_attrs_define
class ExpiryDto:
    """ The outcome of an expiry run.

        Attributes:
            dry_run (bool):
            expired (int): Records moved to `expired` (on a dry run: due to be).
            ids (list[str]): The first 100 of them, oldest expiry first.
     """

    dry_run: bool
    expired: int
    ids: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        dry_run = self.dry_run

        expired = self.expired

        ids = self.ids




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "dry_run": dry_run,
            "expired": expired,
            "ids": ids,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dry_run = d.pop("dry_run")

        expired = d.pop("expired")

        ids = cast(list[str], d.pop("ids"))


        expiry_dto = cls(
            dry_run=dry_run,
            expired=expired,
            ids=ids,
        )


        expiry_dto.additional_properties = d
        return expiry_dto

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
