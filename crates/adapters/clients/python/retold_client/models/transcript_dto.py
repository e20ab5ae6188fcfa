from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.transcript_turn_dto import TranscriptTurnDto





T = TypeVar("T", bound="TranscriptDto")



@_attrs_define
class TranscriptDto:
    """ A session's transcript, in turn order.

        Attributes:
            session_id (str):
            turns (list[TranscriptTurnDto]):
     """

    session_id: str
    turns: list[TranscriptTurnDto]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.transcript_turn_dto import TranscriptTurnDto # noqa: PLC0415
        session_id = self.session_id

        turns = []
        for turns_item_data in self.turns:
            turns_item = turns_item_data.to_dict()
            turns.append(turns_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "session_id": session_id,
            "turns": turns,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.transcript_turn_dto import TranscriptTurnDto # noqa: PLC0415
        d = dict(src_dict)
        session_id = d.pop("session_id")

        turns = []
        _turns = d.pop("turns")
        for turns_item_data in (_turns):
            turns_item = TranscriptTurnDto.from_dict(turns_item_data)



            turns.append(turns_item)


        transcript_dto = cls(
            session_id=session_id,
            turns=turns,
        )


        transcript_dto.additional_properties = d
        return transcript_dto

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
