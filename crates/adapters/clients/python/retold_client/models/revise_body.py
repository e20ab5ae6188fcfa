from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.revise_action_dto import ReviseActionDto
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.principal_dto import PrincipalDto
  from ..models.write_body import WriteBody





T = TypeVar("T", bound="ReviseBody")



@_attrs_define
class ReviseBody:
    """ `memory_revise` request.

        Attributes:
            action (ReviseActionDto): What `memory_revise` does.
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            from_ (None | str | Unset): For merge_entities: the entity merged away.
            id (None | str | Unset): The record to confirm, expire or supersede.
            into (None | str | Unset): For merge_entities: the surviving entity.
            replacement (None | Unset | WriteBody):
     """

    action: ReviseActionDto
    principal: PrincipalDto
    from_: None | str | Unset = UNSET
    id: None | str | Unset = UNSET
    into: None | str | Unset = UNSET
    replacement: None | Unset | WriteBody = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        from ..models.write_body import WriteBody # noqa: PLC0415
        action = self.action.value

        principal = self.principal.to_dict()

        from_: None | str | Unset
        if isinstance(self.from_, Unset):
            from_ = UNSET
        else:
            from_ = self.from_

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        into: None | str | Unset
        if isinstance(self.into, Unset):
            into = UNSET
        else:
            into = self.into

        replacement: dict[str, Any] | None | Unset
        if isinstance(self.replacement, Unset):
            replacement = UNSET
        elif isinstance(self.replacement, WriteBody):
            replacement = self.replacement.to_dict()
        else:
            replacement = self.replacement


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "action": action,
            "principal": principal,
        })
        if from_ is not UNSET:
            field_dict["from"] = from_
        if id is not UNSET:
            field_dict["id"] = id
        if into is not UNSET:
            field_dict["into"] = into
        if replacement is not UNSET:
            field_dict["replacement"] = replacement

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        from ..models.write_body import WriteBody # noqa: PLC0415
        d = dict(src_dict)
        action = ReviseActionDto(d.pop("action"))




        principal = PrincipalDto.from_dict(d.pop("principal"))




        def _parse_from_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        from_ = _parse_from_(d.pop("from", UNSET))


        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))


        def _parse_into(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        into = _parse_into(d.pop("into", UNSET))


        def _parse_replacement(data: object) -> None | Unset | WriteBody:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                replacement_type_0 = WriteBody.from_dict(data)



                return replacement_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WriteBody, data)

        replacement = _parse_replacement(d.pop("replacement", UNSET))


        revise_body = cls(
            action=action,
            principal=principal,
            from_=from_,
            id=id,
            into=into,
            replacement=replacement,
        )

        return revise_body

