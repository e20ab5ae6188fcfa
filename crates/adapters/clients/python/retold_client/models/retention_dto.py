from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="RetentionDto")



@_attrs_define
class RetentionDto:
    """ The outcome of a retention run.

        Attributes:
            before (datetime.datetime): Turns created before this instant were in scope (now −
                operations.transcript_retention_days).
            dry_run (bool):
            force (bool):
            search_traces (int): Search traces deleted (or, on a dry run, that would be).
            sessions (int): Sessions that lost (or would lose) turns, and the turns.
            skipped_sessions (int): Sessions with old turns left alone because their extraction has not run.
            traces_before (datetime.datetime): Search traces written before this instant were in scope (now −
                operations.search_trace_retention_days).
            turns (int):
     """

    before: datetime.datetime
    dry_run: bool
    force: bool
    search_traces: int
    sessions: int
    skipped_sessions: int
    traces_before: datetime.datetime
    turns: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        before = self.before.isoformat()

        dry_run = self.dry_run

        force = self.force

        search_traces = self.search_traces

        sessions = self.sessions

        skipped_sessions = self.skipped_sessions

        traces_before = self.traces_before.isoformat()

        turns = self.turns


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "before": before,
            "dry_run": dry_run,
            "force": force,
            "search_traces": search_traces,
            "sessions": sessions,
            "skipped_sessions": skipped_sessions,
            "traces_before": traces_before,
            "turns": turns,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        before = datetime.datetime.fromisoformat(d.pop("before"))




        dry_run = d.pop("dry_run")

        force = d.pop("force")

        search_traces = d.pop("search_traces")

        sessions = d.pop("sessions")

        skipped_sessions = d.pop("skipped_sessions")

        traces_before = datetime.datetime.fromisoformat(d.pop("traces_before"))




        turns = d.pop("turns")

        retention_dto = cls(
            before=before,
            dry_run=dry_run,
            force=force,
            search_traces=search_traces,
            sessions=sessions,
            skipped_sessions=skipped_sessions,
            traces_before=traces_before,
            turns=turns,
        )


        retention_dto.additional_properties = d
        return retention_dto

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
