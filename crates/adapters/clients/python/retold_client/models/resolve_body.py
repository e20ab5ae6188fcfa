from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.resolve_body_action import ResolveBodyAction






T = TypeVar("T", bound="ResolveBody")



@_attrs_define
class ResolveBody:
    """ How to resolve a review.

        Attributes:
            action (ResolveBodyAction): confirm (confirmed, expiry cleared), expire or forget.
     """

    action: ResolveBodyAction





    def to_dict(self) -> dict[str, Any]:
        action = self.action.value


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "action": action,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = ResolveBodyAction(d.pop("action"))




        resolve_body = cls(
            action=action,
        )

        return resolve_body

