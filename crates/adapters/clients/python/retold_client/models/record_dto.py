from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="RecordDto")



@_attrs_define
class RecordDto:
    """ One memory record.

        Attributes:
            confidence (float):
            content (str):
            created_at (datetime.datetime):
            creator_agent_id (str):
            id (str):
            origin (str): `memory` (written as a memory) or `turn` (a session turn kept verbatim; `source_ref`
                cites it).
            reinforcements (int):
            scope_id (str):
            scope_kind (str):
            source_kind (str):
            status (str): provisional, confirmed, superseded, expired or deleted.
            tags (list[str]):
            type_ (str): semantic, episodic or procedural.
            version (int):
            attribute (None | str | Unset):
            event_at (datetime.datetime | None | Unset):
            evidence (None | str | Unset):
            expires_at (datetime.datetime | None | Unset):
            last_reinforced_at (datetime.datetime | None | Unset):
            source_ref (None | str | Unset):
            speaker (None | str | Unset): Who said it, when the host named the speaker of the turn it keeps.
            subject (None | str | Unset): `<entity_id>/<attribute>`, derived.
            subject_entity_id (None | str | Unset):
            supersedes_id (None | str | Unset):
     """

    confidence: float
    content: str
    created_at: datetime.datetime
    creator_agent_id: str
    id: str
    origin: str
    reinforcements: int
    scope_id: str
    scope_kind: str
    source_kind: str
    status: str
    tags: list[str]
    type_: str
    version: int
    attribute: None | str | Unset = UNSET
    event_at: datetime.datetime | None | Unset = UNSET
    evidence: None | str | Unset = UNSET
    expires_at: datetime.datetime | None | Unset = UNSET
    last_reinforced_at: datetime.datetime | None | Unset = UNSET
    source_ref: None | str | Unset = UNSET
    speaker: None | str | Unset = UNSET
    subject: None | str | Unset = UNSET
    subject_entity_id: None | str | Unset = UNSET
    supersedes_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        confidence = self.confidence

        content = self.content

        created_at = self.created_at.isoformat()

        creator_agent_id = self.creator_agent_id

        id = self.id

        origin = self.origin

        reinforcements = self.reinforcements

        scope_id = self.scope_id

        scope_kind = self.scope_kind

        source_kind = self.source_kind

        status = self.status

        tags = self.tags



        type_ = self.type_

        version = self.version

        attribute: None | str | Unset
        if isinstance(self.attribute, Unset):
            attribute = UNSET
        else:
            attribute = self.attribute

        event_at: None | str | Unset
        if isinstance(self.event_at, Unset):
            event_at = UNSET
        elif isinstance(self.event_at, datetime.datetime):
            event_at = self.event_at.isoformat()
        else:
            event_at = self.event_at

        evidence: None | str | Unset
        if isinstance(self.evidence, Unset):
            evidence = UNSET
        else:
            evidence = self.evidence

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        last_reinforced_at: None | str | Unset
        if isinstance(self.last_reinforced_at, Unset):
            last_reinforced_at = UNSET
        elif isinstance(self.last_reinforced_at, datetime.datetime):
            last_reinforced_at = self.last_reinforced_at.isoformat()
        else:
            last_reinforced_at = self.last_reinforced_at

        source_ref: None | str | Unset
        if isinstance(self.source_ref, Unset):
            source_ref = UNSET
        else:
            source_ref = self.source_ref

        speaker: None | str | Unset
        if isinstance(self.speaker, Unset):
            speaker = UNSET
        else:
            speaker = self.speaker

        subject: None | str | Unset
        if isinstance(self.subject, Unset):
            subject = UNSET
        else:
            subject = self.subject

        subject_entity_id: None | str | Unset
        if isinstance(self.subject_entity_id, Unset):
            subject_entity_id = UNSET
        else:
            subject_entity_id = self.subject_entity_id

        supersedes_id: None | str | Unset
        if isinstance(self.supersedes_id, Unset):
            supersedes_id = UNSET
        else:
            supersedes_id = self.supersedes_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "confidence": confidence,
            "content": content,
            "created_at": created_at,
            "creator_agent_id": creator_agent_id,
            "id": id,
            "origin": origin,
            "reinforcements": reinforcements,
            "scope_id": scope_id,
            "scope_kind": scope_kind,
            "source_kind": source_kind,
            "status": status,
            "tags": tags,
            "type": type_,
            "version": version,
        })
        if attribute is not UNSET:
            field_dict["attribute"] = attribute
        if event_at is not UNSET:
            field_dict["event_at"] = event_at
        if evidence is not UNSET:
            field_dict["evidence"] = evidence
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if last_reinforced_at is not UNSET:
            field_dict["last_reinforced_at"] = last_reinforced_at
        if source_ref is not UNSET:
            field_dict["source_ref"] = source_ref
        if speaker is not UNSET:
            field_dict["speaker"] = speaker
        if subject is not UNSET:
            field_dict["subject"] = subject
        if subject_entity_id is not UNSET:
            field_dict["subject_entity_id"] = subject_entity_id
        if supersedes_id is not UNSET:
            field_dict["supersedes_id"] = supersedes_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        confidence = d.pop("confidence")

        content = d.pop("content")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        creator_agent_id = d.pop("creator_agent_id")

        id = d.pop("id")

        origin = d.pop("origin")

        reinforcements = d.pop("reinforcements")

        scope_id = d.pop("scope_id")

        scope_kind = d.pop("scope_kind")

        source_kind = d.pop("source_kind")

        status = d.pop("status")

        tags = cast(list[str], d.pop("tags"))


        type_ = d.pop("type")

        version = d.pop("version")

        def _parse_attribute(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        attribute = _parse_attribute(d.pop("attribute", UNSET))


        def _parse_event_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                event_at_type_0 = datetime.datetime.fromisoformat(data)



                return event_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        event_at = _parse_event_at(d.pop("event_at", UNSET))


        def _parse_evidence(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        evidence = _parse_evidence(d.pop("evidence", UNSET))


        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)



                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))


        def _parse_last_reinforced_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_reinforced_at_type_0 = datetime.datetime.fromisoformat(data)



                return last_reinforced_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_reinforced_at = _parse_last_reinforced_at(d.pop("last_reinforced_at", UNSET))


        def _parse_source_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_ref = _parse_source_ref(d.pop("source_ref", UNSET))


        def _parse_speaker(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        speaker = _parse_speaker(d.pop("speaker", UNSET))


        def _parse_subject(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        subject = _parse_subject(d.pop("subject", UNSET))


        def _parse_subject_entity_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        subject_entity_id = _parse_subject_entity_id(d.pop("subject_entity_id", UNSET))


        def _parse_supersedes_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        supersedes_id = _parse_supersedes_id(d.pop("supersedes_id", UNSET))


        record_dto = cls(
            confidence=confidence,
            content=content,
            created_at=created_at,
            creator_agent_id=creator_agent_id,
            id=id,
            origin=origin,
            reinforcements=reinforcements,
            scope_id=scope_id,
            scope_kind=scope_kind,
            source_kind=source_kind,
            status=status,
            tags=tags,
            type_=type_,
            version=version,
            attribute=attribute,
            event_at=event_at,
            evidence=evidence,
            expires_at=expires_at,
            last_reinforced_at=last_reinforced_at,
            source_ref=source_ref,
            speaker=speaker,
            subject=subject,
            subject_entity_id=subject_entity_id,
            supersedes_id=supersedes_id,
        )


        record_dto.additional_properties = d
        return record_dto

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
