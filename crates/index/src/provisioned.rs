//! Where `cargo xtask setup` puts the run-time files. The xtask uses the same rule.

use std::path::PathBuf;

/// The provisioning cache: `$RETOLD_CACHE_DIR`, else `$XDG_CACHE_HOME/retold`, else
/// `~/.cache/retold`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RETOLD_CACHE_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("retold");
    }
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".")).join(".cache/retold")
}

/// The default model directory (all-MiniLM-L6-v2, int8).
pub fn default_model_dir() -> PathBuf {
    cache_dir().join("models/all-minilm-l6-v2-int8")
}

/// The default ONNX Runtime library.
pub fn default_runtime_library() -> PathBuf {
    cache_dir().join("onnxruntime/1.31.1/libonnxruntime.so.1.31.1")
}
