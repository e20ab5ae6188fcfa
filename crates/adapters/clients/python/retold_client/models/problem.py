from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Problem")



@_attrs_define
class Problem:
    """ An RFC 9457 problem document with Retold's stable `code`.

        Attributes:
            code (str): Stable error code: scope_not_writable, entity_ambiguous, not_found, validation_failed,
                unauthorized, forbidden, conflict, idempotency_key_reused, payload_too_large, storage_full,
                storage_unavailable, timeout, method_not_allowed, internal.
            detail (str):
            status (int):
            title (str):
            type_ (str): A URI naming the problem type (`urn:retold:error:<code>`).
            candidates (list[str] | None | Unset): For entity_ambiguous: the candidate entity ids.
            field (None | str | Unset): For validation_failed: the field that was refused.
     """

    code: str
    detail: str
    status: int
    title: str
    type_: str
    candidates: list[str] | None | Unset = UNSET
    field: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        code = self.code

        detail = self.detail

        status = self.status

        title = self.title

        type_ = self.type_

        candidates: list[str] | None | Unset
        if isinstance(self.candidates, Unset):
            candidates = UNSET
        elif isinstance(self.candidates, list):
            candidates = self.candidates


        else:
            candidates = self.candidates

        field: None | str | Unset
        if isinstance(self.field, Unset):
            field = UNSET
        else:
            field = self.field


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "code": code,
            "detail": detail,
            "status": status,
            "title": title,
            "type": type_,
        })
        if candidates is not UNSET:
            field_dict["candidates"] = candidates
        if field is not UNSET:
            field_dict["field"] = field

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = d.pop("code")

        detail = d.pop("detail")

        status = d.pop("status")

        title = d.pop("title")

        type_ = d.pop("type")

        def _parse_candidates(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                candidates_type_0 = cast(list[str], data)

                return candidates_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        candidates = _parse_candidates(d.pop("candidates", UNSET))


        def _parse_field(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        field = _parse_field(d.pop("field", UNSET))


        problem = cls(
            code=code,
            detail=detail,
            status=status,
            title=title,
            type_=type_,
            candidates=candidates,
            field=field,
        )


        problem.additional_properties = d
        return problem

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
