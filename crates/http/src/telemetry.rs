//! Logs and traces: log lines through `tracing` on stderr (human-readable text on a terminal,
//! JSON otherwise, or as `telemetry.log_format` says), and spans exported over OTLP/HTTP when
//! `telemetry.otlp_endpoint` is set (no exporter otherwise).

use std::io::IsTerminal;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::serve_error::ServeError;
use crate::settings::TelemetrySettings;

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
pub fn init(settings: &TelemetrySettings) -> Result<TelemetryGuard, ServeError> {
    let filter = EnvFilter::try_new(&settings.log_filter)?;
    let terminal = std::io::stderr().is_terminal();
    let fmt = if settings.log_format.is_json(terminal) {
        tracing_subscriber::fmt::layer().json().with_current_span(true).with_writer(std::io::stderr).boxed()
    } else {
        tracing_subscriber::fmt::layer().with_ansi(terminal).with_writer(std::io::stderr).boxed()
    };
    let (otel, provider) = if settings.otlp_endpoint.is_empty() {
        (None, None)
    } else {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(settings.otlp_endpoint.clone())
            .build()?;
        let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).build();
        let tracer = provider.tracer("retold");
        (Some(tracing_opentelemetry::layer().with_tracer(tracer)), Some(provider))
    };
    tracing_subscriber::registry().with(filter).with(fmt).with(otel).try_init()?;
    Ok(TelemetryGuard(provider))
}
