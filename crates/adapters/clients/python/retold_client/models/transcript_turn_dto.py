from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="TranscriptTurnDto")



@_attrs_define
class TranscriptTurnDto:
    """ One turn of a session's transcript.

        Attributes:
            at (datetime.datetime): When it was said.
            content (str):
            created_at (datetime.datetime): When the service recorded it.
            role (str): user, assistant or tool.
            turn (int): The turn number, cited as `session:<id><turn:N>`.
            speaker (None | str | Unset): Who spoke, when the host named them.
     """

    at: datetime.datetime
    content: str
    created_at: datetime.datetime
    role: str
    turn: int
    speaker: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        content = self.content

        created_at = self.created_at.isoformat()

        role = self.role

        turn = self.turn

        speaker: None | str | Unset
        if isinstance(self.speaker, Unset):
            speaker = UNSET
        else:
            speaker = self.speaker


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "at": at,
            "content": content,
            "created_at": created_at,
            "role": role,
            "turn": turn,
        })
        if speaker is not UNSET:
            field_dict["speaker"] = speaker

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))




        content = d.pop("content")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        role = d.pop("role")

        turn = d.pop("turn")

        def _parse_speaker(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        speaker = _parse_speaker(d.pop("speaker", UNSET))


        transcript_turn_dto = cls(
            at=at,
            content=content,
            created_at=created_at,
            role=role,
            turn=turn,
            speaker=speaker,
        )


        transcript_turn_dto.additional_properties = d
        return transcript_turn_dto

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
