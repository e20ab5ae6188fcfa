from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.decision_dto import DecisionDto
  from ..models.record_dto import RecordDto
  from ..models.refused_dto import RefusedDto





T = TypeVar("T", bound="DecisionOutcomeDto")



@_attrs_define
class DecisionOutcomeDto:
    """ A decision with the admitted records (the host may use them itself when the draft was
    kept) and why each other searched record was not admitted.

        Attributes:
            admitted_records (list[RecordDto]):
            decision (DecisionDto): One host-issued memory decision for a turn, as stored.
            refused (list[RefusedDto]):
     """

    admitted_records: list[RecordDto]
    decision: DecisionDto
    refused: list[RefusedDto]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.decision_dto import DecisionDto # noqa: PLC0415
        from ..models.record_dto import RecordDto # noqa: PLC0415
        from ..models.refused_dto import RefusedDto # noqa: PLC0415
        admitted_records = []
        for admitted_records_item_data in self.admitted_records:
            admitted_records_item = admitted_records_item_data.to_dict()
            admitted_records.append(admitted_records_item)



        decision = self.decision.to_dict()

        refused = []
        for refused_item_data in self.refused:
            refused_item = refused_item_data.to_dict()
            refused.append(refused_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "admitted_records": admitted_records,
            "decision": decision,
            "refused": refused,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.decision_dto import DecisionDto # noqa: PLC0415
        from ..models.record_dto import RecordDto # noqa: PLC0415
        from ..models.refused_dto import RefusedDto # noqa: PLC0415
        d = dict(src_dict)
        admitted_records = []
        _admitted_records = d.pop("admitted_records")
        for admitted_records_item_data in (_admitted_records):
            admitted_records_item = RecordDto.from_dict(admitted_records_item_data)



            admitted_records.append(admitted_records_item)


        decision = DecisionDto.from_dict(d.pop("decision"))




        refused = []
        _refused = d.pop("refused")
        for refused_item_data in (_refused):
            refused_item = RefusedDto.from_dict(refused_item_data)



            refused.append(refused_item)


        decision_outcome_dto = cls(
            admitted_records=admitted_records,
            decision=decision,
            refused=refused,
        )


        decision_outcome_dto.additional_properties = d
        return decision_outcome_dto

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
