//! Integration tests of the vector index and the ONNX embedder.

mod boot;
mod eligibility;
mod exact;
mod onnx;
mod reranker;
