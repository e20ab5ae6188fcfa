from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="MergeBody")



@_attrs_define
class MergeBody:
    """ Entities to merge.

        Attributes:
            from_ (str):
            into (str):
     """

    from_: str
    into: str





    def to_dict(self) -> dict[str, Any]:
        from_ = self.from_

        into = self.into


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "from": from_,
            "into": into,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        from_ = d.pop("from")

        into = d.pop("into")

        merge_body = cls(
            from_=from_,
            into=into,
        )

        return merge_body

