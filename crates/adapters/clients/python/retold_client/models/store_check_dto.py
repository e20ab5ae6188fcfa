from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="StoreCheckDto")



@_attrs_define
class StoreCheckDto:
    """ A store's consistency check.

        Attributes:
            integrity (str): SQLite's integrity_check: `ok` or what it found.
            live (int): Records neither deleted nor erased.
            missing_embeddings (int):
            missing_fts (int):
            ok (bool): Integrity, FTS rows and embeddings all agree with the records.
            orphan_embeddings (int):
            orphan_fts (int):
     """

    integrity: str
    live: int
    missing_embeddings: int
    missing_fts: int
    ok: bool
    orphan_embeddings: int
    orphan_fts: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        integrity = self.integrity

        live = self.live

        missing_embeddings = self.missing_embeddings

        missing_fts = self.missing_fts

        ok = self.ok

        orphan_embeddings = self.orphan_embeddings

        orphan_fts = self.orphan_fts


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "integrity": integrity,
            "live": live,
            "missing_embeddings": missing_embeddings,
            "missing_fts": missing_fts,
            "ok": ok,
            "orphan_embeddings": orphan_embeddings,
            "orphan_fts": orphan_fts,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        integrity = d.pop("integrity")

        live = d.pop("live")

        missing_embeddings = d.pop("missing_embeddings")

        missing_fts = d.pop("missing_fts")

        ok = d.pop("ok")

        orphan_embeddings = d.pop("orphan_embeddings")

        orphan_fts = d.pop("orphan_fts")

        store_check_dto = cls(
            integrity=integrity,
            live=live,
            missing_embeddings=missing_embeddings,
            missing_fts=missing_fts,
            ok=ok,
            orphan_embeddings=orphan_embeddings,
            orphan_fts=orphan_fts,
        )


        store_check_dto.additional_properties = d
        return store_check_dto

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
