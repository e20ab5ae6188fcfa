from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="RetentionBody")



@_attrs_define
class RetentionBody:
    """ A retention run (session turns and search traces).

        Attributes:
            dry_run (bool | Unset): Only count what would be deleted.
            force (bool | Unset): Also sessions whose extraction has not run (their turns are lost to extraction).
     """

    dry_run: bool | Unset = UNSET
    force: bool | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        dry_run = self.dry_run

        force = self.force


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if force is not UNSET:
            field_dict["force"] = force

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dry_run = d.pop("dry_run", UNSET)

        force = d.pop("force", UNSET)

        retention_body = cls(
            dry_run=dry_run,
            force=force,
        )

        return retention_body

