from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.matches_dto import MatchesDto
  from ..models.passage_dto import PassageDto
  from ..models.record_dto import RecordDto





T = TypeVar("T", bound="SearchResultDto")



@_attrs_define
class SearchResultDto:
    """ One search result.

        Attributes:
            explanation (str): Why this record was returned, e.g. `matched: dense 0.71 (rank 2), lexical 3/3 terms (rank 1);
                fused rank: 1; gate: passed: 2 channels`.
            fused_rank (int):
            matched (MatchesDto): Which channels found a result.
            rank (int):
            record (RecordDto): One memory record.
            score (float): Fused score after freshness; with the reranker on, its fusion with the reranker's order.
            passage (None | PassageDto | Unset):
     """

    explanation: str
    fused_rank: int
    matched: MatchesDto
    rank: int
    record: RecordDto
    score: float
    passage: None | PassageDto | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.matches_dto import MatchesDto # noqa: PLC0415
        from ..models.passage_dto import PassageDto # noqa: PLC0415
        from ..models.record_dto import RecordDto # noqa: PLC0415
        explanation = self.explanation

        fused_rank = self.fused_rank

        matched = self.matched.to_dict()

        rank = self.rank

        record = self.record.to_dict()

        score = self.score

        passage: dict[str, Any] | None | Unset
        if isinstance(self.passage, Unset):
            passage = UNSET
        elif isinstance(self.passage, PassageDto):
            passage = self.passage.to_dict()
        else:
            passage = self.passage


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "explanation": explanation,
            "fused_rank": fused_rank,
            "matched": matched,
            "rank": rank,
            "record": record,
            "score": score,
        })
        if passage is not UNSET:
            field_dict["passage"] = passage

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.matches_dto import MatchesDto # noqa: PLC0415
        from ..models.passage_dto import PassageDto # noqa: PLC0415
        from ..models.record_dto import RecordDto # noqa: PLC0415
        d = dict(src_dict)
        explanation = d.pop("explanation")

        fused_rank = d.pop("fused_rank")

        matched = MatchesDto.from_dict(d.pop("matched"))




        rank = d.pop("rank")

        record = RecordDto.from_dict(d.pop("record"))




        score = d.pop("score")

        def _parse_passage(data: object) -> None | PassageDto | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                passage_type_0 = PassageDto.from_dict(data)



                return passage_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PassageDto | Unset, data)

        passage = _parse_passage(d.pop("passage", UNSET))


        search_result_dto = cls(
            explanation=explanation,
            fused_rank=fused_rank,
            matched=matched,
            rank=rank,
            record=record,
            score=score,
            passage=passage,
        )


        search_result_dto.additional_properties = d
        return search_result_dto

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
