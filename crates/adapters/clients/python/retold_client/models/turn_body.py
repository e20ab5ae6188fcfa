from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.turn_body_role import TurnBodyRole
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.principal_dto import PrincipalDto





T = TypeVar("T", bound="TurnBody")



@_attrs_define
class TurnBody:
    """ A turn to append.

        Attributes:
            content (str): The turn's text. With turn memory on it is also kept as searchable records: one, or
                for a turn longer than a record holds, one per part, cut at line and sentence ends.
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            role (TurnBodyRole): user, assistant or tool.
            at (datetime.datetime | None | Unset): When it was said, for a host that replays or imports history: not in the
                future, and
                not before the session's previous turn. Absent: now.
            speaker (None | str | Unset): Who spoke, when the session has more voices than its user, agent and tools (a
                group
                chat, a multi-party transcript): the name a search knows them by. Absent: the
                session's user for a user turn, its agent for an assistant turn.
     """

    content: str
    principal: PrincipalDto
    role: TurnBodyRole
    at: datetime.datetime | None | Unset = UNSET
    speaker: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        content = self.content

        principal = self.principal.to_dict()

        role = self.role.value

        at: None | str | Unset
        if isinstance(self.at, Unset):
            at = UNSET
        elif isinstance(self.at, datetime.datetime):
            at = self.at.isoformat()
        else:
            at = self.at

        speaker: None | str | Unset
        if isinstance(self.speaker, Unset):
            speaker = UNSET
        else:
            speaker = self.speaker


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "content": content,
            "principal": principal,
            "role": role,
        })
        if at is not UNSET:
            field_dict["at"] = at
        if speaker is not UNSET:
            field_dict["speaker"] = speaker

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        content = d.pop("content")

        principal = PrincipalDto.from_dict(d.pop("principal"))




        role = TurnBodyRole(d.pop("role"))




        def _parse_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                at_type_0 = datetime.datetime.fromisoformat(data)



                return at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        at = _parse_at(d.pop("at", UNSET))


        def _parse_speaker(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        speaker = _parse_speaker(d.pop("speaker", UNSET))


        turn_body = cls(
            content=content,
            principal=principal,
            role=role,
            at=at,
            speaker=speaker,
        )

        return turn_body

