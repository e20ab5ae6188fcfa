//! Integration tests of the vector index and the ONNX embedder.

mod exact;
mod onnx;
