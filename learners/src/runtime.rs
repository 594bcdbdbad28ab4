//! ONNX Runtime at run time: the library from `ORT_DYLIB_PATH`, CUDA when it loads and CPU
//! otherwise (said either way), model checks, and batches padded per batch.

use super::features::Feature;
use ort::ep::ExecutionProvider;
use ort::session::Session;
use ort::value::Tensor;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use store::error::{Error, Result};

static ENV: OnceLock<std::result::Result<ort::environment::Environment, String>> = OnceLock::new();

/// The site-packages folder of the Python environment `.ci/setup` makes
/// (`$CLUES_VENV`, default `~/.cache/clues-lab/venv`).
pub fn site_packages() -> Option<PathBuf> {
    let venv = match std::env::var_os("CLUES_VENV") {
        Some(v) => PathBuf::from(v),
        None => Path::new(&std::env::var_os("HOME")?).join(".cache/clues-lab/venv"),
    };
    std::fs::read_dir(venv.join("lib"))
        .ok()?
        .flatten()
        .find_map(|d| {
            let p = d.path().join("site-packages");
            p.is_dir().then_some(p)
        })
}

/// Where ONNX Runtime is loaded from: `ORT_DYLIB_PATH`, else the set-up's Python environment.
pub fn library_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH") {
        return Some(PathBuf::from(p));
    }
    let p = site_packages()?.join("onnxruntime/capi/libonnxruntime.so.1.31.1");
    p.exists().then_some(p)
}

fn environment() -> Result<&'static ort::environment::Environment> {
    ENV.get_or_init(|| {
        let path = library_path().ok_or_else(|| {
            "ONNX Runtime was not found: set ORT_DYLIB_PATH to libonnxruntime.so from the PyPI \
             wheel onnxruntime==1.31.1 (bash .ci/setup installs it)"
                .to_string()
        })?;
        if !path.exists() {
            return Err(format!("ORT_DYLIB_PATH: no such file {}", path.display()));
        }
        ort::init_from(&path)
            .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", path.display()))?
            .with_name("clues-lab")
            .build()
            .map_err(|e| format!("cannot start ONNX Runtime: {e}"))
    })
    .as_ref()
    .map_err(|e| Error::Unfit(e.clone()))
}

/// Whether ONNX Runtime loads on this machine (`Unfit`, saying why, when it does not).
pub fn check_loads() -> Result<()> {
    environment().map(|_| ())
}

/// Which execution provider to ask for (`--device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Device {
    /// CUDA when it can be loaded, else CPU (said either way).
    Auto,
    Cpu,
    /// CUDA or an error saying why not.
    Cuda,
}

static CUDA_LIBS: OnceLock<Vec<String>> = OnceLock::new();

/// Preloads, once, the CUDA and cuDNN libraries that the GPU wheels install under
/// `site-packages/nvidia/*/lib` (e.g. `nvidia/cu13/lib`), where the loader does not look, so the
/// CUDA provider finds them by name; returns the ones not found or not loadable.
fn preload_cuda() -> &'static [String] {
    CUDA_LIBS.get_or_init(|| {
        let dirs: Vec<PathBuf> = library_path()
            .and_then(|l| Some(l.parent()?.parent()?.parent()?.join("nvidia")))
            .and_then(|n| std::fs::read_dir(n).ok())
            .map(|rd| {
                rd.flatten()
                    .map(|d| d.path().join("lib"))
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        let mut missing = Vec::new();
        for name in ort::ep::cuda::CUDA_DYLIBS
            .iter()
            .chain(ort::ep::cuda::CUDNN_DYLIBS)
        {
            match dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
                Some(p) => {
                    if let Err(e) = ort::util::preload_dylib(&p) {
                        missing.push(format!("{name} ({e})"));
                    }
                }
                None => missing.push((*name).to_string()),
            }
        }
        missing
    })
}

/// What the model gives per position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outputs {
    /// `start_logits` and `end_logits`, `[batch, sequence]`.
    Spans,
    /// An encoder's `last_hidden_state`, `[batch, sequence, hidden]`.
    Hidden,
}

/// A loaded model with the provider it runs on.
pub struct Model {
    session: Session,
    type_ids: bool,
    outputs: Outputs,
    /// "CUDAExecutionProvider" or "CPUExecutionProvider".
    pub provider: &'static str,
    /// Why CUDA is not used, when it is not.
    pub provider_note: String,
}

/// Per feature: the output rows of its own positions (padding dropped).
pub enum Batch {
    Spans(Vec<(Vec<f32>, Vec<f32>)>),
    /// States `len x hidden`, row-major, and `hidden`.
    Hidden(Vec<Vec<f32>>, usize),
}

