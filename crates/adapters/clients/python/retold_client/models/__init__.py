""" Contains all the data models used in inputs/outputs """

from .alias_body import AliasBody
from .channel_match_dto import ChannelMatchDto
from .conflict_dto import ConflictDto
from .conflict_list_dto import ConflictListDto
from .conflict_pair_dto import ConflictPairDto
from .count_dto import CountDto
from .decision_body import DecisionBody
from .decision_dto import DecisionDto
from .decision_list_dto import DecisionListDto
from .decision_outcome_dto import DecisionOutcomeDto
from .decision_timings_dto import DecisionTimingsDto
from .empty_body import EmptyBody
from .end_session_body import EndSessionBody
from .entity_body import EntityBody
from .entity_body_kind import EntityBodyKind
from .entity_dto import EntityDto
from .entity_ref_dto import EntityRefDto
from .entity_ref_dto_kind_type_1 import EntityRefDtoKindType1
from .entity_ref_dto_kind_type_2_type_1 import EntityRefDtoKindType2Type1
from .entity_ref_dto_kind_type_3_type_1 import EntityRefDtoKindType3Type1
from .erased_dto import ErasedDto
from .erasure_body import ErasureBody
from .erasure_dto import ErasureDto
from .event_dto import EventDto
from .event_dto_details import EventDtoDetails
from .event_list_dto import EventListDto
from .expiry_body import ExpiryBody
from .expiry_dto import ExpiryDto
from .extraction_candidate_dto import ExtractionCandidateDto
from .extraction_report_dto import ExtractionReportDto
from .extraction_run_body import ExtractionRunBody
from .extraction_run_dto import ExtractionRunDto
from .extraction_write_dto import ExtractionWriteDto
from .flag_dto import FlagDto
from .forget_body import ForgetBody
from .gap_dto import GapDto
from .get_body import GetBody
from .get_response_dto import GetResponseDto
from .grant_body import GrantBody
from .grant_dto import GrantDto
from .grant_list_dto import GrantListDto
from .host_key_body import HostKeyBody
from .host_key_dto import HostKeyDto
from .import_item_dto import ImportItemDto
from .import_response_dto import ImportResponseDto
from .import_response_dto_counts import ImportResponseDtoCounts
from .inventory_dto import InventoryDto
from .link_dto import LinkDto
from .matches_dto import MatchesDto
from .merge_body import MergeBody
from .ops_status_dto import OpsStatusDto
from .passage_dto import PassageDto
from .principal_body import PrincipalBody
from .principal_dto import PrincipalDto
from .problem import Problem
from .profile_dto import ProfileDto
from .profile_entry_dto import ProfileEntryDto
from .ready_dto import ReadyDto
from .record_detail_dto import RecordDetailDto
from .record_dto import RecordDto
from .record_page_dto import RecordPageDto
from .refused_dto import RefusedDto
from .resolution_dto import ResolutionDto
from .resolve_body import ResolveBody
from .resolve_body_action import ResolveBodyAction
from .restored_dto import RestoredDto
from .retention_body import RetentionBody
from .retention_dto import RetentionDto
from .review_dto import ReviewDto
from .review_list_dto import ReviewListDto
from .revise_action_dto import ReviseActionDto
from .revise_body import ReviseBody
from .revise_response_dto import ReviseResponseDto
from .search_body import SearchBody
from .search_body_origins_type_0_item import SearchBodyOriginsType0Item
from .search_body_types_type_0_item import SearchBodyTypesType0Item
from .search_list_dto import SearchListDto
from .search_response_dto import SearchResponseDto
from .search_result_dto import SearchResultDto
from .search_summary_dto import SearchSummaryDto
from .search_trace_response_200 import SearchTraceResponse200
from .session_body import SessionBody
from .session_dto import SessionDto
from .session_list_dto import SessionListDto
from .session_summary_dto import SessionSummaryDto
from .snapshot_dto import SnapshotDto
from .snapshot_file_dto import SnapshotFileDto
from .snapshot_holding_dto import SnapshotHoldingDto
from .store_check_dto import StoreCheckDto
from .transcript_dto import TranscriptDto
from .transcript_turn_dto import TranscriptTurnDto
from .turn_body import TurnBody
from .turn_body_role import TurnBodyRole
from .turn_dto import TurnDto
from .write_body import WriteBody
from .write_body_source_kind import WriteBodySourceKind
from .write_body_type import WriteBodyType
from .write_response_dto import WriteResponseDto

__all__ = (
    "AliasBody",
    "ChannelMatchDto",
    "ConflictDto",
    "ConflictListDto",
    "ConflictPairDto",
    "CountDto",
    "DecisionBody",
    "DecisionDto",
    "DecisionListDto",
    "DecisionOutcomeDto",
    "DecisionTimingsDto",
    "EmptyBody",
    "EndSessionBody",
    "EntityBody",
    "EntityBodyKind",
    "EntityDto",
    "EntityRefDto",
    "EntityRefDtoKindType1",
    "EntityRefDtoKindType2Type1",
    "EntityRefDtoKindType3Type1",
    "ErasedDto",
    "ErasureBody",
    "ErasureDto",
    "EventDto",
    "EventDtoDetails",
    "EventListDto",
    "ExpiryBody",
    "ExpiryDto",
    "ExtractionCandidateDto",
    "ExtractionReportDto",
    "ExtractionRunBody",
    "ExtractionRunDto",
    "ExtractionWriteDto",
    "FlagDto",
    "ForgetBody",
    "GapDto",
    "GetBody",
    "GetResponseDto",
    "GrantBody",
    "GrantDto",
    "GrantListDto",
    "HostKeyBody",
    "HostKeyDto",
    "ImportItemDto",
    "ImportResponseDto",
    "ImportResponseDtoCounts",
    "InventoryDto",
    "LinkDto",
    "MatchesDto",
    "MergeBody",
    "OpsStatusDto",
    "PassageDto",
    "PrincipalBody",
    "PrincipalDto",
    "Problem",
    "ProfileDto",
    "ProfileEntryDto",
    "ReadyDto",
    "RecordDetailDto",
    "RecordDto",
    "RecordPageDto",
    "RefusedDto",
    "ResolutionDto",
    "ResolveBody",
    "ResolveBodyAction",
    "RestoredDto",
    "RetentionBody",
    "RetentionDto",
    "ReviewDto",
    "ReviewListDto",
    "ReviseActionDto",
    "ReviseBody",
    "ReviseResponseDto",
    "SearchBody",
    "SearchBodyOriginsType0Item",
    "SearchBodyTypesType0Item",
    "SearchListDto",
    "SearchResponseDto",
    "SearchResultDto",
    "SearchSummaryDto",
    "SearchTraceResponse200",
    "SessionBody",
    "SessionDto",
    "SessionListDto",
    "SessionSummaryDto",
    "SnapshotDto",
    "SnapshotFileDto",
    "SnapshotHoldingDto",
    "StoreCheckDto",
    "TranscriptDto",
    "TranscriptTurnDto",
    "TurnBody",
    "TurnBodyRole",
    "TurnDto",
    "WriteBody",
    "WriteBodySourceKind",
    "WriteBodyType",
    "WriteResponseDto",
)
