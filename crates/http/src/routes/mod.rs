//! Route handlers: thin, converting DTOs to domain calls and back.

pub(crate) mod admin;
pub(crate) mod sessions;
pub(crate) mod tools;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;
use validator::Validate;

use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// A JSON body that is parsed and validated, with problem+json errors naming the field.
#[derive(Debug)]
pub(crate) struct Valid<T>(pub T);

impl<T> FromRequest<AppState> for Valid<T>
where
    T: DeserializeOwned + Validate,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let axum::Json(value) =
            axum::Json::<T>::from_request(request, state).await.map_err(|rejection| match rejection {
                JsonRejection::JsonDataError(e) => {
                    ApiError::validation(field_of(&e.body_text()), e.body_text())
                }
                JsonRejection::JsonSyntaxError(e) => ApiError::validation("body", e.body_text()),
                JsonRejection::MissingJsonContentType(e) => {
                    ApiError::validation("content-type", e.body_text())
                }
                JsonRejection::BytesRejection(e)
                    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE =>
                {
                    ApiError::new(ErrorCode::PayloadTooLarge, "the request body is too large")
                }
                other => ApiError::validation("body", other.body_text()),
            })?;
        value.validate()?;
        Ok(Self(value))
    }
}

/// serde's messages say `… at line 1 column 5` and name unknown or missing fields in
/// backticks; take the first backticked name as the field.
fn field_of(message: &str) -> String {
    message.split('`').nth(1).map(str::to_owned).unwrap_or_else(|| "body".to_owned())
}
