//! Logs and traces: JSON (or pretty) logs through `tracing`, and spans exported over OTLP/HTTP
//! when `telemetry.otlp_endpoint` is set (no exporter otherwise).

use anyhow::{Context, Result};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::settings::{LogFormat, TelemetrySettings};

/// Flushes and stops the exporter when dropped.
#[derive(Debug)]
pub struct TelemetryGuard(Option<SdkTracerProvider>);

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.0.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("telemetry: shutting down the exporter failed: {error}");
        }
    }
}

/// Install the global subscriber.
pub fn init(settings: &TelemetrySettings) -> Result<TelemetryGuard> {
    let filter = EnvFilter::try_new(&settings.log_filter).context("telemetry.log_filter")?;
    let fmt = match settings.log_format {
        LogFormat::Json => tracing_subscriber::fmt::layer().json().with_current_span(true).boxed(),
        LogFormat::Pretty => tracing_subscriber::fmt::layer().boxed(),
    };
    let (otel, provider) = if settings.otlp_endpoint.is_empty() {
        (None, None)
    } else {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(settings.otlp_endpoint.clone())
            .build()
            .context("telemetry.otlp_endpoint")?;
        let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).build();
        let tracer = provider.tracer("retold");
        (Some(tracing_opentelemetry::layer().with_tracer(tracer)), Some(provider))
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt)
        .with(otel)
        .try_init()
        .context("installing the log subscriber")?;
    Ok(TelemetryGuard(provider))
}
