from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ErasedDto")



@_attrs_define
class ErasedDto:
    """ What was removed besides the records' own content.

        Attributes:
            decisions (int): Orchestrator decisions that admitted an erased record (or were the user's).
            embeddings (int):
            entities (int):
            events (int):
            profiles (int):
            records (int):
            traces (int):
            turns (int):
     """

    decisions: int
    embeddings: int
    entities: int
    events: int
    profiles: int
    records: int
    traces: int
    turns: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        decisions = self.decisions

        embeddings = self.embeddings

        entities = self.entities

        events = self.events

        profiles = self.profiles

        records = self.records

        traces = self.traces

        turns = self.turns


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "decisions": decisions,
            "embeddings": embeddings,
            "entities": entities,
            "events": events,
            "profiles": profiles,
            "records": records,
            "traces": traces,
            "turns": turns,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        decisions = d.pop("decisions")

        embeddings = d.pop("embeddings")

        entities = d.pop("entities")

        events = d.pop("events")

        profiles = d.pop("profiles")

        records = d.pop("records")

        traces = d.pop("traces")

        turns = d.pop("turns")

        erased_dto = cls(
            decisions=decisions,
            embeddings=embeddings,
            entities=entities,
            events=events,
            profiles=profiles,
            records=records,
            traces=traces,
            turns=turns,
        )


        erased_dto.additional_properties = d
        return erased_dto

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
