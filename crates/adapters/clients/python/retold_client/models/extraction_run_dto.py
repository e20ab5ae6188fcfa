from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.extraction_report_dto import ExtractionReportDto





T = TypeVar("T", bound="ExtractionRunDto")



@_attrs_define
class ExtractionRunDto:
    """ Extraction reports.

        Attributes:
            reports (list[ExtractionReportDto]):
     """

    reports: list[ExtractionReportDto]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.extraction_report_dto import ExtractionReportDto # noqa: PLC0415
        reports = []
        for reports_item_data in self.reports:
            reports_item = reports_item_data.to_dict()
            reports.append(reports_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "reports": reports,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.extraction_report_dto import ExtractionReportDto # noqa: PLC0415
        d = dict(src_dict)
        reports = []
        _reports = d.pop("reports")
        for reports_item_data in (_reports):
            reports_item = ExtractionReportDto.from_dict(reports_item_data)



            reports.append(reports_item)


        extraction_run_dto = cls(
            reports=reports,
        )


        extraction_run_dto.additional_properties = d
        return extraction_run_dto

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
