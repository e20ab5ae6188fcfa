from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="EntityDto")



@_attrs_define
class EntityDto:
    """ A stored entity.

        Attributes:
            aliases (list[str]):
            canonical_name (str):
            id (str):
            kind (str):
            scope (str):
            status (str):
     """

    aliases: list[str]
    canonical_name: str
    id: str
    kind: str
    scope: str
    status: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        aliases = self.aliases



        canonical_name = self.canonical_name

        id = self.id

        kind = self.kind

        scope = self.scope

        status = self.status


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "aliases": aliases,
            "canonical_name": canonical_name,
            "id": id,
            "kind": kind,
            "scope": scope,
            "status": status,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        aliases = cast(list[str], d.pop("aliases"))


        canonical_name = d.pop("canonical_name")

        id = d.pop("id")

        kind = d.pop("kind")

        scope = d.pop("scope")

        status = d.pop("status")

        entity_dto = cls(
            aliases=aliases,
            canonical_name=canonical_name,
            id=id,
            kind=kind,
            scope=scope,
            status=status,
        )


        entity_dto.additional_properties = d
        return entity_dto

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
