from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.search_body_origins_type_0_item import SearchBodyOriginsType0Item
from ..models.search_body_types_type_0_item import SearchBodyTypesType0Item
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.principal_dto import PrincipalDto





T = TypeVar("T", bound="SearchBody")



@_attrs_define
class SearchBody:
    """ `memory_search` request.

        Attributes:
            principal (PrincipalDto): The principal of the current agent run, asserted by the host.
            query (str): What to look for, as the agent would ask it. With `retrieval.pronouns` on (the
                default), a question in the first person ("my", "I") is read as the user's, about the
                principal's user; one in the second ("you") as about the principal's agent.
            context (list[str] | Unset): Latest user and assistant turns, for query rewriting.
            event_from (datetime.datetime | None | Unset): Only records whose event time is at or after this instant.
            event_to (datetime.datetime | None | Unset): Only records whose event time is before this instant.
            include_conflicts (bool | Unset): Also return provisional records on the lower-trust side of a conflict (seed
                section 7:
                the confirmed record is the normal result); each is marked in its explanation.
            include_current_session (bool | Unset): Also the turn records of the session `principal.session_id` names. Off
                by default: a
                search made inside a session leaves out the conversation its caller is having.
            include_history (bool | Unset): Also return superseded records.
            limit (int | None | Unset): Most results to return (default from configuration, capped by
                `retrieval.max_limit`).
            origins (list[SearchBodyOriginsType0Item] | None | Unset): Only records of these origins: `memory` (written as a
                memory: `memory_write`,
                extraction, a session summary) or `turn` (a session turn kept verbatim by turn
                memory). Absent means both; `["memory"]` asks for distilled records only.
            token_budget (int | None | Unset): Most estimated tokens of what the results show (default
                `retrieval.token_budget`): each
                result shows its content, or a long record's `passage`; results are kept in rank order
                while that fits, and the first is returned even if it alone is larger. Any host may ask
                for more than the configured default.
            types (list[SearchBodyTypesType0Item] | None | Unset): Only these memory types: semantic, episodic, procedural.
     """

    principal: PrincipalDto
    query: str
    context: list[str] | Unset = UNSET
    event_from: datetime.datetime | None | Unset = UNSET
    event_to: datetime.datetime | None | Unset = UNSET
    include_conflicts: bool | Unset = UNSET
    include_current_session: bool | Unset = UNSET
    include_history: bool | Unset = UNSET
    limit: int | None | Unset = UNSET
    origins: list[SearchBodyOriginsType0Item] | None | Unset = UNSET
    token_budget: int | None | Unset = UNSET
    types: list[SearchBodyTypesType0Item] | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        principal = self.principal.to_dict()

        query = self.query

        context: list[str] | Unset = UNSET
        if not isinstance(self.context, Unset):
            context = self.context



        event_from: None | str | Unset
        if isinstance(self.event_from, Unset):
            event_from = UNSET
        elif isinstance(self.event_from, datetime.datetime):
            event_from = self.event_from.isoformat()
        else:
            event_from = self.event_from

        event_to: None | str | Unset
        if isinstance(self.event_to, Unset):
            event_to = UNSET
        elif isinstance(self.event_to, datetime.datetime):
            event_to = self.event_to.isoformat()
        else:
            event_to = self.event_to

        include_conflicts = self.include_conflicts

        include_current_session = self.include_current_session

        include_history = self.include_history

        limit: int | None | Unset
        if isinstance(self.limit, Unset):
            limit = UNSET
        else:
            limit = self.limit

        origins: list[str] | None | Unset
        if isinstance(self.origins, Unset):
            origins = UNSET
        elif isinstance(self.origins, list):
            origins = []
            for origins_type_0_item_data in self.origins:
                origins_type_0_item = origins_type_0_item_data.value
                origins.append(origins_type_0_item)


        else:
            origins = self.origins

        token_budget: int | None | Unset
        if isinstance(self.token_budget, Unset):
            token_budget = UNSET
        else:
            token_budget = self.token_budget

        types: list[str] | None | Unset
        if isinstance(self.types, Unset):
            types = UNSET
        elif isinstance(self.types, list):
            types = []
            for types_type_0_item_data in self.types:
                types_type_0_item = types_type_0_item_data.value
                types.append(types_type_0_item)


        else:
            types = self.types


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "principal": principal,
            "query": query,
        })
        if context is not UNSET:
            field_dict["context"] = context
        if event_from is not UNSET:
            field_dict["event_from"] = event_from
        if event_to is not UNSET:
            field_dict["event_to"] = event_to
        if include_conflicts is not UNSET:
            field_dict["include_conflicts"] = include_conflicts
        if include_current_session is not UNSET:
            field_dict["include_current_session"] = include_current_session
        if include_history is not UNSET:
            field_dict["include_history"] = include_history
        if limit is not UNSET:
            field_dict["limit"] = limit
        if origins is not UNSET:
            field_dict["origins"] = origins
        if token_budget is not UNSET:
            field_dict["token_budget"] = token_budget
        if types is not UNSET:
            field_dict["types"] = types

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.principal_dto import PrincipalDto # noqa: PLC0415
        d = dict(src_dict)
        principal = PrincipalDto.from_dict(d.pop("principal"))




        query = d.pop("query")

        context = cast(list[str], d.pop("context", UNSET))


        def _parse_event_from(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                event_from_type_0 = datetime.datetime.fromisoformat(data)



                return event_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        event_from = _parse_event_from(d.pop("event_from", UNSET))


        def _parse_event_to(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                event_to_type_0 = datetime.datetime.fromisoformat(data)



                return event_to_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        event_to = _parse_event_to(d.pop("event_to", UNSET))


        include_conflicts = d.pop("include_conflicts", UNSET)

        include_current_session = d.pop("include_current_session", UNSET)

        include_history = d.pop("include_history", UNSET)

        def _parse_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        limit = _parse_limit(d.pop("limit", UNSET))


        def _parse_origins(data: object) -> list[SearchBodyOriginsType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                origins_type_0 = []
                _origins_type_0 = data
                for origins_type_0_item_data in (_origins_type_0):
                    origins_type_0_item = SearchBodyOriginsType0Item(origins_type_0_item_data)



                    origins_type_0.append(origins_type_0_item)

                return origins_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[SearchBodyOriginsType0Item] | None | Unset, data)

        origins = _parse_origins(d.pop("origins", UNSET))


        def _parse_token_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        token_budget = _parse_token_budget(d.pop("token_budget", UNSET))


        def _parse_types(data: object) -> list[SearchBodyTypesType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                types_type_0 = []
                _types_type_0 = data
                for types_type_0_item_data in (_types_type_0):
                    types_type_0_item = SearchBodyTypesType0Item(types_type_0_item_data)



                    types_type_0.append(types_type_0_item)

                return types_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[SearchBodyTypesType0Item] | None | Unset, data)

        types = _parse_types(d.pop("types", UNSET))


        search_body = cls(
            principal=principal,
            query=query,
            context=context,
            event_from=event_from,
            event_to=event_to,
            include_conflicts=include_conflicts,
            include_current_session=include_current_session,
            include_history=include_history,
            limit=limit,
            origins=origins,
            token_budget=token_budget,
            types=types,
        )

        return search_body

