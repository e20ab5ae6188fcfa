//! Spans are exported over OTLP/HTTP when an endpoint is configured.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

#[test]
fn spans_reach_a_configured_otlp_endpoint() {
    // The test itself makes HTTPS-capable clients; alone in its process nothing else installs the provider.
    retold_hosted::install_tls_provider();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let receiver = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request_line = String::new();
        reader.read_line(&mut request_line).unwrap();
        let mut content_type = String::new();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header.trim().is_empty() {
                break;
            }
            let lower = header.to_lowercase();
            if let Some(v) = lower.strip_prefix("content-type:") {
                content_type = v.trim().to_owned();
            }
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        std::io::Read::read_exact(&mut reader, &mut body).unwrap();
        stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").unwrap();
        (request_line, content_type, body)
    });
    let mut settings = crate::settings(std::path::Path::new("/tmp"), &[]).telemetry;
    settings.otlp_endpoint = format!("http://127.0.0.1:{port}/v1/traces");
    settings.log_filter = "info".into();
    let guard = retold_http::init_telemetry(&settings).unwrap();
    tracing::info_span!("retrieve.dense").in_scope(|| tracing::info!("inside a stage"));
    drop(guard); // flushes the batch exporter
    let (request_line, content_type, body) = receiver.join().unwrap();
    assert!(request_line.starts_with("POST /v1/traces"), "{request_line}");
    assert_eq!(content_type, "application/x-protobuf");
    assert!(
        body.windows(b"retrieve.dense".len()).any(|w| w == b"retrieve.dense"),
        "the span name is in the payload"
    );
}
