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

/// Answers any operation can give, added to every one so the document says what is
/// answered: an internal error, and the store's disk failing or full (nothing was written).
struct ServerFaults;

impl Modify for ServerFaults {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let faults = [
            ("500", "internal"),
            ("503", "storage_unavailable (the store's disk failed), or the request timed out"),
            ("507", "storage_full (the store's disk is full; nothing was written, reads still work)"),
        ];
        for item in openapi.paths.paths.values_mut() {
            let operations =
                [&mut item.get, &mut item.post, &mut item.put, &mut item.delete, &mut item.patch];
            for operation in operations.into_iter().flatten() {
                for (status, description) in faults {
                    operation.responses.responses.entry(status.to_owned()).or_insert_with(|| {
                        ResponseBuilder::new()
                            .description(description)
                            .content(
                                "application/problem+json",
                                ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build(),
                            )
                            .build()
                            .into()
                    });
                }
            }
        }
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
    modifiers(&BearerAuth, &ServerFaults),
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
