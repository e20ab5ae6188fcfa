from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.extraction_write_dto import ExtractionWriteDto
  from ..models.review_dto import ReviewDto





T = TypeVar("T", bound="ExtractionCandidateDto")



@_attrs_define
class ExtractionCandidateDto:
    """ One candidate's path through extraction.

        Attributes:
            index (int): Position among the extractor's candidates.
            review (ReviewDto): An item of the review queue.
            reason (None | str | Unset):
            write (ExtractionWriteDto | None | Unset):
     """

    index: int
    review: ReviewDto
    reason: None | str | Unset = UNSET
    write: ExtractionWriteDto | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.extraction_write_dto import ExtractionWriteDto # noqa: PLC0415
        from ..models.review_dto import ReviewDto # noqa: PLC0415
        index = self.index

        review = self.review.to_dict()

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        write: dict[str, Any] | None | Unset
        if isinstance(self.write, Unset):
            write = UNSET
        elif isinstance(self.write, ExtractionWriteDto):
            write = self.write.to_dict()
        else:
            write = self.write


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "index": index,
            "review": review,
        })
        if reason is not UNSET:
            field_dict["reason"] = reason
        if write is not UNSET:
            field_dict["write"] = write

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.extraction_write_dto import ExtractionWriteDto # noqa: PLC0415
        from ..models.review_dto import ReviewDto # noqa: PLC0415
        d = dict(src_dict)
        index = d.pop("index")

        review = ReviewDto.from_dict(d.pop("review"))




        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        def _parse_write(data: object) -> ExtractionWriteDto | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                write_type_0 = ExtractionWriteDto.from_dict(data)



                return write_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ExtractionWriteDto | None | Unset, data)

        write = _parse_write(d.pop("write", UNSET))


        extraction_candidate_dto = cls(
            index=index,
            review=review,
            reason=reason,
            write=write,
        )


        extraction_candidate_dto.additional_properties = d
        return extraction_candidate_dto

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
