from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ErasureBody")



@_attrs_define
class ErasureBody:
    """ What to erase: exactly one of `record_id`, `user_id`, `scope`.

        Attributes:
            dry_run (bool | Unset): Only count what would be erased.
            record_id (None | str | Unset): One record (`mem_…`).
            rewrite_snapshots (bool | Unset): Also erase the records inside earlier snapshots that still hold them.
            scope (None | str | Unset): Every record of one scope, with its entities.
            user_id (None | str | Unset): Every record of a user: `user:<u>` and every `agent:*/<u>` scope, the user's
                session
                turns and the entities of those scopes.
     """

    dry_run: bool | Unset = UNSET
    record_id: None | str | Unset = UNSET
    rewrite_snapshots: bool | Unset = UNSET
    scope: None | str | Unset = UNSET
    user_id: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        dry_run = self.dry_run

        record_id: None | str | Unset
        if isinstance(self.record_id, Unset):
            record_id = UNSET
        else:
            record_id = self.record_id

        rewrite_snapshots = self.rewrite_snapshots

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        else:
            scope = self.scope

        user_id: None | str | Unset
        if isinstance(self.user_id, Unset):
            user_id = UNSET
        else:
            user_id = self.user_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if record_id is not UNSET:
            field_dict["record_id"] = record_id
        if rewrite_snapshots is not UNSET:
            field_dict["rewrite_snapshots"] = rewrite_snapshots
        if scope is not UNSET:
            field_dict["scope"] = scope
        if user_id is not UNSET:
            field_dict["user_id"] = user_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dry_run = d.pop("dry_run", UNSET)

        def _parse_record_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        record_id = _parse_record_id(d.pop("record_id", UNSET))


        rewrite_snapshots = d.pop("rewrite_snapshots", UNSET)

        def _parse_scope(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))


        def _parse_user_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        user_id = _parse_user_id(d.pop("user_id", UNSET))


        erasure_body = cls(
            dry_run=dry_run,
            record_id=record_id,
            rewrite_snapshots=rewrite_snapshots,
            scope=scope,
            user_id=user_id,
        )

        return erasure_body

