from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.conflict_dto import ConflictDto
  from ..models.link_dto import LinkDto
  from ..models.record_dto import RecordDto





T = TypeVar("T", bound="RecordDetailDto")



@_attrs_define
class RecordDetailDto:
    """ A record with its links, conflicts and supersession chain.

        Attributes:
            conflicts (list[ConflictDto]):
            links (list[LinkDto]):
            record (RecordDto): One memory record.
            superseded_by (list[str]): Newer records that replaced this one.
            supersedes (list[RecordDto]): Older records this one replaced, newest first.
            context (None | str | Unset): What the record was said in, as written (embedded with the content; search results
                leave it out).
     """

    conflicts: list[ConflictDto]
    links: list[LinkDto]
    record: RecordDto
    superseded_by: list[str]
    supersedes: list[RecordDto]
    context: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.conflict_dto import ConflictDto # noqa: PLC0415
        from ..models.link_dto import LinkDto # noqa: PLC0415
        from ..models.record_dto import RecordDto # noqa: PLC0415
        conflicts = []
        for conflicts_item_data in self.conflicts:
            conflicts_item = conflicts_item_data.to_dict()
            conflicts.append(conflicts_item)



        links = []
        for links_item_data in self.links:
            links_item = links_item_data.to_dict()
            links.append(links_item)



        record = self.record.to_dict()

        superseded_by = self.superseded_by



        supersedes = []
        for supersedes_item_data in self.supersedes:
            supersedes_item = supersedes_item_data.to_dict()
            supersedes.append(supersedes_item)



        context: None | str | Unset
        if isinstance(self.context, Unset):
            context = UNSET
        else:
            context = self.context


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "conflicts": conflicts,
            "links": links,
            "record": record,
            "superseded_by": superseded_by,
            "supersedes": supersedes,
        })
        if context is not UNSET:
            field_dict["context"] = context

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.conflict_dto import ConflictDto # noqa: PLC0415
        from ..models.link_dto import LinkDto # noqa: PLC0415
        from ..models.record_dto import RecordDto # noqa: PLC0415
        d = dict(src_dict)
        conflicts = []
        _conflicts = d.pop("conflicts")
        for conflicts_item_data in (_conflicts):
            conflicts_item = ConflictDto.from_dict(conflicts_item_data)



            conflicts.append(conflicts_item)


        links = []
        _links = d.pop("links")
        for links_item_data in (_links):
            links_item = LinkDto.from_dict(links_item_data)



            links.append(links_item)


        record = RecordDto.from_dict(d.pop("record"))




        superseded_by = cast(list[str], d.pop("superseded_by"))


        supersedes = []
        _supersedes = d.pop("supersedes")
        for supersedes_item_data in (_supersedes):
            supersedes_item = RecordDto.from_dict(supersedes_item_data)



            supersedes.append(supersedes_item)


        def _parse_context(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        context = _parse_context(d.pop("context", UNSET))


        record_detail_dto = cls(
            conflicts=conflicts,
            links=links,
            record=record,
            superseded_by=superseded_by,
            supersedes=supersedes,
            context=context,
        )


        record_detail_dto.additional_properties = d
        return record_detail_dto

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
