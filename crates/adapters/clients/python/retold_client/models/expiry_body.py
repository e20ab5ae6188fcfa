from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="ExpiryBody")



@_attrs_define
class ExpiryBody:
    """ An expiry run.

        Attributes:
            dry_run (bool | Unset): Only list what is due.
     """

    dry_run: bool | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        dry_run = self.dry_run


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dry_run = d.pop("dry_run", UNSET)

        expiry_body = cls(
            dry_run=dry_run,
        )

        return expiry_body

