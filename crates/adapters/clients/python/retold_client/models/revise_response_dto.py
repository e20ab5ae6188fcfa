from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.write_response_dto import WriteResponseDto





T = TypeVar("T", bound="ReviseResponseDto")



@_attrs_define
class ReviseResponseDto:
    """ The outcome of a revise or forget.

        Attributes:
            outcome (str): status_changed, written or entities_merged.
            from_status (None | str | Unset):
            record_id (None | str | Unset):
            to_status (None | str | Unset):
            write (None | Unset | WriteResponseDto):
     """

    outcome: str
    from_status: None | str | Unset = UNSET
    record_id: None | str | Unset = UNSET
    to_status: None | str | Unset = UNSET
    write: None | Unset | WriteResponseDto = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.write_response_dto import WriteResponseDto # noqa: PLC0415
        outcome = self.outcome

        from_status: None | str | Unset
        if isinstance(self.from_status, Unset):
            from_status = UNSET
        else:
            from_status = self.from_status

        record_id: None | str | Unset
        if isinstance(self.record_id, Unset):
            record_id = UNSET
        else:
            record_id = self.record_id

        to_status: None | str | Unset
        if isinstance(self.to_status, Unset):
            to_status = UNSET
        else:
            to_status = self.to_status

        write: dict[str, Any] | None | Unset
        if isinstance(self.write, Unset):
            write = UNSET
        elif isinstance(self.write, WriteResponseDto):
            write = self.write.to_dict()
        else:
            write = self.write


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "outcome": outcome,
        })
        if from_status is not UNSET:
            field_dict["from_status"] = from_status
        if record_id is not UNSET:
            field_dict["record_id"] = record_id
        if to_status is not UNSET:
            field_dict["to_status"] = to_status
        if write is not UNSET:
            field_dict["write"] = write

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.write_response_dto import WriteResponseDto # noqa: PLC0415
        d = dict(src_dict)
        outcome = d.pop("outcome")

        def _parse_from_status(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        from_status = _parse_from_status(d.pop("from_status", UNSET))


        def _parse_record_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        record_id = _parse_record_id(d.pop("record_id", UNSET))


        def _parse_to_status(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        to_status = _parse_to_status(d.pop("to_status", UNSET))


        def _parse_write(data: object) -> None | Unset | WriteResponseDto:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                write_type_0 = WriteResponseDto.from_dict(data)



                return write_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WriteResponseDto, data)

        write = _parse_write(d.pop("write", UNSET))


        revise_response_dto = cls(
            outcome=outcome,
            from_status=from_status,
            record_id=record_id,
            to_status=to_status,
            write=write,
        )


        revise_response_dto.additional_properties = d
        return revise_response_dto

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
