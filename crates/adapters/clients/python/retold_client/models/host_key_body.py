from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="HostKeyBody")



@_attrs_define
class HostKeyBody:
    """ A host key to create.

        Attributes:
            name (str):
            agents (list[str] | Unset): Agent ids the key may assert; empty = any agent.
     """

    name: str
    agents: list[str] | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        agents: list[str] | Unset = UNSET
        if not isinstance(self.agents, Unset):
            agents = self.agents




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "name": name,
        })
        if agents is not UNSET:
            field_dict["agents"] = agents

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        agents = cast(list[str], d.pop("agents", UNSET))


        host_key_body = cls(
            name=name,
            agents=agents,
        )

        return host_key_body

