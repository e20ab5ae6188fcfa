from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.review_dto import ReviewDto





T = TypeVar("T", bound="ResolutionDto")



@_attrs_define
class ResolutionDto:
    """ A resolved review.

        Attributes:
            from_ (str): The record's status before and after.
            review (ReviewDto): An item of the review queue.
            to (str):
     """

    from_: str
    review: ReviewDto
    to: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.review_dto import ReviewDto # noqa: PLC0415
        from_ = self.from_

        review = self.review.to_dict()

        to = self.to


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "from": from_,
            "review": review,
            "to": to,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.review_dto import ReviewDto # noqa: PLC0415
        d = dict(src_dict)
        from_ = d.pop("from")

        review = ReviewDto.from_dict(d.pop("review"))




        to = d.pop("to")

        resolution_dto = cls(
            from_=from_,
            review=review,
            to=to,
        )


        resolution_dto.additional_properties = d
        return resolution_dto

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
