from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.extraction_candidate_dto import ExtractionCandidateDto
  from ..models.extraction_write_dto import ExtractionWriteDto





T = TypeVar("T", bound="ExtractionReportDto")



@_attrs_define
class ExtractionReportDto:
    """ What extraction did for one session.

        Attributes:
            candidates (list[ExtractionCandidateDto]):
            input_tokens (int):
            malformed (list[str]): Proposals that could not be read as candidates.
            output_tokens (int):
            session_id (str):
            status (str): extracted, skipped (claimed or extracted already, still open, or out of attempts),
                failed (retried later while attempts remain), or off.
            reason (None | str | Unset):
            summary (ExtractionWriteDto | None | Unset):
     """

    candidates: list[ExtractionCandidateDto]
    input_tokens: int
    malformed: list[str]
    output_tokens: int
    session_id: str
    status: str
    reason: None | str | Unset = UNSET
    summary: ExtractionWriteDto | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.extraction_candidate_dto import ExtractionCandidateDto # noqa: PLC0415
        from ..models.extraction_write_dto import ExtractionWriteDto # noqa: PLC0415
        candidates = []
        for candidates_item_data in self.candidates:
            candidates_item = candidates_item_data.to_dict()
            candidates.append(candidates_item)



        input_tokens = self.input_tokens

        malformed = self.malformed



        output_tokens = self.output_tokens

        session_id = self.session_id

        status = self.status

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        summary: dict[str, Any] | None | Unset
        if isinstance(self.summary, Unset):
            summary = UNSET
        elif isinstance(self.summary, ExtractionWriteDto):
            summary = self.summary.to_dict()
        else:
            summary = self.summary


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "candidates": candidates,
            "input_tokens": input_tokens,
            "malformed": malformed,
            "output_tokens": output_tokens,
            "session_id": session_id,
            "status": status,
        })
        if reason is not UNSET:
            field_dict["reason"] = reason
        if summary is not UNSET:
            field_dict["summary"] = summary

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.extraction_candidate_dto import ExtractionCandidateDto # noqa: PLC0415
        from ..models.extraction_write_dto import ExtractionWriteDto # noqa: PLC0415
        d = dict(src_dict)
        candidates = []
        _candidates = d.pop("candidates")
        for candidates_item_data in (_candidates):
            candidates_item = ExtractionCandidateDto.from_dict(candidates_item_data)



            candidates.append(candidates_item)


        input_tokens = d.pop("input_tokens")

        malformed = cast(list[str], d.pop("malformed"))


        output_tokens = d.pop("output_tokens")

        session_id = d.pop("session_id")

        status = d.pop("status")

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        def _parse_summary(data: object) -> ExtractionWriteDto | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                summary_type_0 = ExtractionWriteDto.from_dict(data)



                return summary_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ExtractionWriteDto | None | Unset, data)

        summary = _parse_summary(d.pop("summary", UNSET))


        extraction_report_dto = cls(
            candidates=candidates,
            input_tokens=input_tokens,
            malformed=malformed,
            output_tokens=output_tokens,
            session_id=session_id,
            status=status,
            reason=reason,
            summary=summary,
        )


        extraction_report_dto.additional_properties = d
        return extraction_report_dto

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
