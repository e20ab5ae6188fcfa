from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="SessionSummaryDto")



@_attrs_define
class SessionSummaryDto:
    """ A session and how many turns it holds.

        Attributes:
            agent_id (str):
            id (str):
            started_at (datetime.datetime):
            turns (int):
            user_id (str):
            ended_at (datetime.datetime | None | Unset):
            project_id (None | str | Unset):
     """

    agent_id: str
    id: str
    started_at: datetime.datetime
    turns: int
    user_id: str
    ended_at: datetime.datetime | None | Unset = UNSET
    project_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        id = self.id

        started_at = self.started_at.isoformat()

        turns = self.turns

        user_id = self.user_id

        ended_at: None | str | Unset
        if isinstance(self.ended_at, Unset):
            ended_at = UNSET
        elif isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        project_id: None | str | Unset
        if isinstance(self.project_id, Unset):
            project_id = UNSET
        else:
            project_id = self.project_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "id": id,
            "started_at": started_at,
            "turns": turns,
            "user_id": user_id,
        })
        if ended_at is not UNSET:
            field_dict["ended_at"] = ended_at
        if project_id is not UNSET:
            field_dict["project_id"] = project_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        id = d.pop("id")

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))




        turns = d.pop("turns")

        user_id = d.pop("user_id")

        def _parse_ended_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)



                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ended_at = _parse_ended_at(d.pop("ended_at", UNSET))


        def _parse_project_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        project_id = _parse_project_id(d.pop("project_id", UNSET))


        session_summary_dto = cls(
            agent_id=agent_id,
            id=id,
            started_at=started_at,
            turns=turns,
            user_id=user_id,
            ended_at=ended_at,
            project_id=project_id,
        )


        session_summary_dto.additional_properties = d
        return session_summary_dto

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
