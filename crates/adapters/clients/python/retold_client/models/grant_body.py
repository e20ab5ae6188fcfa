from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="GrantBody")



@_attrs_define
class GrantBody:
    """ A grant.

        Attributes:
            agent_id (str):
            can_read (bool):
            can_write (bool):
            scope (str): `user:<id>`, `project:<id>`, `org:<id>` or `agent:<id>` (private pair scopes are refused).
     """

    agent_id: str
    can_read: bool
    can_write: bool
    scope: str





    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        can_read = self.can_read

        can_write = self.can_write

        scope = self.scope


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "agent_id": agent_id,
            "can_read": can_read,
            "can_write": can_write,
            "scope": scope,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        can_read = d.pop("can_read")

        can_write = d.pop("can_write")

        scope = d.pop("scope")

        grant_body = cls(
            agent_id=agent_id,
            can_read=can_read,
            can_write=can_write,
            scope=scope,
        )

        return grant_body

