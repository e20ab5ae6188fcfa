from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="TurnDto")



@_attrs_define
class TurnDto:
    """ An appended turn.

        Attributes:
            memory (str): What turn memory did: `kept` (its records are searchable now), `off`
                (`sessions.turn_memory` is off), or `scope_not_writable` (the session's scope is no
                longer writable by its principal); the turn is in the transcript in every case.
            record_ids (list[str]): The records that keep it, in order (several for a long turn).
            source_ref (str):
            turn (int): The turn number (1, 2, …) to cite as `session:<id><turn:N>`.
     """

    memory: str
    record_ids: list[str]
    source_ref: str
    turn: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        memory = self.memory

        record_ids = self.record_ids



        source_ref = self.source_ref

        turn = self.turn


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "memory": memory,
            "record_ids": record_ids,
            "source_ref": source_ref,
            "turn": turn,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        memory = d.pop("memory")

        record_ids = cast(list[str], d.pop("record_ids"))


        source_ref = d.pop("source_ref")

        turn = d.pop("turn")

        turn_dto = cls(
            memory=memory,
            record_ids=record_ids,
            source_ref=source_ref,
            turn=turn,
        )


        turn_dto.additional_properties = d
        return turn_dto

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
