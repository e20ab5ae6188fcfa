from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.entity_ref_dto_kind_type_1 import EntityRefDtoKindType1
from ..models.entity_ref_dto_kind_type_2_type_1 import EntityRefDtoKindType2Type1
from ..models.entity_ref_dto_kind_type_3_type_1 import EntityRefDtoKindType3Type1
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="EntityRefDto")



@_attrs_define
class EntityRefDto:
    """ An entity named by id or by name.

        Attributes:
            id (None | str | Unset): An existing entity id (`ent_…`).
            kind (EntityRefDtoKindType1 | EntityRefDtoKindType2Type1 | EntityRefDtoKindType3Type1 | None | Unset): For a new
                entity: person, project, repository, product, organization, other.
            name (None | str | Unset): A name or alias, resolved exactly in readable scopes; unknown names create a
                provisional entity.
     """

    id: None | str | Unset = UNSET
    kind: EntityRefDtoKindType1 | EntityRefDtoKindType2Type1 | EntityRefDtoKindType3Type1 | None | Unset = UNSET
    name: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        kind: None | str | Unset
        if isinstance(self.kind, Unset):
            kind = UNSET
        elif isinstance(self.kind, EntityRefDtoKindType1):
            kind = self.kind.value
        elif isinstance(self.kind, EntityRefDtoKindType2Type1):
            kind = self.kind.value
        elif isinstance(self.kind, EntityRefDtoKindType3Type1):
            kind = self.kind.value
        else:
            kind = self.kind

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if id is not UNSET:
            field_dict["id"] = id
        if kind is not UNSET:
            field_dict["kind"] = kind
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))


        def _parse_kind(data: object) -> EntityRefDtoKindType1 | EntityRefDtoKindType2Type1 | EntityRefDtoKindType3Type1 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                kind_type_1 = EntityRefDtoKindType1(data)



                return kind_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                kind_type_2_type_1 = EntityRefDtoKindType2Type1(data)



                return kind_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                kind_type_3_type_1 = EntityRefDtoKindType3Type1(data)



                return kind_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EntityRefDtoKindType1 | EntityRefDtoKindType2Type1 | EntityRefDtoKindType3Type1 | None | Unset, data)

        kind = _parse_kind(d.pop("kind", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        entity_ref_dto = cls(
            id=id,
            kind=kind,
            name=name,
        )

        return entity_ref_dto

