from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.principal_dto import PrincipalDto





T = TypeVar("T", bound="SessionBody")



@_attrs_define
class SessionBody:
    """ A session to start.

        Attributes:
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            scope (None | str | Unset): Where turn memory keeps this session's turns: a scope the principal may write (a
                project's shared memory, say). Absent: the principal's private scope
                `agent:<agent_id>/<user_id>`.
            tags (list[str] | Unset): Tags that hold for this session: a conditional record tagged with one of them is in
                its profile (as are records tagged `project:<the principal's project>` or
                `agent:<its agent>`).
     """

    principal: PrincipalDto
    scope: None | str | Unset = UNSET
    tags: list[str] | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        principal = self.principal.to_dict()

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        else:
            scope = self.scope

        tags: list[str] | Unset = UNSET
        if not isinstance(self.tags, Unset):
            tags = self.tags




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "principal": principal,
        })
        if scope is not UNSET:
            field_dict["scope"] = scope
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        principal = PrincipalDto.from_dict(d.pop("principal"))




        def _parse_scope(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))


        tags = cast(list[str], d.pop("tags", UNSET))


        session_body = cls(
            principal=principal,
            scope=scope,
            tags=tags,
        )

        return session_body

