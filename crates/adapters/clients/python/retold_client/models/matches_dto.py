from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.channel_match_dto import ChannelMatchDto





T = TypeVar("T", bound="MatchesDto")



@_attrs_define
class MatchesDto:
    """ Which channels found a result.

        Attributes:
            dense (ChannelMatchDto | None | Unset):
            entity (ChannelMatchDto | None | Unset):
            lexical (ChannelMatchDto | None | Unset):
            sentence (ChannelMatchDto | None | Unset):
            window (ChannelMatchDto | None | Unset):
     """

    dense: ChannelMatchDto | None | Unset = UNSET
    entity: ChannelMatchDto | None | Unset = UNSET
    lexical: ChannelMatchDto | None | Unset = UNSET
    sentence: ChannelMatchDto | None | Unset = UNSET
    window: ChannelMatchDto | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.channel_match_dto import ChannelMatchDto # noqa: PLC0415
        dense: dict[str, Any] | None | Unset
        if isinstance(self.dense, Unset):
            dense = UNSET
        elif isinstance(self.dense, ChannelMatchDto):
            dense = self.dense.to_dict()
        else:
            dense = self.dense

        entity: dict[str, Any] | None | Unset
        if isinstance(self.entity, Unset):
            entity = UNSET
        elif isinstance(self.entity, ChannelMatchDto):
            entity = self.entity.to_dict()
        else:
            entity = self.entity

        lexical: dict[str, Any] | None | Unset
        if isinstance(self.lexical, Unset):
            lexical = UNSET
        elif isinstance(self.lexical, ChannelMatchDto):
            lexical = self.lexical.to_dict()
        else:
            lexical = self.lexical

        sentence: dict[str, Any] | None | Unset
        if isinstance(self.sentence, Unset):
            sentence = UNSET
        elif isinstance(self.sentence, ChannelMatchDto):
            sentence = self.sentence.to_dict()
        else:
            sentence = self.sentence

        window: dict[str, Any] | None | Unset
        if isinstance(self.window, Unset):
            window = UNSET
        elif isinstance(self.window, ChannelMatchDto):
            window = self.window.to_dict()
        else:
            window = self.window


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if dense is not UNSET:
            field_dict["dense"] = dense
        if entity is not UNSET:
            field_dict["entity"] = entity
        if lexical is not UNSET:
            field_dict["lexical"] = lexical
        if sentence is not UNSET:
            field_dict["sentence"] = sentence
        if window is not UNSET:
            field_dict["window"] = window

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.channel_match_dto import ChannelMatchDto # noqa: PLC0415
        d = dict(src_dict)
        def _parse_dense(data: object) -> ChannelMatchDto | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                dense_type_0 = ChannelMatchDto.from_dict(data)



                return dense_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChannelMatchDto | None | Unset, data)

        dense = _parse_dense(d.pop("dense", UNSET))


        def _parse_entity(data: object) -> ChannelMatchDto | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                entity_type_0 = ChannelMatchDto.from_dict(data)



                return entity_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChannelMatchDto | None | Unset, data)

        entity = _parse_entity(d.pop("entity", UNSET))


        def _parse_lexical(data: object) -> ChannelMatchDto | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                lexical_type_0 = ChannelMatchDto.from_dict(data)



                return lexical_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChannelMatchDto | None | Unset, data)

        lexical = _parse_lexical(d.pop("lexical", UNSET))


        def _parse_sentence(data: object) -> ChannelMatchDto | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                sentence_type_0 = ChannelMatchDto.from_dict(data)



                return sentence_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChannelMatchDto | None | Unset, data)

        sentence = _parse_sentence(d.pop("sentence", UNSET))


        def _parse_window(data: object) -> ChannelMatchDto | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                window_type_0 = ChannelMatchDto.from_dict(data)



                return window_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChannelMatchDto | None | Unset, data)

        window = _parse_window(d.pop("window", UNSET))


        matches_dto = cls(
            dense=dense,
            entity=entity,
            lexical=lexical,
            sentence=sentence,
            window=window,
        )


        matches_dto.additional_properties = d
        return matches_dto

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
