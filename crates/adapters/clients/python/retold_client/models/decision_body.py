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





T = TypeVar("T", bound="DecisionBody")



@_attrs_define
class DecisionBody:
    """ A turn and the host model's draft answer, for the orchestrator's decision.

        Attributes:
            draft (str): The draft answer the host's model wrote.
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            turn (str): The user's message.
            deadline_ms (int | None | Unset): Milliseconds the decision may take (default `orchestrator.deadline_ms`, at
                most
                `orchestrator.max_deadline_ms`); past it the draft is kept.
     """

    draft: str
    principal: PrincipalDto
    turn: str
    deadline_ms: int | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        draft = self.draft

        principal = self.principal.to_dict()

        turn = self.turn

        deadline_ms: int | None | Unset
        if isinstance(self.deadline_ms, Unset):
            deadline_ms = UNSET
        else:
            deadline_ms = self.deadline_ms


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "draft": draft,
            "principal": principal,
            "turn": turn,
        })
        if deadline_ms is not UNSET:
            field_dict["deadline_ms"] = deadline_ms

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        draft = d.pop("draft")

        principal = PrincipalDto.from_dict(d.pop("principal"))




        turn = d.pop("turn")

        def _parse_deadline_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        deadline_ms = _parse_deadline_ms(d.pop("deadline_ms", UNSET))


        decision_body = cls(
            draft=draft,
            principal=principal,
            turn=turn,
            deadline_ms=deadline_ms,
        )

        return decision_body

