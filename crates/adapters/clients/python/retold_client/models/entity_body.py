from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.entity_body_kind import EntityBodyKind
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="EntityBody")



@_attrs_define
class EntityBody:
    """ A new entity.

        Attributes:
            canonical_name (str):
            kind (EntityBodyKind): person, project, repository, product, organization or other.
            scope (str): The scope the entity lives in.
            aliases (list[str] | Unset):
     """

    canonical_name: str
    kind: EntityBodyKind
    scope: str
    aliases: list[str] | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        canonical_name = self.canonical_name

        kind = self.kind.value

        scope = self.scope

        aliases: list[str] | Unset = UNSET
        if not isinstance(self.aliases, Unset):
            aliases = self.aliases




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "canonical_name": canonical_name,
            "kind": kind,
            "scope": scope,
        })
        if aliases is not UNSET:
            field_dict["aliases"] = aliases

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        canonical_name = d.pop("canonical_name")

        kind = EntityBodyKind(d.pop("kind"))




        scope = d.pop("scope")

        aliases = cast(list[str], d.pop("aliases", UNSET))


        entity_body = cls(
            canonical_name=canonical_name,
            kind=kind,
            scope=scope,
            aliases=aliases,
        )

        return entity_body

