from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="AliasBody")



@_attrs_define
class AliasBody:
    """ An alias to add.

        Attributes:
            alias (str):
     """

    alias: str





    def to_dict(self) -> dict[str, Any]:
        alias = self.alias


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "alias": alias,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        alias = d.pop("alias")

        alias_body = cls(
            alias=alias,
        )

        return alias_body

