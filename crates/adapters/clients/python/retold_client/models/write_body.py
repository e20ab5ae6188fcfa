from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.write_body_source_kind import WriteBodySourceKind
from ..models.write_body_type import WriteBodyType
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.entity_ref_dto import EntityRefDto
  from ..models.principal_dto import PrincipalDto





T = TypeVar("T", bound="WriteBody")



@_attrs_define
class WriteBody:
    """ `memory_write` request.

        Attributes:
            content (str):
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            scope (str): Where the memory belongs: `user:<id>`, `project:<id>`, `org:<id>`, `agent:<id>` or
                `agent:<agent>/<user>`.
            source_kind (WriteBodySourceKind): user_statement, system, tool_result, session_summary or agent_inference.
            type_ (WriteBodyType): semantic, episodic or procedural.
            attribute (None | str | Unset): With `subject`: the current-fact attribute, e.g. `explanation_style`.
            context (None | str | Unset): What the memory was said in, e.g. the conversation turn before it. Embedded with
                the
                content, so that a reply ("Yes, last week!") is found by what it answers; kept with the
                record (`memory_get` shows it) and never returned in search results.
            event_at (datetime.datetime | None | Unset): When it happened (episodic) or applies from; defaults to now.
            evidence (None | str | Unset): Supporting text, quoted verbatim from the cited turn for user and tool claims.
            expires_at (datetime.datetime | None | Unset): When the memory stops being true (must be in the future); an
                agent inference keeps
                its provisional expiry when that comes sooner.
            mentions (list[EntityRefDto] | Unset): Other entities the memory mentions.
            source_ref (None | str | Unset): `session:<id><turn:N>`, `tool:<name>`, …
            subject (EntityRefDto | None | Unset):
            tags (list[str] | Unset):
     """

    content: str
    principal: PrincipalDto
    scope: str
    source_kind: WriteBodySourceKind
    type_: WriteBodyType
    attribute: None | str | Unset = UNSET
    context: None | str | Unset = UNSET
    event_at: datetime.datetime | None | Unset = UNSET
    evidence: None | str | Unset = UNSET
    expires_at: datetime.datetime | None | Unset = UNSET
    mentions: list[EntityRefDto] | Unset = UNSET
    source_ref: None | str | Unset = UNSET
    subject: EntityRefDto | None | Unset = UNSET
    tags: list[str] | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.entity_ref_dto import EntityRefDto # noqa: PLC0415
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        content = self.content

        principal = self.principal.to_dict()

        scope = self.scope

        source_kind = self.source_kind.value

        type_ = self.type_.value

        attribute: None | str | Unset
        if isinstance(self.attribute, Unset):
            attribute = UNSET
        else:
            attribute = self.attribute

        context: None | str | Unset
        if isinstance(self.context, Unset):
            context = UNSET
        else:
            context = self.context

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

        mentions: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.mentions, Unset):
            mentions = []
            for mentions_item_data in self.mentions:
                mentions_item = mentions_item_data.to_dict()
                mentions.append(mentions_item)



        source_ref: None | str | Unset
        if isinstance(self.source_ref, Unset):
            source_ref = UNSET
        else:
            source_ref = self.source_ref

        subject: dict[str, Any] | None | Unset
        if isinstance(self.subject, Unset):
            subject = UNSET
        elif isinstance(self.subject, EntityRefDto):
            subject = self.subject.to_dict()
        else:
            subject = self.subject

        tags: list[str] | Unset = UNSET
        if not isinstance(self.tags, Unset):
            tags = self.tags




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "content": content,
            "principal": principal,
            "scope": scope,
            "source_kind": source_kind,
            "type": type_,
        })
        if attribute is not UNSET:
            field_dict["attribute"] = attribute
        if context is not UNSET:
            field_dict["context"] = context
        if event_at is not UNSET:
            field_dict["event_at"] = event_at
        if evidence is not UNSET:
            field_dict["evidence"] = evidence
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if mentions is not UNSET:
            field_dict["mentions"] = mentions
        if source_ref is not UNSET:
            field_dict["source_ref"] = source_ref
        if subject is not UNSET:
            field_dict["subject"] = subject
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.entity_ref_dto import EntityRefDto # noqa: PLC0415
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        content = d.pop("content")

        principal = PrincipalDto.from_dict(d.pop("principal"))




        scope = d.pop("scope")

        source_kind = WriteBodySourceKind(d.pop("source_kind"))




        type_ = WriteBodyType(d.pop("type"))




        def _parse_attribute(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        attribute = _parse_attribute(d.pop("attribute", UNSET))


        def _parse_context(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        context = _parse_context(d.pop("context", UNSET))


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


        _mentions = d.pop("mentions", UNSET)
        mentions: list[EntityRefDto] | Unset = UNSET
        if _mentions is not UNSET:
            mentions = []
            for mentions_item_data in _mentions:
                mentions_item = EntityRefDto.from_dict(mentions_item_data)



                mentions.append(mentions_item)


        def _parse_source_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_ref = _parse_source_ref(d.pop("source_ref", UNSET))


        def _parse_subject(data: object) -> EntityRefDto | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                subject_type_0 = EntityRefDto.from_dict(data)



                return subject_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EntityRefDto | None | Unset, data)

        subject = _parse_subject(d.pop("subject", UNSET))


        tags = cast(list[str], d.pop("tags", UNSET))


        write_body = cls(
            content=content,
            principal=principal,
            scope=scope,
            source_kind=source_kind,
            type_=type_,
            attribute=attribute,
            context=context,
            event_at=event_at,
            evidence=evidence,
            expires_at=expires_at,
            mentions=mentions,
            source_ref=source_ref,
            subject=subject,
            tags=tags,
        )

        return write_body