fn session_builder(threads: usize) -> Result<ort::session::builder::SessionBuilder> {
    let env = environment()?;
    Session::builder(env)
        .and_then(|b| b.with_intra_threads(threads).map_err(|e| e.into()))
        .map_err(|e| Error::Model(format!("cannot configure ONNX Runtime: {e}")))
}

/// Registers the CUDA provider, its libraries preloaded; says why not when it cannot.
fn cuda(builder: &mut ort::session::builder::SessionBuilder) -> std::result::Result<(), String> {
    match ort::ep::CUDA::is_available() {
        Ok(true) => {}
        Ok(false) => {
            return Err(
                "this ONNX Runtime has no CUDA execution provider (the GPU environment of `bash .ci/setup --gpu` has one)"
                    .into(),
            )
        }
        Err(e) => return Err(format!("cannot ask ONNX Runtime for its providers ({e})")),
    }
    let missing = preload_cuda();
    ort::ep::CUDA::default().register(builder).map_err(|e| {
        let libs = if missing.is_empty() {
            String::new()
        } else {
            format!("; CUDA/cuDNN libraries not found: {}", missing.join(", "))
        };
        format!("the CUDA execution provider could not be loaded ({e}{libs})")
    })
}

/// Refuses `--device cuda` where ONNX Runtime cannot run on CUDA (the same words as a model
/// load would give), before a run is stored; `auto` and `cpu` always pass.
pub fn check_device(device: Device) -> Result<()> {
    match device {
        Device::Cuda => resolve(device).map(|_| ()),
        Device::Auto | Device::Cpu => Ok(()),
    }
}

/// Where ONNX Runtime would run a model for `device`, and why (what was asked for, what `auto`
/// found), without loading one; `Unfit` where it cannot run at all.
pub fn resolve(device: Device) -> Result<String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut builder = session_builder(threads)?;
    match (device, cuda(&mut builder)) {
        (Device::Cpu, _) => Ok("CPU (--device cpu)".into()),
        (Device::Cuda | Device::Auto, Ok(())) => Ok("CUDA".into()),
        (Device::Cuda, Err(why)) => Err(Error::Unfit(format!("CUDA was asked for but {why}"))),
        (Device::Auto, Err(why)) => Ok(format!("CPU (auto: {why})")),
    }
}

