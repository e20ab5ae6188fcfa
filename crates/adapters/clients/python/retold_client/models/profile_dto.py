from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.profile_entry_dto import ProfileEntryDto





T = TypeVar("T", bound="ProfileDto")



@_attrs_define
class ProfileDto:
    """ The immutable profile a session starts with: text for the system prompt, the records it
    holds, and a hash of the text.

        Attributes:
            content_hash (str): SHA-256 of `text`, hex.
            created_at (datetime.datetime):
            cut (int): Ambient records the budget left out (whole records only).
            records (list[ProfileEntryDto]):
            session_id (str):
            text (str):
            tokens (int): Estimated tokens of `text`, within `activation.profile_token_budget`.
     """

    content_hash: str
    created_at: datetime.datetime
    cut: int
    records: list[ProfileEntryDto]
    session_id: str
    text: str
    tokens: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.profile_entry_dto import ProfileEntryDto # noqa: PLC0415
        content_hash = self.content_hash

        created_at = self.created_at.isoformat()

        cut = self.cut

        records = []
        for records_item_data in self.records:
            records_item = records_item_data.to_dict()
            records.append(records_item)



        session_id = self.session_id

        text = self.text

        tokens = self.tokens


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "content_hash": content_hash,
            "created_at": created_at,
            "cut": cut,
            "records": records,
            "session_id": session_id,
            "text": text,
            "tokens": tokens,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.profile_entry_dto import ProfileEntryDto # noqa: PLC0415
        d = dict(src_dict)
        content_hash = d.pop("content_hash")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        cut = d.pop("cut")

        records = []
        _records = d.pop("records")
        for records_item_data in (_records):
            records_item = ProfileEntryDto.from_dict(records_item_data)



            records.append(records_item)


        session_id = d.pop("session_id")

        text = d.pop("text")

        tokens = d.pop("tokens")

        profile_dto = cls(
            content_hash=content_hash,
            created_at=created_at,
            cut=cut,
            records=records,
            session_id=session_id,
            text=text,
            tokens=tokens,
        )


        profile_dto.additional_properties = d
        return profile_dto

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
