from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.decision_timings_dto import DecisionTimingsDto
  from ..models.gap_dto import GapDto





T = TypeVar("T", bound="DecisionDto")



@_attrs_define
class DecisionDto:
    """ One host-issued memory decision for a turn, as stored.

        Attributes:
            admitted (list[str]): Ids of the admitted records.
            bundle_id (str):
            created_at (datetime.datetime):
            disposition (str): draft_kept or regenerated.
            gaps (list[GapDto]):
            id (str):
            input_tokens (int):
            output_tokens (int):
            searches (list[str]): One search id per gap searched (`GET /v1/admin/search-log/{id}` explains each).
            session_id (str):
            timings (DecisionTimingsDto): Milliseconds per stage.
            answer (None | str | Unset): The regenerated answer; only with disposition `regenerated`.
            failure (None | str | Unset): What failed, for reason `failed`.
            reason (None | str | Unset): Why the draft was kept: no_gaps, nothing_admitted, unfit_bundle or failed.
     """

    admitted: list[str]
    bundle_id: str
    created_at: datetime.datetime
    disposition: str
    gaps: list[GapDto]
    id: str
    input_tokens: int
    output_tokens: int
    searches: list[str]
    session_id: str
    timings: DecisionTimingsDto
    answer: None | str | Unset = UNSET
    failure: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.decision_timings_dto import DecisionTimingsDto # noqa: PLC0415
        from ..models.gap_dto import GapDto # noqa: PLC0415
        admitted = self.admitted



        bundle_id = self.bundle_id

        created_at = self.created_at.isoformat()

        disposition = self.disposition

        gaps = []
        for gaps_item_data in self.gaps:
            gaps_item = gaps_item_data.to_dict()
            gaps.append(gaps_item)



        id = self.id

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        searches = self.searches



        session_id = self.session_id

        timings = self.timings.to_dict()

        answer: None | str | Unset
        if isinstance(self.answer, Unset):
            answer = UNSET
        else:
            answer = self.answer

        failure: None | str | Unset
        if isinstance(self.failure, Unset):
            failure = UNSET
        else:
            failure = self.failure

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "admitted": admitted,
            "bundle_id": bundle_id,
            "created_at": created_at,
            "disposition": disposition,
            "gaps": gaps,
            "id": id,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "searches": searches,
            "session_id": session_id,
            "timings": timings,
        })
        if answer is not UNSET:
            field_dict["answer"] = answer
        if failure is not UNSET:
            field_dict["failure"] = failure
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.decision_timings_dto import DecisionTimingsDto # noqa: PLC0415
        from ..models.gap_dto import GapDto # noqa: PLC0415
        d = dict(src_dict)
        admitted = cast(list[str], d.pop("admitted"))


        bundle_id = d.pop("bundle_id")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        disposition = d.pop("disposition")

        gaps = []
        _gaps = d.pop("gaps")
        for gaps_item_data in (_gaps):
            gaps_item = GapDto.from_dict(gaps_item_data)



            gaps.append(gaps_item)


        id = d.pop("id")

        input_tokens = d.pop("input_tokens")

        output_tokens = d.pop("output_tokens")

        searches = cast(list[str], d.pop("searches"))


        session_id = d.pop("session_id")

        timings = DecisionTimingsDto.from_dict(d.pop("timings"))




        def _parse_answer(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        answer = _parse_answer(d.pop("answer", UNSET))


        def _parse_failure(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        failure = _parse_failure(d.pop("failure", UNSET))


        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        decision_dto = cls(
            admitted=admitted,
            bundle_id=bundle_id,
            created_at=created_at,
            disposition=disposition,
            gaps=gaps,
            id=id,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            searches=searches,
            session_id=session_id,
            timings=timings,
            answer=answer,
            failure=failure,
            reason=reason,
        )


        decision_dto.additional_properties = d
        return decision_dto

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
