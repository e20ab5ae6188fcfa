//! The OpenAPI 3.1 document, generated from the handlers and DTOs.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::dto;
use crate::error::Problem;
use crate::routes::{admin, sessions, tools};

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("opaque key").build(),
            ),
        );
    }
}

/// Retold's REST API.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Retold",
        description = "Long-term memory for AI agents: the five memory tools, sessions and administration.",
        license(name = "Apache-2.0")
    ),
    paths(
        tools::memory_search, tools::memory_get, tools::memory_write, tools::memory_revise, tools::memory_forget,
        sessions::session_start, sessions::session_append_turn, sessions::session_end,
        admin::grant_create, admin::grant_list, admin::grant_revoke,
        admin::entity_create, admin::entity_add_alias, admin::entity_merge,
        admin::host_key_create, admin::record_events, admin::search_trace,
        admin::session_events, admin::extraction_run,
        crate::app::ready,
    ),
    components(schemas(Problem, dto::PrincipalDto)),
    modifiers(&BearerAuth),
    tags(
        (name = "memory tools", description = "What agents call, with a host key asserting the principal"),
        (name = "sessions", description = "The session buffer the extractor and evidence checks read"),
        (name = "admin", description = "Grants, entities, keys and inspection, with the admin key"),
        (name = "operations", description = "Health and readiness"),
    )
)]
#[derive(Debug)]
pub struct ApiDoc;

/// The document as pretty JSON (what `docs/openapi.json` holds).
pub fn openapi_json() -> String {
    ApiDoc::openapi().to_pretty_json().expect("the OpenAPI document serialises")
}