impl Model {
    /// Loads `path` and checks its inputs and outputs.
    pub fn open(path: &Path, outputs: Outputs, device: Device) -> Result<Model> {
        if !path.is_file() {
            return Err(Error::Model(format!("no model file at {}", path.display())));
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut builder = session_builder(threads)?;
        let (provider, provider_note) = match device {
            Device::Cpu => ("CPUExecutionProvider", "CPU was asked for".to_string()),
            Device::Auto | Device::Cuda => match cuda(&mut builder) {
                Ok(()) => ("CUDAExecutionProvider", String::new()),
                Err(why) if device == Device::Cuda => {
                    return Err(Error::Unfit(format!("CUDA was asked for but {why}")))
                }
                Err(why) => ("CPUExecutionProvider", why),
            },
        };
        let session = builder.commit_from_file(path).map_err(|e| {
            Error::Model(format!(
                "{} is not a model ONNX Runtime can load: {e}",
                path.display()
            ))
        })?;
        let names =
            |o: &[ort::value::Outlet]| o.iter().map(|x| x.name().to_string()).collect::<Vec<_>>();
        let ins = names(session.inputs());
        let outs = names(session.outputs());
        for need in ["input_ids", "attention_mask"] {
            if !ins.iter().any(|n| n == need) {
                return Err(Error::Model(format!(
                    "{}: the model has no input named {need:?} (its inputs: {})",
                    path.display(),
                    ins.join(", ")
                )));
            }
        }
        if let Some(other) = ins
            .iter()
            .find(|n| !["input_ids", "attention_mask", "token_type_ids"].contains(&n.as_str()))
        {
            return Err(Error::Model(format!(
                "{}: unexpected model input {other:?} (expected input_ids, attention_mask and optionally token_type_ids)",
                path.display()
            )));
        }
        let wanted: &[&str] = match outputs {
            Outputs::Spans => &["start_logits", "end_logits"],
            Outputs::Hidden => &["last_hidden_state"],
        };
        for need in wanted {
            if !outs.iter().any(|n| n == need) {
                return Err(Error::Model(format!(
                    "{}: the model has no output named {need:?} (its outputs: {})",
                    path.display(),
                    outs.join(", ")
                )));
            }
        }
        Ok(Model {
            type_ids: ins.iter().any(|n| n == "token_type_ids"),
            session,
            outputs,
            provider,
            provider_note,
        })
    }

    /// One line saying where the model runs, with the GPU's or the CPU's model.
    pub fn describe_provider(&self) -> String {
        if self.provider_note.is_empty() {
            format!(
                "running on CUDA (CUDAExecutionProvider) on {}",
                crate::hardware::gpu()
            )
        } else {
            format!(
                "running on CPU ({}): {}",
                crate::hardware::cpu(),
                self.provider_note
            )
        }
    }

    /// Runs one batch, padded to its longest feature.
    pub fn run(&mut self, batch: &[&Feature]) -> Result<Batch> {
        let b = batch.len();
        let len = batch.iter().map(|f| f.len()).max().unwrap_or(0);
        let mut ids = vec![0i64; b * len];
        let mut mask = vec![0i64; b * len];
        let mut types = vec![0i64; b * len];
        for (r, f) in batch.iter().enumerate() {
            ids[r * len..r * len + f.len()].copy_from_slice(&f.ids);
            types[r * len..r * len + f.len()].copy_from_slice(&f.type_ids);
            mask[r * len..r * len + f.len()].fill(1);
        }
        let shape = vec![b as i64, len as i64];
        let t = |v: Vec<i64>| {
            Tensor::from_array((shape.clone(), v))
                .map_err(|e| Error::Model(format!("cannot make an input tensor: {e}")))
        };
        let mut inputs = vec![("input_ids", t(ids)?), ("attention_mask", t(mask)?)];
        if self.type_ids {
            inputs.push(("token_type_ids", t(types)?));
        }
        let inputs: Vec<(
            std::borrow::Cow<'_, str>,
            ort::session::SessionInputValue<'_>,
        )> = inputs
            .into_iter()
            .map(|(n, v)| (n.into(), v.into()))
            .collect();
        let outputs = self.outputs;
        let on_gpu = self.provider == "CUDAExecutionProvider";
        let out = self.session.run(inputs).map_err(|e| {
            let e = e.to_string();
            if on_gpu && !e.contains("out of range") {
                Error::Model(format!(
                    "the GPU failed on a batch (CUDA execution provider: {e}); a missing library such as libcudnn means the GPU environment is incomplete; --device cpu runs on the CPU"
                ))
            } else {
                Error::Model(format!(
                    "the model failed on a batch ({e}); if it mentions an index out of range, the tokenizer does not match the model"
                ))
            }
        })?;
        let take = |name: &str| -> Result<(Vec<i64>, Vec<f32>)> {
            let (s, data) = out[name]
                .try_extract_tensor::<f32>()
                .map_err(|e| Error::Model(format!("output {name:?} is not a float tensor: {e}")))?;
            Ok((s.to_vec(), data.to_vec()))
        };
        match outputs {
            Outputs::Spans => {
                let (s1, start) = take("start_logits")?;
                let (s2, end) = take("end_logits")?;
                for s in [&s1, &s2] {
                    if s.as_slice() != [b as i64, len as i64] {
                        return Err(Error::Model(format!(
                            "start_logits/end_logits have shape {s:?}, expected [batch, sequence] = [{b}, {len}]"
                        )));
                    }
                }
                Ok(Batch::Spans(
                    batch
                        .iter()
                        .enumerate()
                        .map(|(r, f)| {
                            (
                                start[r * len..r * len + f.len()].to_vec(),
                                end[r * len..r * len + f.len()].to_vec(),
                            )
                        })
                        .collect(),
                ))
            }
            Outputs::Hidden => {
                let (s, h) = take("last_hidden_state")?;
                if s.len() != 3 || s[0] != b as i64 || s[1] != len as i64 {
                    return Err(Error::Model(format!(
                        "last_hidden_state has shape {s:?}, expected [{b}, {len}, hidden]"
                    )));
                }
                let hidden = s[2] as usize;
                Ok(Batch::Hidden(
                    batch
                        .iter()
                        .enumerate()
                        .map(|(r, f)| h[r * len * hidden..(r * len + f.len()) * hidden].to_vec())
                        .collect(),
                    hidden,
                ))
            }
        }
    }
}

/// The Python of the Hugging Face side: `--hf-python`, else `CLUES_HF_VENV` or
/// `~/.cache/clues-lab/hf-venv` (made by `.ci/setup --bench`).
pub fn hf_python(given: Option<PathBuf>) -> Option<PathBuf> {
    given
        .or_else(|| {
            let venv = std::env::var_os("CLUES_HF_VENV")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME")
                        .map(|h| PathBuf::from(h).join(".cache/clues-lab/hf-venv"))
                })?;
            Some(venv.join("bin/python"))
        })
        .filter(|p| p.is_file())
}
