from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PrincipalDto")



@_attrs_define
class PrincipalDto:
    """ The principal of the current agent run, asserted by the host.

        Attributes:
            agent_id (str): The agent's id (no `/`).
            user_id (str): The user's id (no `/`).
            project_id (None | str | Unset): The project of the run, if any.
            session_id (None | str | Unset): The session of the run (`sess_…`), if any.
     """

    agent_id: str
    user_id: str
    project_id: None | str | Unset = UNSET
    session_id: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        user_id = self.user_id

        project_id: None | str | Unset
        if isinstance(self.project_id, Unset):
            project_id = UNSET
        else:
            project_id = self.project_id

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "agent_id": agent_id,
            "user_id": user_id,
        })
        if project_id is not UNSET:
            field_dict["project_id"] = project_id
        if session_id is not UNSET:
            field_dict["session_id"] = session_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        user_id = d.pop("user_id")

        def _parse_project_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        project_id = _parse_project_id(d.pop("project_id", UNSET))


        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("session_id", UNSET))


        principal_dto = cls(
            agent_id=agent_id,
            user_id=user_id,
            project_id=project_id,
            session_id=session_id,
        )

        return principal_dto

